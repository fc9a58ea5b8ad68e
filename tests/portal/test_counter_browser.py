"""The clerk's counter and import review in headless Chromium (issue 33): a clerk takes a
check and cash at the counter from the account page and gets a receipt, closes the drawer
(its total is the sum of the day's receipts, as the API has them) and downloads its CSV; then
reviews a lockbox file with a rejected line, reads the line in the page, and reconciles the
file's total against the bank deposit figure entered. The stack is the portal tests' one
(``portal_rt``); screenshots go to tests/artifacts/."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from test_browser import ARGS, CHROMIUM, sync_api
from test_workbench_browser import us_date, usd

from conftest import call
from sewerbill.local import LocalRuntime
from sewerbill.local.portal_site import mint

pytestmark = pytest.mark.integration

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
TENANT = "pleasant-prairie-sewer"
STAFF = "Sam Staff, staff of Pleasant Prairie sewer"
LOCKBOX_KEY = "payments/counter-lockbox.csv"
LOCKBOX = (
    "tenant,account_id,reference,paid_on,amount\n"
    "pleasant-prairie-sewer,PP-0001,LBX-1,2025-01-31,30.00\n"
    "pleasant-prairie-sewer,PP-0002,LBX-2,2025-01-31,20.00\n"
    "pleasant-prairie-sewer,PP-0002,LBX-3,2025-03-01,5.00\n"  # rejected: after the day it is taken in
)


def money(text: str) -> Decimal:
    return Decimal(text.replace("−", "-").replace("$", "").replace(",", ""))


@pytest.fixture(scope="module")
def staff_api(portal_rt: LocalRuntime) -> Any:
    token = mint(portal_rt, "sam")

    def get(path: str) -> Any:
        status, _, body = call(portal_rt, "GET", path, token)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    return get


def signed_in(pw: Any, rt: LocalRuntime) -> tuple[Any, Any, list[str]]:
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(rt.gateway_url + "/")
    page.get_by_label(STAFF).check()
    page.get_by_role("button", name="Sign in").click()
    page.get_by_label("Account, name, address, parcel or meter").wait_for(timeout=30000)
    return browser, page, errors


def cells(page: Any, selector: str) -> list[list[str]]:
    rows = page.locator(f"{selector} tbody tr")
    return [[c.inner_text() for c in rows.nth(i).locator("td").all()] for i in range(rows.count())]


def test_a_clerk_takes_a_check_and_cash_at_the_counter_and_closes_the_drawer(
    portal_rt: LocalRuntime, staff_api: Any
) -> None:
    account = staff_api(f"/staff/{TENANT}/search?q=Ada")["hits"][0]["account_id"]
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser, page, errors = signed_in(pw, portal_rt)
        try:
            page.get_by_label("Account, name, address, parcel or meter").fill(account)
            page.get_by_role("button", name="Search").click()
            page.locator("#search-hits li.hit a").first.click()
            page.locator("#account-view").wait_for(timeout=30000)

            taken = []
            for amount, tender, number in (("23.45", "check", "5150"), ("10.00", "cash", None)):
                panel = page.locator("#counter")
                panel.get_by_label("Amount received (USD)").fill(amount)
                panel.get_by_label("Tender").select_option(tender)
                if number:
                    panel.get_by_label("Check number").fill(number)
                else:
                    assert not panel.get_by_label("Check number").is_visible()
                panel.get_by_role("button", name="Post payment").click()
                title = page.locator("#receipt-title")
                title.wait_for(timeout=30000)
                page.wait_for_function(
                    "n => document.querySelectorAll('#receipt').length === 1 && "
                    "(document.querySelector('#counter-amount') || {value: 'x'}).value === '' && "
                    "document.querySelector('#receipt-title').textContent !== n",
                    arg=taken[-1]["title"] if taken else "",
                    timeout=30000,
                )
                ref = title.inner_text().removeprefix("Receipt ")
                got = staff_api(f"/staff/{TENANT}/receipts/{quote(ref)}")
                assert Decimal(got["amount"]) == Decimal(amount) and got["tender"] == tender
                assert got["check_number"] == number
                # on the receipt: the US date, the amount with its cents, right-aligned
                [row] = cells(page, "#receipt")
                assert row[0] == us_date(got["day"]) and row[3] == usd(Decimal(amount))
                align = (
                    page.locator("#receipt tbody td").nth(3).evaluate("td => getComputedStyle(td).textAlign")
                )
                assert align == "right"
                # e-mailable: the account has an address, so the receipt offers it
                assert got["email"], "the demo's account has an e-mail address"
                href = page.locator("#receipt-email").get_attribute("href") or ""
                assert href.startswith(f"mailto:{quote(got['email'])}?subject=") and quote(ref) in href
                taken.append({"title": title.inner_text(), **got})
            page.screenshot(path=str(ARTIFACTS / "counter-receipt.png"), full_page=True)
            # the account page, reopened, lists both payments
            paid = [r[1] for r in cells(page, "#payments")]
            assert all(t["payment_reference"] in paid for t in taken)

            # close the drawer: the day's receipts (every clerk's), totals by tender
            day = taken[0]["day"]
            assert page.locator("#drawer-day").input_value() == day
            page.get_by_role("button", name="Close the drawer").click()
            page.locator("#drawer-total").wait_for(timeout=30000)
            api_drawer = staff_api(f"/staff/{TENANT}/drawer/{day}")
            shown = cells(page, "#drawer-receipts")
            assert {r[1] for r in shown} >= {t["receipt"] for t in taken}
            assert len(shown) == api_drawer["count"]
            total = money(page.locator("#drawer-total").inner_text())
            assert total == sum(money(r[5]) for r in shown) == Decimal(api_drawer["total"])
            assert total >= Decimal("33.45")
            by_tender = cells(page, "#drawer-by-tender")
            assert by_tender[-1] == ["All tenders", str(api_drawer["count"]), usd(total)]
            page.screenshot(path=str(ARTIFACTS / "counter-drawer.png"), full_page=True)

            with page.expect_download() as download:
                page.get_by_role("button", name="Export CSV for the deposit").click()
            assert download.value.suggested_filename == f"drawer-{TENANT}-{day}.csv"
            text = Path(download.value.path()).read_text()
            (ARTIFACTS / "counter-drawer.csv").write_text(text)
            rows = list(csv.DictReader(text.splitlines()))
            receipts = [r for r in rows if r["row"] == "receipt"]
            assert {r["receipt"] for r in receipts} == {r[1] for r in shown}
            [grand] = [
                r for r in rows if r["row"] == "total" and r["clerk"] == "all" and r["tender"] == "all"
            ]
            assert Decimal(grand["amount"]) == sum(Decimal(r["amount"]) for r in receipts) == total
            assert not any(cell.startswith(("=", "+", "@")) for r in rows for cell in r.values() if cell)
            assert errors == []
        finally:
            browser.close()


def test_a_clerk_reviews_a_lockbox_file_with_a_rejected_line_and_reconciles_the_deposit(
    portal_rt: LocalRuntime, staff_api: Any
) -> None:
    portal_rt.upload("UploadsBucket", LOCKBOX_KEY, LOCKBOX)
    [logged] = [f for f in staff_api(f"/staff/{TENANT}/imports")["files"] if f["key"] == LOCKBOX_KEY]
    review = staff_api(f"/staff/{TENANT}/imports/{logged['file_id']}")
    assert review["counts"]["rejected"] == 1 and review["totals"]["file"] == "55.00"
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser, page, errors = signed_in(pw, portal_rt)
        try:
            page.locator("#imports").get_by_label("Utility").select_option(TENANT)
            page.get_by_role("button", name="Show files").click()
            page.locator("#imports-table").wait_for(timeout=30000)
            row = page.locator("#imports-table tbody tr", has_text=LOCKBOX_KEY)
            assert row.locator("td").nth(6).inner_text() == "1"  # rejected
            assert row.locator("td").nth(8).inner_text() == usd(Decimal("55.00"))
            row.get_by_role("button", name=f"Review {LOCKBOX_KEY}").click()
            page.locator("#import-review").wait_for(timeout=30000)
            # the rejection report, line by line, as the API has it
            assert cells(page, "#import-lines") == [
                [str(line["line"]), line["column"], line["reason"], line["outcome"]]
                for line in review["lines"]
            ]
            assert cells(page, "#import-lines")[0][:2] == ["4", "paid_on"]
            totals = cells(page, "#import-totals")[0]
            assert totals[0] == usd(Decimal("50.00")) and totals[3] == usd(Decimal("5.00"))
            assert totals[4] == usd(Decimal("55.00"))

            deposit = page.get_by_label("Bank deposit (USD)")
            deposit.fill("50.00")
            page.get_by_role("button", name="Reconcile").click()
            result = page.locator("#deposit-result")
            result.filter(has_text="Not reconciled").wait_for(timeout=30000)
            assert usd(Decimal("-5.00")) in result.inner_text()
            page.screenshot(path=str(ARTIFACTS / "imports-not-reconciled.png"), full_page=True)
            deposit.fill("55.00")
            page.get_by_role("button", name="Reconcile").click()
            result.filter(has_text="Reconciled:").wait_for(timeout=30000)
            stored = staff_api(f"/staff/{TENANT}/imports/{logged['file_id']}")["deposit"]
            assert stored["amount"] == "55.00" and stored["reconciled"] is True
            page.screenshot(path=str(ARTIFACTS / "imports-reconciled.png"), full_page=True)
            assert errors == []
        finally:
            browser.close()
