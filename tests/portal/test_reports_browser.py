"""The workbench's reports in headless Chromium (issue 33): a clerk shows the aging report and
the unbilled accounts on screen, downloads the aging report's CSV and prints a report alone.
What the page shows is checked against what the staff routes answer for the same report
(JSON for the table, the route's own CSV for the download). The stack is the portal tests'
one (``portal_rt``); the screenshot goes to tests/artifacts/reports-aging.png."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from test_browser import ARGS, CHROMIUM, sync_api

from conftest import call
from sewerbill.local import LocalRuntime
from sewerbill.local.portal_site import DEMO_IDENTITIES, mint

pytestmark = pytest.mark.integration

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
TENANT = "pleasant-prairie-sewer"


def usd(amount: Decimal) -> str:
    sign = "−" if amount < 0 else ""
    return f"{sign}${abs(amount):,.2f}"


def _route(rt: LocalRuntime, path: str) -> tuple[dict[str, str], bytes]:
    status, headers, body = call(rt, "GET", path, mint(rt, "sam"))
    assert status == 200, (path, status, body[:300])
    return headers, body


def _table(page: Any) -> tuple[list[str], list[list[str]]]:
    table = page.locator("#report table")
    headers = table.locator("thead th").all_inner_texts()
    rows = [r.locator("td").all_inner_texts() for r in table.locator("tbody tr").all()]
    return headers, rows


def _show(page: Any, kind: str) -> None:
    page.locator("#report-tenant").select_option(TENANT)
    page.locator("#report-kind").select_option(kind)
    page.locator("#report-form").get_by_role("button", name="Show").click()
    page.locator("#report table").wait_for(timeout=30000)


def test_a_clerk_shows_downloads_and_prints_the_reports_as_the_routes_have_them(
    portal_rt: LocalRuntime, tmp_path: Path
) -> None:
    aging = json.loads(_route(portal_rt, f"/staff/{TENANT}/reports/aging")[1])["rows"]
    unbilled = json.loads(_route(portal_rt, f"/staff/{TENANT}/reports/unbilled")[1])["rows"]
    aging_csv = _route(portal_rt, f"/staff/{TENANT}/reports/aging?format=csv")[1]
    assert aging, "the portal stack has January's bills: an aging row per account with a balance"

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(portal_rt.gateway_url + "/")
            page.get_by_label(DEMO_IDENTITIES["sam"]["label"]).check()
            page.get_by_role("button", name="Sign in").click()
            page.locator("#reports").wait_for(timeout=30000)

            _show(page, "aging")
            headers, rows = _table(page)
            assert headers == [
                "Account",
                "Current",
                "30 days past due",
                "60 days past due",
                "90 days or more past due",
                "Balance",
            ]
            assert len(rows) == len(aging)
            by_account = {r[headers.index("Account")]: r for r in rows}
            for row in aging:  # every account's balance, in dollars with cents, right-aligned
                shown = by_account[row["account_id"]]
                assert shown[headers.index("Balance")] == usd(Decimal(row["balance"])), row
            balance_cell = page.locator("#report tbody tr").first.locator("td").nth(headers.index("Balance"))
            assert balance_cell.evaluate("td => getComputedStyle(td).textAlign") == "right"
            page.screenshot(path=str(ARTIFACTS / "reports-aging.png"), full_page=True)

            with page.expect_download() as download:
                page.get_by_role("button", name="Download CSV").click()
            saved = tmp_path / "aging.csv"
            download.value.save_as(saved)
            assert saved.read_bytes() == aging_csv
            assert download.value.suggested_filename == f"{TENANT}-aging.csv"

            # printed, the report stands alone: the search and the cycle are not on the page
            page.evaluate("document.body.classList.add('printing-report')")
            page.emulate_media(media="print")
            assert page.locator("#report table").is_visible()
            assert not page.locator("#workbench").is_visible()
            assert not page.locator("#staff").is_visible()
            assert not page.locator("#report-form").is_visible()
            page.emulate_media(media="screen")
            page.evaluate("document.body.classList.remove('printing-report')")

            _show(page, "unbilled")
            headers, rows = _table(page)
            if unbilled:
                assert len(rows) == len(unbilled)
                assert sorted(r[headers.index("Account")] for r in rows) == sorted(
                    r["account_id"] for r in unbilled
                )
            else:
                assert rows == [["None."]]

            # the village's books: the trial balance by fund, debits equal to credits on screen
            trial = json.loads(_route(portal_rt, f"/staff/{TENANT}/reports/trial-balance")[1])["rows"]
            assert trial, "January's bills are on the books"
            _show(page, "trial-balance")
            headers, rows = _table(page)
            assert headers[:4] == ["As of", "Fund", "GL account", "GL account name"]
            assert len(rows) == len(trial)

            def dollars(text: str) -> Decimal:
                return Decimal(text.replace("$", "").replace(",", "").replace("−", "-"))

            names = {"om": "Operation and maintenance", "replacement": "Replacement"}
            for fund in {r["fund"] for r in trial}:
                mine = [r for r in rows if r[headers.index("Fund")] == names[fund]]
                assert mine, fund
                assert sum(dollars(r[headers.index("Debit")]) for r in mine) == sum(
                    dollars(r[headers.index("Credit")]) for r in mine
                ), fund
            page.screenshot(path=str(ARTIFACTS / "reports-trial-balance.png"), full_page=True)
            assert errors == []
        finally:
            browser.close()
