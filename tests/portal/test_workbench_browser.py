"""The clerk's workbench in headless Chromium (issue 33): staff sign in with the demo chooser,
find an account by a fragment of its name, open it, and read on screen the balance, a
bill's lines with their rule ids, the ledger's running balance and a notice's text, each
checked against what the API answers for the same account (nothing expected is written
here). The stack is the portal tests' one (``portal_rt``, once per session); screenshots go
to /tmp/bench33-*.png and tests/artifacts/."""

from __future__ import annotations

import json
import re
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from test_browser import ARGS, CHROMIUM, sync_api

from conftest import call
from sewerbill.local import LocalRuntime
from sewerbill.local.portal_site import mint

pytestmark = pytest.mark.integration

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
TENANT = "pleasant-prairie-sewer"
FRAGMENT = "Ada"  # a part of the name of one of the demo's accounts


def usd(amount: Decimal) -> str:
    sign = "−" if amount < 0 else ""
    return f"{sign}${abs(amount):,.2f}"


def balance_text(amount: Decimal) -> str:
    return f"credit {usd(-amount)}" if amount < 0 else usd(amount)


def us_date(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d:%b} {d.day}, {d.year}"


def relative_luminance(rgb: tuple[int, int, int]) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def rgb(css: str) -> tuple[int, int, int]:
    r, g, b = (int(x) for x in re.findall(r"\d+", css)[:3])
    return r, g, b


@pytest.fixture(scope="module")
def staff_api(portal_rt: LocalRuntime) -> Any:
    token = mint(portal_rt, "sam")

    def get(path: str) -> Any:
        status, _, body = call(portal_rt, "GET", path, token)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    return get


@pytest.mark.parametrize(
    ("viewport", "name"),
    [({"width": 1280, "height": 900}, "desktop"), ({"width": 390, "height": 844}, "phone")],
)
def test_a_clerk_finds_an_account_by_a_name_fragment_and_reads_it_as_the_api_has_it(
    portal_rt: LocalRuntime, staff_api: Any, viewport: dict[str, int], name: str
) -> None:
    found = staff_api(f"/staff/{TENANT}/search?q={quote(FRAGMENT)}")
    assert found["hits"], "the demo has an account whose name starts with the fragment"
    account = found["hits"][0]["account_id"]
    base = f"/staff/{TENANT}/accounts/{quote(account)}"
    summary = staff_api(base + "/summary")
    bills = staff_api(base + "/bills")["bills"]
    ledger = staff_api(base + "/ledger")
    notices = staff_api(base + "/notices")["notices"]
    assert bills and ledger["entries"] and notices, "the demo's account has a bill, entries and a notice"

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = browser.new_context(viewport=viewport, accept_downloads=True)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(portal_rt.gateway_url + "/")
            page.get_by_label("Sam Staff, staff of Pleasant Prairie sewer").check()
            page.get_by_role("button", name="Sign in").click()
            box = page.get_by_label("Account, name, address, parcel or meter")
            box.wait_for(timeout=30000)
            # the utility by its name (the tariff's), not its slug
            utility = page.get_by_label("Utility", exact=True).first
            chosen = utility.evaluate("s => s.selectedOptions[0].textContent")
            assert chosen == summary["utility"] != TENANT

            # keyboard: Tab from the utility reaches the search box, with a visible ring of
            # at least 3:1 against the page behind it
            utility.focus()
            page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement.id") == "search-q"
            ring = page.evaluate(
                "(() => { const s = getComputedStyle(document.activeElement);"
                " return [s.outlineStyle, s.outlineWidth, s.outlineColor,"
                " getComputedStyle(document.body).backgroundColor]; })()"
            )
            assert ring[0] != "none" and float(ring[1].rstrip("px")) >= 2
            assert contrast(rgb(ring[2]), rgb(ring[3])) >= 3, ring

            page.keyboard.type(FRAGMENT)
            page.keyboard.press("Enter")
            hits = page.locator("#search-hits li.hit")
            hits.first.wait_for(timeout=30000)
            assert hits.count() == len(found["hits"])
            assert hits.first.locator("a").inner_text().startswith(account)
            page.screenshot(path=f"/tmp/bench33-search-{name}.png", full_page=True)
            # opened from the keyboard, as a clerk on the phone with a customer would
            hits.first.locator("a").focus()
            page.keyboard.press("Enter")

            view = page.locator("#account-view")
            view.wait_for(timeout=30000)
            assert view.get_by_role("heading", level=2).inner_text().startswith(f"Account {account}")
            assert view.locator(".utility").inner_text() == summary["utility"]
            # the balance, as the summary and the ledger give it
            assert Decimal(summary["balance"]) == Decimal(ledger["balance"])
            shown = view.locator(".account-balance").inner_text()
            assert shown == balance_text(Decimal(ledger["balance"]))
            if summary["due"]["next_due_date"]:
                due = f"Due by {us_date(summary['due']['next_due_date'])}: "
                assert view.locator(".next-due").inner_text() == due + usd(
                    Decimal(summary["due"]["next_due_amount"])
                )
            aging = view.locator("table").first.locator("tbody td")
            assert [c.inner_text() for c in aging.all()] == [
                usd(Decimal(summary["aging"][k])) for k in ("current", "30", "60", "90+")
            ]

            # the newest bill, opened: each line's rule id and amount, and its PDF link
            newest = bills[-1]
            bill = view.locator(f"details.bill[data-bill='{newest['bill_id']}']")
            bill.locator("summary").click()
            assert us_date(newest["due_date"]) in bill.locator("summary").inner_text()
            rows = bill.locator("tbody tr")
            assert rows.count() == len(newest["lines"])
            for i, line in enumerate(newest["lines"]):
                cells = rows.nth(i).locator("td")
                assert cells.nth(0).inner_text() == line["rule_id"]
                assert cells.nth(4).inner_text() == usd(Decimal(line["amount"]))
                for key in line["details"]:
                    assert key.replace("_", " ") in cells.nth(3).inner_text()
            assert bill.locator("a.pdf").count() == 1

            # the ledger: every entry with the balance after it, ending at the balance
            lines = view.locator("#ledger tbody tr")
            assert lines.count() == len(ledger["entries"])
            running = Decimal(0)
            for i, entry in enumerate(ledger["entries"]):
                running += Decimal(entry["amount"])
                cells = lines.nth(i).locator("td")
                assert cells.nth(5).inner_text() == usd(Decimal(entry["amount"]))
                assert cells.nth(6).inner_text() == balance_text(running)
            assert running == Decimal(ledger["balance"])
            payments = [e for e in ledger["entries"] if e["kind"] == "payment"]
            assert view.locator("#payments tbody tr td.num").count() == len(payments)

            # a notice, opened: its text as sent
            latest = notices[-1]
            sent = staff_api(f"/staff/{TENANT}/notices/{quote(latest['notice_id'])}")
            notice = view.locator(f"details.notice[data-notice='{latest['notice_id']}']")
            notice.locator("summary").click()
            text = notice.locator("pre.notice-text")
            text.wait_for(timeout=30000)
            assert text.text_content() == sent["text"]
            assert errors == [], errors  # no script error on the way
            page.screenshot(path=f"/tmp/bench33-account-{name}.png", full_page=True)
            page.screenshot(path=str(ARTIFACTS / f"portal-workbench-account-{name}.png"), full_page=True)
            context.close()
        finally:
            browser.close()
