"""X-IMMUTABLE, X-PERIOD on billing's handlers (moto, in-process): an ERU or a credit that
reaches billing for a stormwater period already billed re-rates that period. The bill is
never edited; the difference is one adjustment referring to it (a debit or credit memo,
``BillAdjusted``), with the reason naming the event and the derivation its rule IDs; the
same event again changes nothing.

Tariff: base 2.00 (PP-CWU-BASE) and 6.00 per ERU-month (PP-CWU-ERU); September 2026 has
30 days, October 31.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from handler_support import Stack, eventbridge_body, fixture_text, lambda_context, sqs_event
from test_billing_flow import HEADER, flow, ledger, of, upload  # noqa: F401
from test_billing_rerating_followups import _run_stormwater_cycle

from billing.handlers import issue_bills, on_consumption_determined, on_producer_event, run_billing_cycle
from common import clock
from metering.events import ConsumptionDetermined
from stormwater.events import CreditChanged, ERUDetermined

SW = "pleasant-prairie-stormwater"


@pytest.fixture
def at() -> Iterator[clock.FixedClock]:
    fixed = clock.FixedClock(datetime(2026, 8, 1, 17, tzinfo=UTC))
    clock.install(fixed)
    yield fixed
    clock.install(None)


def eru(
    sequence: int, effective_from: date, value: str, *, use: str = "residential", **over: Any
) -> ERUDetermined:
    base = ERUDetermined.model_validate(json.loads(fixture_text("ERUDetermined.json"))["detail"])
    return base.model_copy(
        update={
            "event_id": f"ev-eru-{sequence}",
            "parcel_id": "P-1",
            "sequence": sequence,
            "effective_from": effective_from,
            "eru": Decimal(value),
            "exempt": False,
            "breakdown": base.breakdown.model_copy(update={"use": use}),
            **over,
        }
    )


def credit(status: str, effective_from: date, percent: str) -> CreditChanged:
    base = CreditChanged.model_validate(json.loads(fixture_text("CreditChanged.json"))["detail"])
    return base.model_copy(
        update={
            "event_id": f"ev-credit-{status}",
            "parcel_id": "P-1",
            "credit_id": "CR-1",
            "status": status,
            "effective_from": effective_from,
            "credit_percent": Decimal(percent),
        }
    )


def deliver(event: Any) -> None:
    assert on_producer_event.lambda_handler(sqs_event(eventbridge_body(event)), lambda_context()) == {
        "batchItemFailures": []
    }


def adjusted(stack: Stack) -> list[dict[str, Any]]:
    return [json.loads(o["detail"]) for o in stack.outbox("billing") if o["detail_type"] == "BillAdjusted"]


def adjustments(stack: Stack) -> list[tuple[str, str]]:
    return sorted((e["bill_id"], e["amount"]) for e in of(stack, f"LEDGER#{SW}") if e["kind"] == "adjustment")


def refunds(stack: Stack) -> list[tuple[str, str]]:
    """PP-CWU-RECONSIDER: what a reconsideration (or its appeal) took off billed periods,
    booked as ledger entries of kind ``credit`` on the bill they refer to."""
    return sorted((e["bill_id"], e["amount"]) for e in of(stack, f"LEDGER#{SW}") if e["kind"] == "credit")


def billed(stack: Stack, at: clock.FixedClock, account_class: str, first: ERUDetermined) -> None:
    """PPS-1 on parcel P-1 billed for September and October on ``first`` alone."""
    upload(
        stack,
        "accounts/sw.csv",
        HEADER
        + f"\n{SW},PPS-1,Lakeview,9 Lake Rd,9 Lake Rd,53158,2026-09-01,{account_class},,P-1,Lakeview\n",
    )
    deliver(first)
    assert len(of(stack, f"ACCOUNTS#{SW}")) == 1
    at.set(datetime(2026, 10, 1, 17, tzinfo=UTC))
    _run_stormwater_cycle(stack, "2026-10-01T11:00:00Z")
    at.set(datetime(2026, 11, 1, 17, tzinfo=UTC))
    _run_stormwater_cycle(stack, "2026-11-01T11:00:00Z")


def test_a_backdated_override_then_an_appeal_rerate_each_billed_month_once(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    billed(flow, at, "residential", eru(1, date(2025, 1, 1), "1.00"))
    # September and October on 1.00 ERU: 2.00 + 1.00 x 6.00 = 8.00 each.
    assert sorted((b["period_start"], b["total"]) for b in of(flow, f"BILLS#{SW}")) == [
        ("2026-09-01", "8.00"),
        ("2026-10-01", "8.00"),
    ]
    assert adjusted(flow) == []
    # Thu 2026-11-05: the Engineer's override, 2.00 ERU back-dated to Sun 09-13 (delivered twice).
    at.set(datetime(2026, 11, 5, 18, tzinfo=UTC))
    override = eru(2, date(2026, 9, 13), "2.00", cause="manual_override", cause_ref="OV-1")
    deliver(override)
    deliver(override)
    # September: 1.00 ERU x 12/30 x 6.00 = 2.40; 2.00 x 18/30 x 6.00 = 7.20; + 2.00 = 11.60,
    # billed 8.00: a debit memo of 3.60. October: 2.00 + 2.00 x 6.00 = 14.00: debit 6.00.
    assert adjustments(flow) == [("PPS-1-2026-09-01", "3.60"), ("PPS-1-2026-10-01", "6.00")]
    september, october = sorted(adjusted(flow), key=lambda m: m["bill_id"])
    assert (september["reference"], september["kind"], september["memo"], september["amount"]) == (
        "RERATE-PPS-1-2026-09-01-001",
        "rerating",
        "debit",
        "3.60",
    )
    assert september["source_event_id"] == "ev-eru-2" and september["from_volume_gal"] is None
    assert "manual_override OV-1" in september["reason"] and "PP-CWU-ERU 6.00 -> 9.60" in september["reason"]
    assert "2.00 ERU x 18/30 days x $6.00" in september["derivation"]
    assert september["rule_ids"] == ["PP-CWU-ERU", "X-PERIOD", "X-IMMUTABLE"]
    assert october["amount"] == "6.00" and october["lines"] == [{"fund": "om", "amount": "6.00"}]
    # The bills themselves are untouched (X-IMMUTABLE).
    assert sorted(b["total"] for b in of(flow, f"BILLS#{SW}")) == ["8.00", "8.00"]

    # Wed 11-25: the Board reverses on appeal, 1.50 ERU from the same day: the bills now
    # stand at 11.60 and 14.00, so only the further difference is booked. September:
    # 2.40 + 1.50 x 18/30 x 6.00 = 5.40, + 2.00 = 9.80: -1.80. October: 2.00 + 9.00 = 11.00: -3.00.
    at.set(datetime(2026, 11, 25, 18, tzinfo=UTC))
    deliver(eru(3, date(2026, 9, 13), "1.50", cause="appeal", cause_ref="AP-1"))
    # The appeal's lowering is a refund: a ledger credit on each bill (PP-CWU-RECONSIDER).
    assert adjustments(flow) == [("PPS-1-2026-09-01", "3.60"), ("PPS-1-2026-10-01", "6.00")]
    assert refunds(flow) == [("PPS-1-2026-09-01", "-1.80"), ("PPS-1-2026-10-01", "-3.00")]
    credits = sorted((m["reference"], m["memo"], m["amount"]) for m in adjusted(flow))
    assert [c for c in credits if c[0].endswith("-002")] == [
        ("RERATE-PPS-1-2026-09-01-002", "credit", "-1.80"),
        ("RERATE-PPS-1-2026-10-01-002", "credit", "-3.00"),
    ]


def test_pp_cwu_reconsider_refund_is_a_ledger_credit_on_the_reconsidered_bills(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    """CONTRACTS.md "reconsideration refunds ``credit``": the refund part of a re-rating
    for a reconsideration is a ledger entry of kind ``credit`` on the bill it refers to,
    still one adjustment of the bill (``BillAdjusted``, memo ``credit``); the bills
    themselves are untouched, and the credit pays only its own bill (X-ALLOCATION)."""
    from billing.domain.ledger import allocate, principal

    billed(flow, at, "residential", eru(1, date(2025, 1, 1), "2.00"))
    # 2.00 + 2.00 x 6.00 = 14.00 for September and October.
    assert sorted(b["total"] for b in of(flow, f"BILLS#{SW}")) == ["14.00", "14.00"]
    # Tue 11-10: a reconsideration of the October bill finds 1.00 ERU, corrected from the
    # start of the reconsidered bill's period (10-01) on: October 2.00 + 6.00 = 8.00, a
    # refund of 6.00; September (before the period) is not touched. Delivered twice.
    at.set(datetime(2026, 11, 10, 18, tzinfo=UTC))
    decided = eru(
        2,
        date(2026, 10, 1),
        "1.00",
        cause="reconsideration",
        cause_ref="RC-1",
        occurred_at=datetime(2026, 11, 10, 18, tzinfo=UTC),
    )
    # Delivered on Thu 11-12 (a redelivery after a crash, say), then again: the refund is
    # booked on the day of the decision, not the day a delivery happened to run.
    at.set(datetime(2026, 11, 12, 18, tzinfo=UTC))
    deliver(decided)
    deliver(decided)
    assert refunds(flow) == [("PPS-1-2026-10-01", "-6.00")]
    assert {e["posted_on"] for e in of(flow, f"LEDGER#{SW}") if e["kind"] == "credit"} == {"2026-11-10"}
    assert adjustments(flow) == []
    (memo,) = adjusted(flow)
    assert (memo["bill_id"], memo["memo"], memo["kind"], memo["amount"]) == (
        "PPS-1-2026-10-01",
        "credit",
        "rerating",
        "-6.00",
    )
    assert "reconsideration RC-1" in memo["reason"]
    assert sorted(b["total"] for b in of(flow, f"BILLS#{SW}")) == ["14.00", "14.00"]
    # X-ALLOCATION: the credit belongs to October; September's principal stays 14.00.
    entries = ledger(flow, "PPS-1", tenant=SW)
    unpaid = allocate(entries)
    assert principal(unpaid, entries, "PPS-1-2026-09-01") == Decimal("14.00")
    assert principal(unpaid, entries, "PPS-1-2026-10-01") == Decimal("8.00")


def test_a_late_eru_rerates_the_bills_rated_on_its_parcel_after_the_account_moved_to_another(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    billed(flow, at, "residential", eru(1, date(2025, 1, 1), "1.00"))
    # Tue 11-10: the county renumbers the land; PPS-1 is now on parcel P-2.
    at.set(datetime(2026, 11, 10, 18, tzinfo=UTC))
    upload(
        flow,
        "accounts/sw-moved.csv",
        HEADER + f"\n{SW},PPS-1,Lakeview,9 Lake Rd,9 Lake Rd,53158,2026-09-01,residential,,P-2,Lakeview\n",
    )
    # A change for P-2 back-dated into September is not a change of what the bills were
    # rated on (P-1): nothing is booked.
    deliver(eru(2, date(2026, 9, 13), "3.00", parcel_id="P-2", event_id="ev-eru-p2"))
    assert adjustments(flow) == []
    # The Board's appeal decision for P-1, 2.00 ERU from Sun 09-13, reaches the bills rated
    # on P-1 though the account is on P-2 now. September: 1.00 x 12/30 x 6.00 = 2.40,
    # 2.00 x 18/30 x 6.00 = 7.20, + 2.00 = 11.60 against 8.00: 3.60. October: 14.00 - 8.00.
    deliver(eru(3, date(2026, 9, 13), "2.00", cause="appeal", cause_ref="AP-1"))
    assert adjustments(flow) == [("PPS-1-2026-09-01", "3.60"), ("PPS-1-2026-10-01", "6.00")]
    assert sorted(b["parcel_id"] for b in of(flow, f"BILLS#{SW}")) == ["P-1", "P-1"]


def test_a_credit_approved_inside_a_billed_month_is_a_credit_memo_from_its_approval_only(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    # Nonresidential 10.00 ERU: 2.00 + 10.00 x 6.00 = 62.00 for September and October.
    billed(flow, at, "nonresidential", eru(1, date(2025, 1, 1), "10.00", use="nonresidential"))
    at.set(datetime(2026, 11, 3, 18, tzinfo=UTC))
    deliver(credit("submitted", date(2026, 9, 2), "0"))  # an application changes no bill
    assert adjusted(flow) == []
    # PP-CWU-CREDIT 20% approved Mon 09-21 (never retroactive), reaching billing in November:
    # September: 10 ERU x -(6.00 x 20%) x 10/30 days = -4.00; October: 10 x -1.20 = -12.00.
    approved = credit("approved", date(2026, 9, 21), "20")
    deliver(approved)
    deliver(approved)
    assert adjustments(flow) == [("PPS-1-2026-09-01", "-4.00"), ("PPS-1-2026-10-01", "-12.00")]
    memos = {m["bill_id"]: m for m in adjusted(flow)}
    assert memos["PPS-1-2026-09-01"]["memo"] == "credit"
    assert "credit CR-1 of parcel P-1 approved (20%) from 2026-09-21" in memos["PPS-1-2026-09-01"]["reason"]
    assert "PP-CWU-CREDIT" in memos["PPS-1-2026-09-01"]["rule_ids"]
    # Revoked from Sun 10-11 (announced 30 days before, PP-CWU-CREDIT-REVOKE): October stands
    # at 62.00 - 12.00 = 50.00; rated again, 10 days with the credit: -1.20 x 10 x 10/31 = -3.87.
    # So 62.00 - 3.87 = 58.13: a debit memo of 8.13.
    deliver(credit("revoked", date(2026, 10, 11), "0"))
    assert ("PPS-1-2026-10-01", "8.13") in adjustments(flow)
    assert len(adjustments(flow)) == 3  # September is not touched by a revocation after it


def test_a_determination_effective_today_or_later_rerates_nothing(flow: Stack, at: clock.FixedClock) -> None:  # noqa: F811
    billed(flow, at, "residential", eru(1, date(2025, 1, 1), "1.00"))
    # An ordinary extract's determination, effective the day it is made (Thu 11-05): the
    # periods billed end on or before it, so none of them changes.
    at.set(datetime(2026, 11, 5, 18, tzinfo=UTC))
    deliver(eru(2, date(2026, 11, 5), "3.00"))
    assert adjusted(flow) == [] and adjustments(flow) == []


# --- SU-REC: a re-rating divides the debt retirement by the RECs the bill was rated on ----

SU = "sullivan-sewer"


def su_consumption(account: str, gallons: int) -> ConsumptionDetermined:
    return ConsumptionDetermined(
        occurred_at=datetime(2026, 10, 1, tzinfo=UTC),
        tenant=SU,
        account_id=account,
        period_start=date(2026, 7, 1),
        period_end=date(2026, 10, 1),
        volume_gal=gallons,
        source_file="reads/su.csv",
    )


def test_a_sullivan_rerating_keeps_the_total_recs_the_bill_was_rated_on(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    row = f"{SU},{{0}},Su {{0}},{{0}} Elm St,{{0}} Elm St,53178,2026-01-01,residential,5/8,SP-{{0}},Su\n"
    upload(flow, "accounts/su.csv", HEADER + "\n" + row.format("SU-1") + row.format("SU-2"))
    for account in ("SU-1", "SU-2"):
        on_consumption_determined.lambda_handler(
            sqs_event(eventbridge_body(su_consumption(account, 20000))), lambda_context()
        )
    at.set(datetime(2026, 10, 1, 17, tzinfo=UTC))
    run_billing_cycle.lambda_handler(
        sqs_event(json.dumps({"tenant": SU, "scheduled_time": "2026-10-01T11:00:00Z"})), lambda_context()
    )
    while msgs := flow.sqs.receive_message(QueueUrl=flow.issue_queue_url, MaxNumberOfMessages=10).get(  # type: ignore[attr-defined]
        "Messages", []
    ):
        for m in msgs:
            issue_bills.lambda_handler(sqs_event(m["Body"]), lambda_context())
            flow.sqs.delete_message(QueueUrl=flow.issue_queue_url, ReceiptHandle=m["ReceiptHandle"])  # type: ignore[attr-defined]
    [bill] = [b for b in of(flow, f"BILLS#{SU}") if b["account_id"] == "SU-1"]
    [rec] = [ln for ln in bill["lines"] if ln["rule_id"] == "SU-REC"]
    assert Decimal(rec["details"]["total_recs"]) == 2  # two residential accounts of one REC
    # A third account opens after the bill: the current accounts count 3 RECs.
    at.set(datetime(2026, 10, 20, 17, tzinfo=UTC))
    upload(flow, "accounts/su-more.csv", HEADER + "\n" + row.format("SU-3"))
    # SU-1's read corrected to 18,000 gal: only SU-USE changes, 2 kgal x 7.25 = -14.50. With
    # the current 3 RECs the SU-REC line would have fallen by a third as well.
    on_consumption_determined.lambda_handler(
        sqs_event(eventbridge_body(su_consumption("SU-1", 18000))), lambda_context()
    )
    [memo] = adjusted(flow)
    assert (memo["bill_id"], memo["amount"]) == (bill["bill_id"], "-14.50")
    assert "SU-USE" in memo["reason"] and "SU-REC" not in memo["reason"]
    # Rated, before and after, on the bill's 2 RECs: 180,000.00 / (2 RECs x 4 quarters)
    # = 22,500.00 a quarter (the SU-REC line of both ratings; the current 3 would give 15,000.00).
    [link] = of(flow, f"ADJUSTMENT#{SU}")
    assert Decimal(link["total_recs"]) == 2
    assert ["SU-REC", rec["amount"], rec["amount"]] in json.loads(link["rule_lines"])
    assert Decimal(rec["amount"]) == Decimal("22500.00")


def test_a_billed_month_that_cannot_be_rated_again_is_listed_for_staff_and_nothing_booked(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    from handler_support import TABLES
    from test_billing_staff_api import call

    from common.dynamo import to_item

    billed(flow, at, "residential", eru(1, date(2025, 1, 1), "1.00"))
    # September's bill as if rated on a tariff version the month no longer rates on.
    [item] = [i for i in flow.items("billing") if i["pk"] == f"BILLS#{SW}" and i["sk"] == "PPS-1#2026-09-01"]
    document = json.loads(item["bill"])
    document["tariff_versions"] = [f"{SW}@1999-01-01"]
    flow.ddb.put_item(TableName=TABLES["billing"], Item=to_item({**item, "bill": json.dumps(document)}))
    at.set(datetime(2026, 11, 5, 18, tzinfo=UTC))
    deliver(eru(2, date(2026, 9, 13), "2.00", cause="manual_override", cause_ref="OV-1"))
    # October re-rated (+6.00); September refused with the reason, for staff to settle.
    assert adjustments(flow) == [("PPS-1-2026-10-01", "6.00")]
    claims = {"sub": "clerk", "role": "staff", "tenants": f"[{SW}]"}
    status, body = call("GET", f"/staff/{SW}/rerating/refused", claims=claims)
    assert status == 200
    [refused] = body["refused"]
    assert (refused["bill_id"], refused["source_event_id"]) == ("PPS-1-2026-09-01", "ev-eru-2")
    assert f"rated on tariff {SW}@1999-01-01" in refused["reason"]


def test_pp_cwu_reconsider_the_corrected_eru_holds_from_the_reconsidered_bills_period_start(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    """PP-CWU-RECONSIDER (interpretation): a parcel at 1.00 ERU, billed monthly; the March
    bill is reconsidered and the decision on April 10 finds 2.00 ERU. The March bill is
    re-rated (one adjustment for the difference) and April is billed wholly at 2.00: no
    days at 1.00, no proration at the decision date. The determination billing receives is
    the one stormwater's decision makes (its ``effective_from``)."""
    from stormwater.domain import reconsiderations as rc
    from stormwater.domain.determinations import ParcelData
    from stormwater.domain.eru import PLEASANT_PRAIRIE_DEFAULTS
    from stormwater.domain.parcels import ParcelState, TariffView, redetermine

    at.set(datetime(2027, 3, 1, 17, tzinfo=UTC))
    upload(
        flow,
        "accounts/sw.csv",
        HEADER + f"\n{SW},PPS-1,Lakeview,9 Lake Rd,9 Lake Rd,53158,2025-01-01,nonresidential,,P-1,Lakeview\n",
    )
    deliver(eru(1, date(2025, 1, 1), "1.00", use="nonresidential"))
    at.set(datetime(2027, 4, 1, 17, tzinfo=UTC))
    _run_stormwater_cycle(flow, "2027-04-01T11:00:00Z")
    # March on 1.00 ERU: 2.00 base + 1.00 x 6.00 = 8.00.
    [march] = [b for b in of(flow, f"BILLS#{SW}") if b["period_start"] == "2027-03-01"]
    assert march["total"] == "8.00"

    # Sat 2027-04-10: the Engineer decides the reconsideration of the March bill. The
    # standard parcel (15,100 sq ft, 2,749.71 impervious) is 1.00 ERU; found twice the lot
    # and twice the paving: the same runoff depth on twice the area, 2.00 ERU (100% up).
    tariff = TariffView(
        version_id=f"{SW}@2023-01-01",
        effective_from=date(2023, 1, 1),
        settings=PLEASANT_PRAIRIE_DEFAULTS,
        eru_rate=Decimal("6.00"),
        project_evaluation_fee=Decimal("150.00"),
        credit_engineer_limit_percent=Decimal(80),
        credit_cap_percent=Decimal(30),
        credit_review_fee=Decimal("100.00"),
        appeal_fee=Decimal("50.00"),
    )
    data = ParcelData(use="nonresidential", area_sqft=Decimal(15100), impervious_sqft=Decimal("2749.71"))
    view = rc.BillView(
        tenant=SW,
        bill_id=march["bill_id"],
        account_id="PPS-1",
        parcel_id="P-1",
        bill_date=date(2027, 4, 1),
        due_date=date.fromisoformat(march["due_date"]),
        total=Decimal("8.00"),
        period_start=date(2027, 3, 1),
        period_end=date(2027, 4, 1),
    )
    recon = rc.file_reconsideration(
        view,
        tenant=SW,
        parcel_id="P-1",
        bill_id=march["bill_id"],
        owner_name="Lakeview",
        billed_eru=Decimal("1.00"),
        grounds="remeasured",
        asserted_amount=Decimal("8.00"),
        today=date(2027, 4, 5),
    )
    decided_at = datetime(2027, 4, 10, 15, tzinfo=UTC)
    decision = rc.decide(
        recon,
        outcome="decide",
        reason="survey",
        found={"area_sqft": "30200", "impervious_sqft": "5499.42"},
        current=data,
        tariff=tariff,
        bill=view,
        credit_percent=Decimal(0),
        now=decided_at,
    )
    assert decision.found_data is not None and decision.reconsideration.eru_found == Decimal("2.00")
    state = ParcelState(tenant=SW, parcel_id="P-1", owner_name="Lakeview", gis=data, gis_digest="d")
    first = redetermine(
        state,
        tariff=tariff,
        effective_from=date(2025, 1, 1),
        cause="gis_extract",
        cause_ref="f",
        now=decided_at,
    ).state
    assert first.current is not None and first.current.eru == Decimal("1.00")
    found = redetermine(
        replace(first, gis=decision.found_data),
        tariff=tariff,
        effective_from=decision.effective_from or decided_at.date(),
        cause="reconsideration",
        cause_ref=recon.reconsideration_id,
        now=decided_at,
    ).event
    assert found is not None and found.eru == Decimal("2.00")
    at.set(datetime(2027, 4, 10, 18, tzinfo=UTC))
    deliver(found.model_copy(update={"sequence": 2}))
    deliver(found.model_copy(update={"sequence": 2}))  # a redelivery books nothing more
    # March re-rated: 2.00 + 2.00 x 6.00 = 14.00, billed 8.00: one debit memo of 6.00.
    assert adjustments(flow) == [(march["bill_id"], "6.00")]

    at.set(datetime(2027, 5, 1, 17, tzinfo=UTC))
    _run_stormwater_cycle(flow, "2027-05-01T11:00:00Z")
    [april] = [b for b in of(flow, f"BILLS#{SW}") if b["period_start"] == "2027-04-01"]
    # April wholly at 2.00: 2.00 + 2.00 x 6.00 = 14.00 (not 1.00 x 9/30 x 6.00 = 1.80 and
    # 2.00 x 21/30 x 6.00 = 8.40, + 2.00 = 12.20, as a change from the decision date gave).
    assert april["total"] == "14.00"
    eru_lines = [ln for ln in april["lines"] if ln["rule_id"] == "PP-CWU-ERU"]
    assert [(ln["quantity"], ln["amount"]) for ln in eru_lines] == [("2", "12.00")]
    assert adjustments(flow) == [(march["bill_id"], "6.00")]  # April's bill needs none
