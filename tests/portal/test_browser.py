"""The portal in headless Chromium (Debian's chromium, driven by Playwright's Python package):
sign in with the demo chooser, open a bill, get its PDF, pay, see the balance change.
Screenshots at a desktop and a phone viewport go to tests/artifacts/ (gitignored)."""

from __future__ import annotations

import os
import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

sync_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    pytest.skip(f"no chromium at {CHROMIUM} (make install-chromium)", allow_module_level=True)


def _money(text: str) -> Decimal:
    return Decimal(text.replace("−", "-").replace("$", "").replace(",", ""))


@pytest.mark.parametrize(
    ("viewport", "name"),
    [({"width": 1280, "height": 900}, "desktop"), ({"width": 375, "height": 812}, "phone")],
)
def test_a_customer_signs_in_opens_a_bill_gets_the_pdf_and_pays(
    portal_rt: LocalRuntime, viewport: dict[str, int], name: str
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = browser.new_context(viewport=viewport, accept_downloads=True)
            page = context.new_page()
            page.goto(portal_rt.gateway_url + "/")
            page.get_by_label("Ben Demo, customer (sewer PP-0002)").check()
            page.get_by_role("button", name="Sign in").click()
            card = page.locator("article.account").first
            card.wait_for(timeout=30000)
            before = _money(card.locator(".balance-value").inner_text())
            assert before > 0, "the February bill is unpaid"
            bill = card.locator("details.bill").first
            bill.locator("summary").click()
            assert bill.locator("tbody tr").count() >= 1
            # each line's rule is explained in words
            assert "gallons" in bill.inner_text() or "charge" in bill.inner_text().lower()
            page.screenshot(path=str(ARTIFACTS / f"portal-customer-bill-{name}.png"), full_page=True)
            pdf_link = bill.locator("a.pdf")
            if pdf_link.count():
                with page.expect_download() as got:
                    pdf_link.click()
                path = got.value.path()
                assert Path(path).read_bytes().startswith(b"%PDF")
            else:
                # no bill PDF route on this branch: the printable bill, rendered by Chromium
                page.pdf(path=str(ARTIFACTS / f"portal-bill-{name}.pdf")) if name == "desktop" else None
            pay = card.locator("form.pay-form")
            pay.get_by_label("Amount (USD)").fill("10.00")
            pay.get_by_role("button", name="Pay").click()
            page.get_by_role("status").filter(has_text="Payment of $10.00 received").wait_for(timeout=30000)
            after = _money(card.locator(".balance-value").inner_text())
            assert after == before - Decimal("10.00")
            page.screenshot(path=str(ARTIFACTS / f"portal-customer-paid-{name}.png"), full_page=True)
            context.close()
        finally:
            browser.close()


def test_staff_and_owner_views_render(portal_rt: LocalRuntime) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for who, label, expect in (
                ("olive", "Olive Owner, owner of rental parcel PP-P-0001", "Parcel PP-P-0001"),
                ("sam", "Sam Staff, staff of Pleasant Prairie sewer", "Held accounts"),
            ):
                context = browser.new_context(viewport={"width": 375, "height": 812})
                page = context.new_page()
                page.goto(portal_rt.gateway_url + "/")
                page.get_by_label(label).check()
                page.get_by_role("button", name="Sign in").click()
                page.get_by_role("heading", name=re.compile(expect)).first.wait_for(timeout=30000)
                page.screenshot(path=str(ARTIFACTS / f"portal-{who}-phone.png"), full_page=True)
                context.close()
        finally:
            browser.close()
