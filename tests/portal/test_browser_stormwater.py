"""A Pleasant Prairie stormwater account in the portal, in headless Chromium (Debian's
chromium, driven by Playwright), issue 28: an account whose bill carries a PP-CWU-CREDIT
credit line and the credit application's review fee, and whose unpaid bills bear the
PP-CWU-PENALTY. What the customer sees (each bill's lines and amounts, the balance) must be
what the staff routes hold (the bills route and the ledger). The screenshot goes to
/tmp/v28-portal-stormwater.png.

Its own runtime (the real template): parcel PP-P-0001 nonresidential (43,560 sq ft, 30,000
impervious: 6.54 ERU) on Ada Demo's account PPW-0001, opened 2026-08-03."""

from __future__ import annotations

import json
import os
import shutil
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SW = "pleasant-prairie-stormwater"
PARCEL = "PP-P-0001"
SHOT = Path("/tmp/v28-portal-stormwater.png")
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]

sync_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    pytest.skip(f"no chromium at {CHROMIUM}", allow_module_level=True)


def call(rt: LocalRuntime, method: str, path: str, claims: dict[str, Any], body: Any = None) -> Any:
    token = rt.mint_token(sub=str(claims["role"]), claims=claims)
    request = urllib.request.Request(
        rt.gateway_url + path,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 - the local gateway
        result = json.loads(answer.read())
    rt.drain()
    return result


STAFF = {"role": "staff", "tenants": [SW]}
OWNER = {"role": "owner", "tenants": [SW], "parcels": [PARCEL]}


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2026, 8, 31, 14, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": "browser-sw"},
        stack_name="browser-sw",
    ) as runtime:
        runtime.upload(
            "UploadsBucket",
            "gis/browser.csv",
            "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft\n"
            f"{SW},{PARCEL},Ada Demo,nonresidential,43560,30000\n",
        )
        runtime.upload(
            "UploadsBucket",
            "accounts/browser.csv",
            "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,parcel_id,owner_name\n"
            f"{SW},PPW-0001,Ada Demo,1 Lake Rd,1 Lake Rd,53158,2026-08-03,nonresidential,,{PARCEL},Ada Demo\n",
        )
        runtime.clock.advance(to=datetime(2026, 9, 1, 14, tzinfo=UTC))  # August billed
        runtime.drain()
        # 09-02: the credit application (its 100.00 review fee); reviewed and approved 09-03.
        runtime.clock.advance(to=datetime(2026, 9, 2, 15, tzinfo=UTC))
        docs = {
            "engineer_name": "Pat Lee, P.E.",
            "engineer_license": "WI-PE-40123",
            "document_ref": "Lee Engineering report 2026-17",
            "practice": "wet detention pond treating the lot",
        }
        credit = call(runtime, "POST", f"/parcels/{SW}/{PARCEL}/credits", OWNER, docs)
        runtime.clock.advance(to=datetime(2026, 9, 3, 15, tzinfo=UTC))
        staff = f"/staff/{SW}/parcels/{PARCEL}/credits/{credit['credit_id']}"
        call(runtime, "POST", f"{staff}/review", STAFF)
        call(
            runtime,
            "POST",
            f"{staff}/decision",
            STAFF,
            {"decision": "approve", "tss_removal_percent": "92", "reason": "pond inspected"},
        )
        # September billed (the credit from 09-03, the fee); nothing paid: August's bill is
        # delinquent on 10-01 and September's on 10-31 (PP-CWU-PENALTY 1% each).
        runtime.clock.advance(to=datetime(2026, 10, 1, 14, tzinfo=UTC))
        runtime.drain()
        runtime.clock.advance(to=datetime(2026, 11, 1, 6, tzinfo=UTC))
        runtime.drain()
        yield runtime


def money(text: str) -> Decimal:
    return Decimal(text.replace("−", "-").replace("$", "").replace(",", "").strip())


def test_pp_cwu_credit_fee_and_penalty_shown_in_the_portal_agree_with_the_ledger(rt: LocalRuntime) -> None:
    bills = call(rt, "GET", f"/staff/{SW}/accounts/PPW-0001/bills", STAFF)["bills"]
    ledger = call(rt, "GET", f"/staff/{SW}/accounts/PPW-0001/ledger", STAFF)
    rules = {line["rule_id"] for b in bills for line in b["lines"]}
    penalties = [e for e in ledger["entries"] if e["rule_id"] == "PP-CWU-PENALTY"]
    # The case is what it should be: a credit line and the review fee on September's bill,
    # a penalty on each unpaid bill.
    september = next(b for b in bills if b["period"]["start"] == "2026-09-01")
    assert [ln["amount"] for ln in september["lines"] if ln["rule_id"] == "PP-CWU-CREDIT"]
    assert any(Decimal(ln["amount"]) < 0 for ln in september["lines"] if ln["rule_id"] == "PP-CWU-CREDIT")
    assert any(ln["amount"] == "100.00" for ln in september["lines"] if ln["rule_id"] == "PP-CWU-CREDIT")
    assert {"PP-CWU-BASE", "PP-CWU-ERU"} <= rules
    assert sorted(e["bill_id"] for e in penalties) == sorted(b["bill_id"] for b in bills)
    # The balance is the bills' totals and the penalties (nothing paid).
    assert Decimal(ledger["balance"]) == sum((Decimal(b["total"]) for b in bills), Decimal("0.00")) + sum(
        (Decimal(e["amount"]) for e in penalties), Decimal("0.00")
    )

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.goto(rt.gateway_url + "/")
            page.get_by_label(
                "Ada Demo, customer (sewer PP-0001, stormwater PPW-0001, parcel PP-P-0001)"
            ).check()
            page.get_by_role("button", name="Sign in").click()
            card = page.locator('article.account[data-account="PPW-0001"]')
            card.wait_for(timeout=30000)
            shown_balance = money(card.locator(".balance-value").inner_text())
            shown: dict[str, list[tuple[str, Decimal]]] = {}
            totals: dict[str, Decimal] = {}
            for i in range(card.locator("details.bill").count()):
                bill = card.locator("details.bill").nth(i)
                bill.locator("summary").click()
                summary = bill.locator("summary").inner_text()
                rows = bill.locator("tbody tr")
                lines = []
                for r in range(rows.count()):
                    cells = rows.nth(r).locator("td")
                    lines.append(
                        (cells.nth(0).locator("code").inner_text(), money(cells.nth(2).inner_text()))
                    )
                shown[summary] = lines
                totals[summary] = money(bill.locator("tfoot td").inner_text())
            page.screenshot(path=str(SHOT), full_page=True)
        finally:
            browser.close()

    assert shown_balance == Decimal(ledger["balance"])
    assert len(shown) == len(bills)
    for b in bills:
        (summary,) = [
            s for s in shown if b["period"]["start"] in s and (b.get("bill_number") or b["bill_id"]) in s
        ]
        assert shown[summary] == [(ln["rule_id"], Decimal(ln["amount"])) for ln in b["lines"]]
        assert totals[summary] == Decimal(b["total"])
        assert money(summary.rsplit("·", 1)[1]) == Decimal(b["amount_due"])
