"""Staff bill preview and Grafton's septage haulers (GR-SEPTAGE-PERMIT, GR-SEPTAGE-CHARGE) on moto."""

from __future__ import annotations

from typing import Any

import pytest
from handler_support import Stack
from test_billing_flow import ACCOUNTS, consume, flow, run_cycle, upload  # noqa: F401
from test_billing_staff_api import STAFF, billed, call  # noqa: F401

OTHER_STAFF = {"sub": "x", "role": "staff", "tenants": "[sullivan-sewer]"}
CUSTOMER = {"sub": "c", "role": "customer", "tenants": "[grafton-sewer]", "accounts": "[GR-3]"}
PERMIT: dict[str, Any] = {
    "permit_id": "SP-1",
    "name": "Dale's Pumping",
    "address": "9 Mill Rd, Grafton",
    "units": [{"make": "Peterbilt", "model": "348", "licence_number": "WI-TRK-100"}],
    "insurance_amount": "250000.00",
    "account_id": "GR-3",
}
DISPOSAL = {
    "permit_id": "SP-1",
    "licence_number": "WI-TRK-100",
    "gallons": "3500",
    "disposed_on": "2026-10-05",
    "reference": "DISP-1",
}


def error(result: tuple[int, Any]) -> tuple[int, str]:
    return result[0], result[1]["error"]["message"]


# --- preview ---------------------------------------------------------------------------


def test_preview_rates_a_given_volume_with_the_cycle_tariff_and_writes_nothing(billed: Stack) -> None:  # noqa: F811
    before = billed.items("billing")
    body = {"period_start": "2026-10-01", "period_end": "2027-01-01", "water_gallons": "10000"}
    status, bill = call("POST", "/staff/grafton-sewer/accounts/GR-1/preview", body=body)
    assert status == 200 and bill["preview"] is True
    # GR-SVC 5/8" 45.00; GR-VOL 10 kgal x 6.50 = 65.00; total 110.00.
    assert [(ln["rule_id"], ln["quantity"], ln["rate"], ln["amount"]) for ln in bill["lines"]] == [
        ("GR-SVC", "1", "45.00", "45.00"),
        ("GR-VOL", "10", "6.50", "65.00"),
    ]
    assert all(ln["description"] and isinstance(ln["details"], dict) for ln in bill["lines"])
    assert bill["total"] == "110.00" and bill["period"] == {"start": "2026-10-01", "end": "2027-01-01"}
    assert billed.items("billing") == before


def test_preview_without_a_volume_uses_the_consumption_billing_holds(billed: Stack) -> None:  # noqa: F811
    body = {"period_start": "2026-07-01", "period_end": "2026-10-01"}
    status, bill = call("POST", "/staff/grafton-sewer/accounts/GR-1/preview", body=body)
    # The cycle's own figures: 45.00 + 23 kgal x 6.50 = 149.50 -> 194.50, the issued bill.
    assert status == 200 and bill["total"] == "194.50", bill


def test_preview_refusals_name_the_field(billed: Stack) -> None:  # noqa: F811
    path = "/staff/grafton-sewer/accounts/GR-2/preview"
    held = error(call("POST", path, body={"period_start": "2026-10-01", "period_end": "2027-01-01"}))
    assert held[0] == 400 and held[1].startswith("water_gallons:")
    bad = call(
        "POST", path, body={"period_start": "2026-10-01", "period_end": "2027-01-01", "water_gallons": "-1"}
    )
    assert bad[0] == 400 and "water_gallons" in bad[1]["error"]["message"]
    backwards = {"period_start": "2026-10-01", "period_end": "2026-07-01", "water_gallons": "1"}
    assert error(call("POST", path, body=backwards))[1].startswith("period_end:")
    unknown = call(
        "POST", "/staff/grafton-sewer/accounts/NOPE/preview", body={**backwards, "period_end": "2027-01-01"}
    )
    assert error(unknown) == (404, "account_id: no account 'NOPE' at grafton-sewer")


# --- GR-SEPTAGE-PERMIT -----------------------------------------------------------------


def test_a_permit_is_registered_once_and_read_back(billed: Stack) -> None:  # noqa: F811
    status, first = call("POST", "/staff/grafton-sewer/septage/permits", body=PERMIT)
    assert status == 200 and first["replayed"] is False and first["rule_id"] == "GR-SEPTAGE-PERMIT"
    assert call("POST", "/staff/grafton-sewer/septage/permits", body=PERMIT)[1]["replayed"] is True
    changed = call("POST", "/staff/grafton-sewer/septage/permits", body={**PERMIT, "name": "Someone Else"})
    assert changed[0] == 409 and changed[1]["error"]["message"].startswith("permit_id:")
    status, read = call("GET", "/staff/grafton-sewer/septage/permits/SP-1")
    assert status == 200 and read["units"] == PERMIT["units"] and read["insurance_amount"] == "250000.00"
    assert call("GET", "/staff/grafton-sewer/septage/permits/SP-9")[0] == 404


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"insurance_amount": "99999.99"}, "insurance_amount"),
        ({"name": " "}, "name"),
        ({"units": [{"make": "Mack", "model": " ", "licence_number": "WI-1"}]}, "units[0].model"),
    ],
)
def test_a_permit_is_refused_below_100000_insurance_or_without_a_field(
    billed: Stack,  # noqa: F811
    change: dict[str, Any],
    field: str,
) -> None:
    status, message = error(call("POST", "/staff/grafton-sewer/septage/permits", body={**PERMIT, **change}))
    assert status == 400 and message.startswith(f"{field}:")
    assert call("GET", "/staff/grafton-sewer/septage/permits/SP-1")[0] == 404  # nothing kept


@pytest.mark.parametrize("missing", ["name", "address", "units", "insurance_amount"])
def test_a_permit_missing_a_field_is_refused_naming_it(billed: Stack, missing: str) -> None:  # noqa: F811
    body = {k: v for k, v in PERMIT.items() if k != missing}
    status, message = error(call("POST", "/staff/grafton-sewer/septage/permits", body=body))
    assert status == 400 and missing in message


# --- GR-SEPTAGE-CHARGE -----------------------------------------------------------------


def test_a_permitted_disposal_is_charged_at_the_septage_rate_on_the_haulers_account(billed: Stack) -> None:  # noqa: F811
    call("POST", "/staff/grafton-sewer/septage/permits", body=PERMIT)
    status, charged = call("POST", "/staff/grafton-sewer/septage/disposals", body=DISPOSAL)
    # 3,500 gallons = 3.5 kgal x 45.00 = 157.50 (GR-SEPTAGE-CHARGE, tariff 2025-01-01).
    assert status == 200 and charged["replayed"] is False
    line = charged["line"]
    assert (line["rule_id"], line["quantity"], line["rate"], line["amount"]) == (
        "GR-SEPTAGE-CHARGE",
        "3.5",
        "45.00",
        "157.50",
    )
    assert line["details"]["gallons"] == "3500"
    again = call("POST", "/staff/grafton-sewer/septage/disposals", body=DISPOSAL)
    assert again[1]["replayed"] is True
    reused = call("POST", "/staff/grafton-sewer/septage/disposals", body={**DISPOSAL, "gallons": "4000"})
    assert reused[0] == 409 and reused[1]["error"]["message"].startswith("reference:")
    _, ledger = call("GET", "/staff/grafton-sewer/accounts/GR-3/ledger")
    [entry] = [e for e in ledger["entries"] if e["rule_id"] == "GR-SEPTAGE-CHARGE"]  # once, not twice
    assert (entry["amount"], entry["kind"], entry["fund"], entry["reference"]) == (
        "157.50",
        "charge",
        "om",
        "DISP-1",
    )
    assert ledger["balance"] == "157.50"


def test_a_disposal_without_a_valid_permit_is_refused_and_not_charged(billed: Stack) -> None:  # noqa: F811
    call("POST", "/staff/grafton-sewer/septage/permits", body=PERMIT)
    unknown = error(
        call("POST", "/staff/grafton-sewer/septage/disposals", body={**DISPOSAL, "permit_id": "SP-9"})
    )
    assert unknown[0] == 400 and unknown[1].startswith("permit_id:")
    other_unit = {**DISPOSAL, "licence_number": "WI-TRK-999", "reference": "DISP-2"}
    status, message = error(call("POST", "/staff/grafton-sewer/septage/disposals", body=other_unit))
    assert status == 400 and message.startswith("licence_number:")
    _, ledger = call("GET", "/staff/grafton-sewer/accounts/GR-3/ledger")
    assert ledger["balance"] == "0.00"


# --- access ----------------------------------------------------------------------------


@pytest.mark.parametrize("claims", [OTHER_STAFF, CUSTOMER])
def test_preview_and_septage_routes_need_a_staff_token_of_grafton(
    billed: Stack,  # noqa: F811
    claims: dict[str, str],
) -> None:
    preview = {"period_start": "2026-10-01", "period_end": "2027-01-01", "water_gallons": "1"}
    assert call("POST", "/staff/grafton-sewer/accounts/GR-3/preview", claims, body=preview)[0] == 403
    assert call("POST", "/staff/grafton-sewer/septage/permits", claims, body=PERMIT)[0] == 403
    assert call("GET", "/staff/grafton-sewer/septage/permits/SP-1", claims)[0] == 403
    assert call("POST", "/staff/grafton-sewer/septage/disposals", claims, body=DISPOSAL)[0] == 403
    assert call("GET", "/staff/grafton-sewer/septage/permits/SP-1")[0] == 404  # nothing was kept


def test_out_of_tariff_dates_and_empty_disposals_are_refused_not_errors(billed: Stack) -> None:  # noqa: F811
    old = {"period_start": "1990-01-01", "period_end": "1990-04-01", "water_gallons": "1000"}
    status, body = call("POST", "/staff/grafton-sewer/accounts/GR-1/preview", body=old)
    assert status == 400, body
    call("POST", "/staff/grafton-sewer/septage/permits", body=PERMIT)
    status, message = error(
        call("POST", "/staff/grafton-sewer/septage/disposals", body={**DISPOSAL, "disposed_on": "1990-01-01"})
    )
    assert status == 400 and message.startswith("disposed_on:")
    status, message = error(
        call("POST", "/staff/grafton-sewer/septage/disposals", body={**DISPOSAL, "gallons": "0"})
    )
    assert status == 400 and message.startswith("gallons:")
