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
    pytest.skip(
        f"no chromium at {CHROMIUM} (make chromium installs it with apt-get)", allow_module_level=True
    )


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
                ("sam", "Sam Staff, staff of Pleasant Prairie sewer", r"Pending decisions \(\d+\)"),
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


def test_hosted_ui_sign_in_uses_the_code_flow_with_a_pkce_s256_challenge(portal_rt: LocalRuntime) -> None:
    """In AWS the pages sign in through Cognito's hosted UI (authorization code + PKCE). Here
    the hosted UI is played by Playwright routes: the page must send only the verifier's
    SHA-256 challenge to /oauth2/authorize, check the state it gets back, and redeem the
    code with the verifier at /oauth2/token; the ID token it gets then signs it in."""
    import base64
    import hashlib
    from urllib.parse import parse_qs, urlsplit

    from sewerbill.local.portal_site import mint

    hosted = "https://sewerbill-portal-test.auth.us-east-1.amazoncognito.com"
    portal = portal_rt.gateway_url + "/portal/"
    seen: dict[str, dict[str, list[str]]] = {}
    id_token = mint(portal_rt, "ben")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            config = {"api_url": "", "sign_in_url": hosted, "client_id": "client-1", "redirect_uri": portal}
            context.route("**/portal/config.json", lambda route: route.fulfill(json=config))

            def authorize(route: sync_api.Route) -> None:
                query = parse_qs(urlsplit(route.request.url).query)
                seen["authorize"] = query
                back = f"{portal}?code=the-code&state={query['state'][0]}"
                route.fulfill(status=302, headers={"location": back})

            def token(route: sync_api.Route) -> None:
                seen["token"] = parse_qs(route.request.post_data or "")
                route.fulfill(json={"id_token": id_token}, headers={"access-control-allow-origin": "*"})

            context.route(hosted + "/oauth2/authorize*", authorize)
            context.route(hosted + "/oauth2/token", token)
            page = context.new_page()
            page.goto(portal)
            page.get_by_role("link", name="Sign in with your utility account").click()
            page.locator("article.account").first.wait_for(timeout=30000)
            assert "code=" not in page.url  # the code is not left in the address bar
            context.close()
        finally:
            browser.close()
    asked, redeemed = seen["authorize"], seen["token"]
    assert asked["response_type"] == ["code"] and asked["code_challenge_method"] == ["S256"]
    assert (asked["client_id"], asked["redirect_uri"]) == (["client-1"], [portal])
    verifier = redeemed["code_verifier"][0]
    assert 43 <= len(verifier) <= 128 and "code_verifier" not in asked
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    assert asked["code_challenge"] == [challenge]
    assert redeemed["grant_type"] == ["authorization_code"] and redeemed["code"] == ["the-code"]
    assert redeemed["redirect_uri"] == [portal]
