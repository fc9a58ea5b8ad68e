"""`sewerbill local demo`, as a user runs it, on a small year (issue 32): the summary matches
the generator's expectations, the output folder's index.html opens in Chromium with every
link resolving to a file, and `sewerbill local up --state` on its state shows each demo
identity's bills.

The demo here is the generator's smallest (MIN_SIZE accounts, one quarter: every tenant's
cycle runs, Grafton's and Sullivan's quarterly ones once) so the module runs in CI in a few
minutes; `make demo` runs the default 300 accounts for 12 months through the same code.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from local_child import local_up
from sewerbill.demo.generator import MIN_SIZE
from sewerbill.local.portal_site import DEMO_IDENTITIES

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SEWERBILL = [sys.executable, "-m", "sewerbill"]
MONTHS = 3
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("demo") / "demo-out"
    done = subprocess.run(  # noqa: S603 - our own interpreter and package
        [*SEWERBILL, "local", "demo", "--size", str(MIN_SIZE), "--months", str(MONTHS), "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    return out, done.stdout


def test_the_demo_says_a_line_a_month_and_ends_with_the_folder_and_the_state(
    demo_run: tuple[Path, str],
) -> None:
    out, stdout = demo_run
    months = re.findall(r"^  (\d{4}-\d{2}) .* dead letters (\d+)", stdout, re.MULTILINE)
    assert [m for m, _ in months] == ["2025-01", "2025-02", "2025-03", "2025-04"]
    assert {d for _, d in months} == {"0"}
    last = stdout.rstrip().splitlines()[-2:]
    assert (
        last[0]
        == f"open {out / 'index.html'} in a browser: every bill, letter, print batch and report of the year"
    )
    assert last[1] == f"the portal on this year: sewerbill local up --state {out / 'state'}"
    assert '"level"' not in stdout  # the services' JSON logs went to the file
    assert (out / "services.log").stat().st_size > 0


def test_the_summary_matches_the_generators_expectations(demo_run: tuple[Path, str]) -> None:
    out, stdout = demo_run
    summary = json.loads((out / "summary.json").read_text())
    expected = json.loads((out / "expected.json").read_text())
    failed = [c for c in summary["checks"] if not c["ok"]]
    assert failed == [] and summary["ok"], failed
    assert "all figures match" in stdout
    for tenant, per_period in expected["bills_per_period"].items():
        got = summary["tenants"][tenant]
        assert got["bills_per_period"] == per_period, tenant
        assert got["bills"] == expected["bills_total"][tenant]
        assert sum(a for a in map(float, got["revenue_by_fund"].values())) > 0, tenant
    assert summary["dead_letters"] == []
    assert summary["ran"]["uploads"]["reads"] == expected["files"]["reads"]
    assert summary["ran"]["refused_calls"] == []


def test_index_html_opens_in_chromium_and_every_link_is_a_file(demo_run: tuple[Path, str]) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no chromium at {CHROMIUM}")
    out, _ = demo_run
    index = out / "index.html"
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page()
            page.goto(index.as_uri())
            assert "sewerbill demo" in page.title()
            hrefs: list[str] = page.eval_on_selector_all("a", "els => els.map(e => e.href)")
        finally:
            browser.close()
    summary = json.loads((out / "summary.json").read_text())
    bills = sum(t["bills"] for t in summary["tenants"].values())
    pdfs = [h for h in hrefs if "/mail/bills/" in h]
    assert len(pdfs) == bills  # every bill issued has its PDF linked
    assert any("/mail/batches/" in h and h.endswith("manifest.csv") for h in hrefs)
    assert any(h.endswith("summary.txt") for h in hrefs)
    missing = []
    for h in hrefs:
        url = urlparse(h)
        path = Path(unquote(url.path))
        if url.scheme != "file" or not path.is_file() or not path.resolve().is_relative_to(out.resolve()):
            missing.append(h)
    assert missing == [] and len(hrefs) > bills


def _token(gateway: str, identity: str) -> str:
    req = urllib.request.Request(
        gateway + "/_local/portal/token", data=json.dumps({"identity": identity}).encode(), method="POST"
    )
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - loopback gateway
        return str(json.loads(resp.read())["token"])


def _get(gateway: str, path: str, token: str) -> Any:
    req = urllib.request.Request(gateway + path, headers={"authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=60) as resp:  # noqa: S310 - loopback gateway
        return json.loads(resp.read())


@pytest.fixture(scope="module")
def reopened(demo_run: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`sewerbill local up --state <the demo's state>` in a child process; its gateway URL."""
    out, _ = demo_run
    state = tmp_path_factory.mktemp("up") / "local.json"
    with local_up(["--state", str(out / "state")], state=state, ready_within=300) as child:
        assert child.gateway and "restored from" in child.text, child.text
        yield child.gateway


def test_local_up_on_the_demos_state_shows_each_identitys_bills(
    demo_run: tuple[Path, str], reopened: str
) -> None:
    out, _ = demo_run
    expected = json.loads((out / "expected.json").read_text())
    ada = expected["identities"]["ada"]
    assert DEMO_IDENTITIES["ada"]["claims"]["accounts"] == sorted(ada["accounts"].values())
    assert DEMO_IDENTITIES["ada"]["claims"]["parcels"] == ada["parcels"]
    assert DEMO_IDENTITIES["olive"]["claims"]["parcels"] == expected["identities"]["olive"]["parcels"]
    for who in ("ada", "ben"):
        claims = DEMO_IDENTITIES[who]["claims"]
        token = _token(reopened, who)
        for tenant, account in zip(claims["tenants"], claims["accounts"], strict=True):
            bills = _get(reopened, f"/staff/{tenant}/accounts/{account}/bills", token)["bills"]
            assert len(bills) == sum(1 for s, e in expected["tenants"][tenant]["periods"]), (
                who,
                tenant,
                account,
            )
    olive = _get(
        reopened, "/owners/pleasant-prairie-stormwater/parcels/PP-P-0001/bills", _token(reopened, "olive")
    )
    assert olive["bills"], olive


def test_the_portal_on_the_demos_state_shows_ada_her_bills_and_reconsideration_where_it_applies(
    demo_run: tuple[Path, str], reopened: str
) -> None:
    """In Chromium: Ada Demo signs in on the reopened demo year and sees a card per account
    with every bill of the year; the stormwater reconsideration form (PP-CWU-RECONSIDER) is
    on her stormwater account's card only, not on her sewer account's."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no chromium at {CHROMIUM}")
    out, _ = demo_run
    expected = json.loads((out / "expected.json").read_text())
    claims = DEMO_IDENTITIES["ada"]["claims"]
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(reopened + "/portal/")
            page.get_by_label(DEMO_IDENTITIES["ada"]["label"]).check()
            page.get_by_role("button", name="Sign in").click()
            cards = {}
            for tenant, account in zip(claims["tenants"], claims["accounts"], strict=True):
                card = page.locator(f'[data-account="{account}"][data-tenant="{tenant}"]')
                card.wait_for(timeout=60000)
                cards[tenant] = card
                periods = expected["tenants"][tenant]["periods"]
                assert card.locator(".bills details.bill").count() == len(periods), (tenant, account)
            assert cards["pleasant-prairie-stormwater"].locator(".reconsider").is_visible()
            assert not cards["pleasant-prairie-sewer"].locator(".reconsider").is_visible()
            assert errors == []
        finally:
            browser.close()
