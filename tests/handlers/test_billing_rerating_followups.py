"""Billing's handlers on moto: what follows a re-rating (X-IMMUTABLE) and mid-period ERUs.

- a re-rating adjustment publishes ``BillAdjusted`` (the customer is sent the memo);
- re-rating uses the account version in force when the bill was issued, not a later one;
- staff list the re-ratings refused (``RERATE-REFUSED#<tenant>``), paged;
- an ERU re-determined inside a stormwater period is prorated by days (X-PERIOD).
"""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

from handler_support import TABLES, Stack, eventbridge_body, fixture_text, lambda_context, sqs_event
from test_billing_flow import (  # noqa: F401
    ACCOUNTS,
    HEADER,
    _consumption,
    _deliver,
    flow,
    issued_bills,
    ledger,
    of,
    published,
    run_cycle,
    upload,
)
from test_billing_staff_api import call

from billing.handlers import issue_bills, on_producer_event, run_billing_cycle
from stormwater.events import ERUDetermined


def test_a_rerating_publishes_one_bill_adjusted_with_its_funds_and_reason(flow: Stack) -> None:  # noqa: F811
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    _deliver(_consumption("GR-1", 23000, estimated=True))
    run_cycle(flow)
    issued_bills(flow)  # the bills' events are out of the way

    actual = _consumption("GR-1", 20000)
    _deliver(actual)
    [memo] = published(flow, "BillAdjusted")
    # GR-VOL 3 kgal x 6.50 = 19.50 credit: 17.16 O&M + 2.34 replacement (GR-FUNDS 12% per line).
    assert (memo["bill_id"], memo["reference"], memo["amount"], memo["memo"]) == (
        "GR-1-2026-07-01",
        "RERATE-GR-1-2026-07-01-001",
        "-19.50",
        "credit",
    )
    assert memo["lines"] == [{"fund": "om", "amount": "-17.16"}, {"fund": "replacement", "amount": "-2.34"}]
    assert (memo["kind"], memo["from_volume_gal"], memo["to_volume_gal"]) == ("rerating", "23000", "20000")
    assert memo["source_event_id"] == actual.event_id
    assert "X-IMMUTABLE" in memo["reason"] and "from 23000 gal to 20000 gal" in memo["reason"]
    assert (memo["period_start"], memo["period_end"]) == ("2026-07-01", "2026-10-01")
    # A redelivery books nothing and publishes nothing.
    _deliver(actual)
    assert published(flow, "BillAdjusted") == []


def test_a_staff_correction_publishes_bill_adjusted_once(flow: Stack) -> None:  # noqa: F811
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    _deliver(_consumption("GR-1", 23000))
    run_cycle(flow)
    issued_bills(flow)
    body = {
        "bill_id": "GR-1-2026-07-01",
        "amount": "5.00",
        "reason": "meter test fee omitted",
        "approver": "finance director",
        "reference": "ADJ-7",
    }
    assert call("POST", "/staff/grafton-sewer/accounts/GR-1/adjustments", body=body)[0] == 200
    assert call("POST", "/staff/grafton-sewer/accounts/GR-1/adjustments", body=body)[1]["replayed"] is True
    [memo] = published(flow, "BillAdjusted")
    assert (memo["kind"], memo["memo"], memo["amount"], memo["approver"]) == (
        "correction",
        "debit",
        "5.00",
        "finance director",
    )
    assert memo["lines"] == [{"fund": "om", "amount": "5.00"}]
    assert memo["from_volume_gal"] is None


def test_rerating_uses_the_account_as_it_was_when_the_bill_was_issued(flow: Stack) -> None:  # noqa: F811
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    _deliver(_consumption("GR-1", 23000, estimated=True))
    run_cycle(flow)
    # After the bill, GR-1's meter is taken out (unmetered from now on: a new version).
    upload(
        flow,
        "accounts/unmetered.csv",
        HEADER + "\ngrafton-sewer,GR-1,Ann,1 Main St,1 Main St,53024,2026-01-01,residential,,GP-1,Ann\n",
    )
    assert json.loads(of(flow, "ACCOUNTS#grafton-sewer")[0]["record"]).get("meter_size") is None
    # The Q3 bill was rated metered (5/8): the corrected read is re-rated on that version,
    # 3 kgal x 6.50 = -19.50; on the current (unmetered) record nothing would be booked.
    _deliver(_consumption("GR-1", 20000))
    entries = [e for e in ledger(flow, "GR-1") if e.kind == "adjustment"]
    assert sum(e.amount for e in entries) == Decimal("-19.50")


def test_the_same_accounts_file_again_adds_no_version(flow: Stack) -> None:  # noqa: F811
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    history = of(flow, "ACCOUNT-HISTORY#grafton-sewer#GR-1")
    upload(flow, "accounts/2026-again.csv", ACCOUNTS)
    assert of(flow, "ACCOUNT-HISTORY#grafton-sewer#GR-1") == history


def _refuse_rerating(flow: Stack, account: str) -> None:  # noqa: F811
    """The account's bill as if issued on a tariff version the quarter no longer rates on."""
    from common.dynamo import to_item

    [item] = [
        i
        for i in flow.items("billing")
        if i["pk"] == "BILLS#grafton-sewer" and i["sk"].startswith(f"{account}#")
    ]
    document = json.loads(item["bill"])
    document["tariff_versions"] = ["grafton-sewer@1999-01-01"]
    flow.ddb.put_item(TableName=TABLES["billing"], Item=to_item({**item, "bill": json.dumps(document)}))


def test_staff_list_the_reratings_refused_with_the_reason_paged(flow: Stack) -> None:  # noqa: F811
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    _deliver(_consumption("GR-1", 23000, estimated=True))
    _deliver(_consumption("GR-2", 9000, estimated=True))
    run_cycle(flow)
    _refuse_rerating(flow, "GR-1")
    _refuse_rerating(flow, "GR-2")
    first, second = _consumption("GR-1", 20000), _consumption("GR-2", 8000)
    _deliver(first)
    _deliver(second)

    status, body = call("GET", "/staff/grafton-sewer/rerating/refused", query={"limit": "1"})
    assert status == 200 and body["next_cursor"] == "1"
    [one] = body["refused"]
    _, rest = call("GET", "/staff/grafton-sewer/rerating/refused", query={"limit": "1", "cursor": "1"})
    assert rest["next_cursor"] is None
    listed = {r["account_id"]: r for r in body["refused"] + rest["refused"]}
    assert sorted(listed) == ["GR-1", "GR-2"]
    gr1 = listed["GR-1"]
    assert (gr1["bill_id"], gr1["from_volume_gal"], gr1["to_volume_gal"], gr1["source_event_id"]) == (
        "GR-1-2026-07-01",
        "23000",
        "20000",
        first.event_id,
    )
    assert "rated on tariff grafton-sewer@1999-01-01" in gr1["reason"] and gr1["rule_id"] == "X-IMMUTABLE"
    assert one in listed.values()
    # Staff of the tenant only (common.authz); an unknown tenant is a 404.
    other = {"sub": "clerk", "role": "staff", "tenants": "[sullivan-sewer]"}
    assert call("GET", "/staff/grafton-sewer/rerating/refused", claims=other)[0] == 403
    customer = {"sub": "ann", "role": "customer", "tenants": "[grafton-sewer]", "accounts": "[GR-1]"}
    assert call("GET", "/staff/grafton-sewer/rerating/refused", claims=customer)[0] == 403
    assert call("GET", "/staff/nowhere/rerating/refused")[0] == 404


# --- X-PERIOD: an ERU re-determined inside a stormwater period ----------------------------

SW = "pleasant-prairie-stormwater"
SW_ACCOUNT = (
    HEADER
    + f"\n{SW},PPS-1,Lakeview Commerce LLC,9 Lake Rd,9 Lake Rd,53158,2026-09-01,residential,,P-1,Lakeview\n"
)


def _eru(sequence: int, effective_from: date, eru: str) -> ERUDetermined:
    base = ERUDetermined.model_validate(json.loads(fixture_text("ERUDetermined.json"))["detail"])
    return base.model_copy(
        update={
            "event_id": f"ev-eru-{sequence}",
            "parcel_id": "P-1",
            "sequence": sequence,
            "effective_from": effective_from,
            "eru": Decimal(eru),
            "exempt": False,
            "breakdown": base.breakdown.model_copy(update={"use": "residential"}),
        }
    )


def _run_stormwater_cycle(flow: Stack, at: str) -> None:  # noqa: F811
    run_billing_cycle.lambda_handler(
        sqs_event(json.dumps({"tenant": SW, "scheduled_time": at})), lambda_context()
    )
    while msgs := flow.sqs.receive_message(QueueUrl=flow.issue_queue_url, MaxNumberOfMessages=10).get(  # type: ignore[attr-defined]
        "Messages", []
    ):
        for m in msgs:
            issue_bills.lambda_handler(sqs_event(m["Body"]), lambda_context())
            flow.sqs.delete_message(QueueUrl=flow.issue_queue_url, ReceiptHandle=m["ReceiptHandle"])  # type: ignore[attr-defined]


def test_an_eru_redetermined_mid_month_is_billed_part_by_part(flow: Stack) -> None:  # noqa: F811
    upload(flow, "accounts/sw.csv", SW_ACCOUNT)
    # 1.00 ERU since 2025; re-determined 2.00 from 2026-09-13. Each event delivered twice.
    for event in (_eru(1, date(2025, 1, 1), "1.00"), _eru(2, date(2026, 9, 13), "2.00")):
        for _ in range(2):
            body = eventbridge_body(event)
            assert on_producer_event.lambda_handler(sqs_event(body), lambda_context()) == {
                "batchItemFailures": []
            }
    [kept] = of(flow, f"ERU#{SW}")
    assert sorted(kept["determinations"]) == ["000001", "000002"]  # the history, by business key
    _run_stormwater_cycle(flow, "2026-10-01T11:00:00Z")
    [bill] = of(flow, f"BILLS#{SW}")
    assert (bill["period_start"], bill["period_end"]) == ("2026-09-01", "2026-10-01")
    # September, 30 days: base 2.00; 1.00 ERU x 12/30 days x 6.00 = 2.40; 2.00 x 18/30 x 6.00 = 7.20.
    assert [(ln["rule_id"], ln["amount"]) for ln in bill["lines"]] == [
        ("PP-CWU-BASE", "2.00"),
        ("PP-CWU-ERU", "2.40"),
        ("PP-CWU-ERU", "7.20"),
    ]
    assert bill["total"] == "11.60"
    derivations = [ln["details"].get("derivation") for ln in bill["lines"][1:]]
    assert derivations == ["1.00 ERU x 12/30 days x $6.00", "2.00 ERU x 18/30 days x $6.00"]
    assert bill["lines"][2]["details"]["source_event_id"] == "ev-eru-2"
    # October is all 2.00 ERU: one line, not prorated: 2.00 + 12.00.
    _run_stormwater_cycle(flow, "2026-11-01T11:00:00Z")
    october = [b for b in of(flow, f"BILLS#{SW}") if b["period_start"] == "2026-10-01"]
    assert [(ln["rule_id"], ln["amount"]) for ln in october[0]["lines"]] == [
        ("PP-CWU-BASE", "2.00"),
        ("PP-CWU-ERU", "12.00"),
    ]
