"""Accessibility of every portal page (issue 33 "fit for a day's work", issue 34): axe-core,
injected into the page headless Chromium shows, finds no serious or critical violation of
WCAG 2.x A and AA (contrast, labels, names of buttons and links, landmarks) on the sign-in
page, a customer's, an owner's and a clerk's view with the workbench's reports open.
axe-core comes from npm, pinned by requirements/axe/package-lock.json (`make test` installs
it into .local/axe); without it the test is skipped. Each page's full result goes to
tests/artifacts/axe-<page>.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_browser import ARGS, CHROMIUM, sync_api

from sewerbill.local import LocalRuntime
from sewerbill.local.portal_site import DEMO_IDENTITIES

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
AXE = REPO / ".local" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
ARTIFACTS = REPO / "tests" / "artifacts"
if not AXE.exists():
    pytest.skip(f"no axe-core at {AXE} (make test installs it with npm ci)", allow_module_level=True)

SERIOUS = ("serious", "critical")


def _audit(page: Any, name: str) -> list[dict[str, Any]]:
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "() => axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"axe-{name}.json").write_text(json.dumps(result["violations"], indent=2))
    assert result["passes"], "axe ran no check: the page was empty"
    return [
        {
            "id": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "nodes": [n["target"] for n in v["nodes"]][:5],
        }
        for v in result["violations"]
        if v["impact"] in SERIOUS
    ]


def _sign_in(page: Any, rt: LocalRuntime, who: str, ready: str) -> None:
    page.goto(rt.gateway_url + "/")
    page.get_by_label(DEMO_IDENTITIES[who]["label"]).check()
    page.get_by_role("button", name="Sign in").click()
    page.locator(ready).first.wait_for(timeout=30000)


@pytest.mark.parametrize(
    ("who", "ready"),
    [(None, "form"), ("ada", "#customer, #bills, main"), ("olive", "main"), ("sam", "#reports")],
    ids=["sign-in", "customer", "owner", "staff"],
)
def test_no_serious_accessibility_violation_on_the_page(
    portal_rt: LocalRuntime, who: str | None, ready: str
) -> None:
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            # the portal's CSP allows no inline script: the audit's own script is let in
            context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
            page = context.new_page()
            if who is None:
                page.goto(portal_rt.gateway_url + "/")
                page.locator(ready).first.wait_for(timeout=30000)
            else:
                _sign_in(page, portal_rt, who, ready)
                page.wait_for_load_state("networkidle")
            if who == "sam":  # the workbench with a report on screen
                page.locator("#report-kind").select_option("aging")
                page.locator("#report-form").get_by_role("button", name="Show").click()
                page.locator("#report table").wait_for(timeout=30000)
            found = _audit(page, who or "sign-in")
            assert found == [], json.dumps(found, indent=2)
        finally:
            browser.close()
