"""Issue 14's staff bill preview and Grafton septage routes through the local gateway on the
real template (JWT authorizer, HttpApi events of BillingApiFunction, the billing table)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from conftest import call
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

PERMIT = {
    "permit_id": "SP-RT-1",
    "name": "Dale's Pumping",
    "address": "9 Mill Rd, Grafton",
    "units": [{"make": "Peterbilt", "model": "348", "licence_number": "WI-TRK-100"}],
    "insurance_amount": "100000.00",
}


def test_grafton_staff_register_a_permit_and_a_disposal_is_charged_at_the_septage_rate(
    portal_rt: LocalRuntime, tokens: dict[str, str]
) -> None:
    clerk = portal_rt.mint_token(sub="gclerk", claims={"role": "staff", "tenants": ["grafton-sewer"]})
    status, _, raw = call(portal_rt, "POST", "/staff/grafton-sewer/septage/permits", clerk, PERMIT)
    assert status == 200, raw  # exactly $100,000 is enough (at least)
    low = {**PERMIT, "permit_id": "SP-RT-2", "insurance_amount": "99999.99"}
    status, _, raw = call(portal_rt, "POST", "/staff/grafton-sewer/septage/permits", clerk, low)
    assert status == 400 and json.loads(raw)["error"]["message"].startswith("insurance_amount:")
    disposal = {
        "permit_id": "SP-RT-1",
        "licence_number": "WI-TRK-100",
        "gallons": "1200",
        "disposed_on": "2025-02-01",
        "reference": "RT-DISP-1",
    }
    status, _, raw = call(portal_rt, "POST", "/staff/grafton-sewer/septage/disposals", clerk, disposal)
    # 1,200 gallons = 1.2 kgal x 45.00 = 54.00 (GR-SEPTAGE-CHARGE); no account on the permit.
    assert status == 200, raw
    line = json.loads(raw)["line"]
    assert (line["rule_id"], line["amount"]) == ("GR-SEPTAGE-CHARGE", "54.00")
    # Sam is staff of Pleasant Prairie sewer, not of Grafton.
    status, _, _ = call(portal_rt, "GET", "/staff/grafton-sewer/septage/permits/SP-RT-1", tokens["sam"])
    assert status == 403
    status, _, _ = call(portal_rt, "POST", "/staff/grafton-sewer/septage/disposals", tokens["sam"], disposal)
    assert status == 403


def test_staff_preview_through_the_gateway_totals_its_lines_and_customers_are_refused(
    portal_rt: LocalRuntime, tokens: dict[str, str]
) -> None:
    body = {"period_start": "2025-01-01", "period_end": "2025-02-01", "water_gallons": "4000"}
    path = "/staff/pleasant-prairie-sewer/accounts/PP-0001/preview"
    status, _, raw = call(portal_rt, "POST", path, tokens["sam"], body)
    assert status == 200, raw
    bill = json.loads(raw)
    # PP-SEW-SVC 5/8" PP zone 14.10 a month; PP-SEW-VOL 4 kgal x 4.49 = 17.96; total 32.06
    # (tariff 2019-10-01, the version in force for January 2025).
    assert [(ln["rule_id"], ln["quantity"], ln["rate"], ln["amount"]) for ln in bill["lines"]] == [
        ("PP-SEW-SVC", "1", "14.10", "14.10"),
        ("PP-SEW-VOL", "4", "4.49", "17.96"),
    ]
    assert bill["total"] == "32.06" == str(sum(Decimal(ln["amount"]) for ln in bill["lines"]))
    assert bill["lines"][1]["details"]["billed_gallons"] == "4000"
    status, _, _ = call(portal_rt, "POST", path, tokens["ada"], body)  # her own account, but not staff
    assert status == 403
