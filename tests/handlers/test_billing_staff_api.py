"""Staff read routes (CONTRACTS.md), the staff account route and API payments on moto."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from handler_support import Stack, authorized_http_event, lambda_context
from test_billing_flow import ACCOUNTS, consume, flow, run_cycle, upload  # noqa: F401

from billing.handlers import api

STAFF = {"sub": "clerk", "role": "staff", "tenants": "[grafton-sewer]"}


def call(
    method: str, path: str, claims: dict[str, str] = STAFF, body: Any = None, **kw: Any
) -> tuple[int, Any]:
    event = authorized_http_event(method, path, claims, body=None if body is None else json.dumps(body), **kw)
    response = api.lambda_handler(event, lambda_context())
    text = response["body"]
    return response["statusCode"], json.loads(text) if text.startswith(("{", "[")) else text


@pytest.fixture
def billed(flow: Stack) -> Stack:  # noqa: F811
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    consume(flow, "GR-1", 23000)
    run_cycle(flow)
    return flow


def test_bills_route_lists_bills_oldest_first_with_lines_and_amount_due(billed: Stack) -> None:
    status, body = call("GET", "/staff/grafton-sewer/accounts/GR-1/bills")
    assert status == 200
    [bill] = body["bills"]
    assert bill["period"] == {"start": "2026-07-01", "end": "2026-10-01"}
    assert [(ln["rule_id"], ln["amount"]) for ln in bill["lines"]] == [
        ("GR-SVC", "45.00"),
        ("GR-VOL", "149.50"),
    ]
    assert (bill["total"], bill["amount_due"], bill["due_date"]) == ("194.50", "194.50", "2026-10-01")
    assert body["next_cursor"] is None


def test_ledger_route_has_one_entry_per_line_and_fund_and_the_derived_balance(billed: Stack) -> None:
    status, body = call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger", query={"limit": "3"})
    assert status == 200 and len(body["entries"]) == 3 and body["next_cursor"] == "3"
    _, rest = call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger", query={"limit": "3", "cursor": "3"})
    entries = body["entries"] + rest["entries"]
    assert rest["next_cursor"] is None
    # GR-SVC 45.00 -> 5.40 replacement + 39.60 O&M; GR-VOL 149.50 -> 17.94 + 131.56 (12%).
    assert sorted((e["rule_id"], e["fund"], e["amount"]) for e in entries) == [
        ("GR-SVC", "om", "39.60"),
        ("GR-SVC", "replacement", "5.40"),
        ("GR-VOL", "om", "131.56"),
        ("GR-VOL", "replacement", "17.94"),
    ]
    assert body["balance"] == "194.50"


def test_staff_routes_need_a_staff_token_of_the_tenant(billed: Stack) -> None:
    other = {"sub": "x", "role": "staff", "tenants": "[sullivan-sewer]"}
    assert call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger", other)[0] == 403
    customer = {"sub": "c", "role": "customer", "tenants": "[grafton-sewer]", "accounts": "[GR-2]"}
    assert call("GET", "/staff/grafton-sewer/accounts/GR-1/bills", customer)[0] == 403
    assert call("GET", "/staff/grafton-sewer/tax-roll/2026")[0] == 404  # before the year's notice


def test_an_api_payment_is_idempotent_by_key_and_a_reused_key_with_another_body_is_refused(
    billed: Stack,
) -> None:
    body = {"tenant": "grafton-sewer", "account_id": "GR-1", "amount": "50.00", "paid_on": "2026-10-05"}
    headers = {"idempotency-key": "pay-0001-abcd"}
    first = call("POST", "/payments", body=body, headers=headers)
    again = call("POST", "/payments", body=body, headers=headers)
    assert first[0] == again[0] == 200
    assert (first[1]["replayed"], again[1]["replayed"]) == (False, True)
    assert call("POST", "/payments", body={**body, "amount": "60.00"}, headers=headers)[0] == 409
    _, ledger = call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger")
    assert [e["amount"] for e in ledger["entries"] if e["kind"] == "payment"] == ["-50.00"]
    assert ledger["balance"] == "144.50"


def test_staff_can_change_an_account_and_read_its_history(billed: Stack) -> None:
    change = {
        "name": "Ann",
        "service_address": "1 Main St",
        "mailing_address": "1 Main St",
        "zip": "53024",
        "opened_on": "2026-01-01",
        "class": "residential",
        "meter_size": "5/8",
        "owner_name": "New Owner",
    }
    assert call("PUT", "/staff/grafton-sewer/accounts/GR-1", body=change)[0] == 200
    status, body = call("GET", "/staff/grafton-sewer/accounts/GR-1")
    assert status == 200 and body["account"]["owner_name"] == "New Owner"
    assert len(body["history"]) == 2
    # The owner change leaves the arrears on the account (GR-TAXROLL): the balance is unchanged.
    assert call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger")[1]["balance"] == "194.50"
    bad = call("PUT", "/staff/grafton-sewer/accounts/GR-1", body={**change, "class": "big"})
    assert bad[0] == 400 and bad[1]["error"]["message"].startswith("class:")


def test_cycle_summary_dry_run_and_reports(billed: Stack) -> None:
    status, summary = call("GET", "/staff/grafton-sewer/cycles/2026-07-01")
    assert status == 200 and summary["bills"] == 1
    waiting = (
        "no consumption for 2026-07-01..2026-10-01 from metering: waiting for a read of the account's meter"
    )
    who = "metering: a read of the account's meter (reads/ file or estimate)"
    assert summary["held"] == [
        {"account_id": "GR-2", "reason": waiting, "who_can_supply": who},
        {"account_id": "GR-3", "reason": waiting, "who_can_supply": who},
    ]
    # the accounts opened in January: their earlier quarters are held too, each with its reason
    assert [(h["account_id"], h["period"]["start"]) for h in summary["held_earlier"]] == [
        (a, start) for start in ("2026-01-01", "2026-04-01") for a in ("GR-1", "GR-2", "GR-3")
    ]
    before = billed.items("billing")
    status, dry = call("POST", "/staff/grafton-sewer/cycles/2026-10-01/dry-run")
    assert status == 200 and dry["dry_run"] is True and billed.items("billing") == before
    status, csv_text = call(
        "GET", "/staff/grafton-sewer/reports/revenue", query={"start": "2026-01-01", "format": "csv"}
    )
    assert status == 200 and csv_text.splitlines()[0] == "tenant,class,fund,kind,amount"
    assert "grafton-sewer,residential,replacement,charge,23.34" in csv_text  # 5.40 + 17.94
    _, aging = call("GET", "/staff/grafton-sewer/reports/aging")
    assert aging["rows"][0]["account_id"] == "GR-1"


def test_a_correction_is_an_adjustment_referring_to_the_bill_never_an_edit(billed: Stack) -> None:
    memo = {
        "bill_id": "GR-1-2026-07-01",
        "amount": "-20.00",
        "reason": "meter misread",
        "approver": "Finance Director",
        "reference": "ADJ-1",
    }
    status, body = call("POST", "/staff/grafton-sewer/accounts/GR-1/adjustments", body=memo)
    assert status == 200 and body["replayed"] is False
    assert call("POST", "/staff/grafton-sewer/accounts/GR-1/adjustments", body=memo)[1]["replayed"] is True
    assert (
        call("POST", "/staff/grafton-sewer/accounts/GR-1/adjustments", body={**memo, "amount": "-25.00"})[0]
        == 409
    )
    assert (
        call(
            "POST",
            "/staff/grafton-sewer/accounts/GR-1/adjustments",
            body={**memo, "bill_id": "nope", "reference": "ADJ-2"},
        )[0]
        == 404
    )
    _, ledger = call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger")
    [adj] = [e for e in ledger["entries"] if e["kind"] == "adjustment"]
    assert (adj["amount"], adj["bill_id"], adj["description"]) == (
        "-20.00",
        "GR-1-2026-07-01",
        "meter misread (approved by Finance Director)",
    )
    assert ledger["balance"] == "174.50"  # 194.50 - 20.00; the bill itself is unchanged
    _, bills = call("GET", "/staff/grafton-sewer/accounts/GR-1/bills")
    assert bills["bills"][0]["total"] == "194.50"


def test_gr_toxic_a_debit_memo_charges_a_toxic_pollutants_added_costs_citing_the_rule(billed: Stack) -> None:
    """GR-TOXIC: "added costs caused by toxic pollutants are charged to the discharger (an
    approved adjustment line)". The plant's 1,840.00 of added treatment for a cadmium
    slug is one approved debit memo on GR-1's bill citing GR-TOXIC with its basis."""
    url = "/staff/grafton-sewer/accounts/GR-1/adjustments"
    basis = {"pollutant": "cadmium", "added_cost": "1840.00", "document": "WWTP invoice 2026-114"}
    memo = {
        "bill_id": "GR-1-2026-07-01",
        "amount": "1840.00",
        "reason": "added treatment after a cadmium discharge on 2026-08-14",
        "approver": "Utility Director",
        "reference": "TOX-1",
        "rule_id": "GR-TOXIC",
        "basis": basis,
    }
    status, body = call("POST", url, body=memo)
    assert status == 200 and body["replayed"] is False
    assert call("POST", url, body=memo)[1]["replayed"] is True  # the same memo again: once
    _, ledger = call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger")
    [adj] = [e for e in ledger["entries"] if e["kind"] == "adjustment"]
    assert (adj["amount"], adj["rule_id"], adj["bill_id"]) == ("1840.00", "GR-TOXIC", "GR-1-2026-07-01")
    assert "cadmium" in adj["description"] and "WWTP invoice 2026-114" in adj["description"]
    assert ledger["balance"] == "2034.50"  # 194.50 billed + 1,840.00 charged
    [event] = [
        json.loads(o["detail"]) for o in billed.outbox("billing") if o["detail_type"] == "BillAdjusted"
    ]
    assert (event["memo"], event["amount"], event["rule_id"], event["rule_ids"]) == (
        "debit",
        "1840.00",
        "GR-TOXIC",
        ["GR-TOXIC"],
    )
    assert event["basis"] == basis

    # Refused with 400 naming the field: a foreign or unknown rule, a credit memo under the
    # rule, a basis that does not add up or is missing a part, a basis with no rule.
    refused = [
        ({"rule_id": "PP-CWU-PEF"}, "rule_id"),
        ({"rule_id": "GR-NOPE"}, "rule_id"),
        ({"amount": "-1840.00"}, "rule_id"),
        ({"basis": {**basis, "added_cost": "1800.00"}}, "basis.added_cost"),
        ({"basis": {k: v for k, v in basis.items() if k != "document"}}, "document"),
        ({"rule_id": None}, "basis"),
    ]
    for i, (change, field) in enumerate(refused):
        status, body = call("POST", url, body={**memo, **change, "reference": f"TOX-BAD-{i}"})
        assert status == 400 and field in body["error"]["message"], (change, body)
    _, ledger = call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger")
    assert len([e for e in ledger["entries"] if e["kind"] == "adjustment"]) == 1


def test_the_journal_and_trial_balance_reports_balance_by_fund_in_the_villages_codes(billed: Stack) -> None:
    body = {"tenant": "grafton-sewer", "account_id": "GR-1", "amount": "50.00", "paid_on": "2026-10-05"}
    assert call("POST", "/payments", body=body, headers={"idempotency-key": "pay-0002-books"})[0] == 200
    status, journal = call(
        "GET", "/staff/grafton-sewer/reports/journal", query={"start": "2026-09-01", "end": "2026-11-01"}
    )
    assert status == 200 and journal["report"] == "journal"
    rows = journal["rows"]
    for day in {r["date"] for r in rows}:
        for fund in ("om", "replacement"):
            of = [r for r in rows if r["date"] == day and r["fund"] == fund]
            debit = sum(Decimal(r["debit"]) for r in of)
            assert debit == sum(Decimal(r["credit"]) for r in of), (day, fund, of)
    cash = [r for r in rows if r["gl_account"] == "1-131"]  # Grafton's chart (its tariff)
    assert [(r["fund"], r["debit"], r["gl_name"]) for r in cash] == [
        ("om", "50.00", "Cash, treasurer's deposits")
    ]
    status, tb = call("GET", "/staff/grafton-sewer/reports/trial-balance", query={"as_of": "2026-10-31"})
    assert status == 200
    receivable = sum(
        Decimal(r["debit"]) - Decimal(r["credit"]) for r in tb["rows"] if r["gl_account"] == "1-142"
    )
    assert receivable == Decimal("144.50")  # the ledger's balance after the payment
    status, text = call(
        "GET", "/staff/grafton-sewer/reports/trial-balance", query={"as_of": "2026-10-31", "format": "csv"}
    )
    assert status == 200 and text.splitlines()[0] == "as_of,fund,gl_account,gl_name,debit,credit"
    bad = call(
        "GET", "/staff/grafton-sewer/reports/journal", query={"start": "2026-10-01", "end": "2027-10-01"}
    )
    assert bad[0] == 400 and bad[1]["error"]["message"].startswith("end:")


def test_the_books_before_the_first_tariff_are_empty_and_far_dates_are_refused(billed: Stack) -> None:
    status, tb = call("GET", "/staff/grafton-sewer/reports/trial-balance", query={"as_of": "1901-01-01"})
    assert (status, tb["rows"]) == (200, [])
    status, journal = call("GET", "/staff/grafton-sewer/reports/journal", query={"start": "0001-01-01"})
    assert (status, journal["rows"]) == (200, [])
    bad = call("GET", "/staff/grafton-sewer/reports/journal", query={"start": "9999-12-31"})
    assert bad[0] == 400 and bad[1]["error"]["message"].startswith("start:")
