"""Reconsideration and appeal through the local runtime (PP-CWU-RECONSIDER, PP-CWU-APPEAL).

Billing's bills and payments arrive as events on the bus (stand-ins shaped like billing's
BillIssued / PaymentApplied until billing publishes them) and bound the filing window."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from conftest import STAFF, TENANT, Captured, call, owner
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

PARCEL = "RC-C1"
BASE = f"/parcels/{TENANT}/{PARCEL}"
STAFF_BASE = f"/staff/{TENANT}/parcels/{PARCEL}"
EXTRACT = (
    "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft\n"
    f"{TENANT},{PARCEL},Lakeview Commerce LLC,nonresidential,43560,30000\n"  # 6.54 ERU
)


def _bill(rt: LocalRuntime, bill_id: str, *, due: str = "2026-10-21") -> None:
    """A stormwater bill as billing publishes it: in a BillsIssued chunk (here of one)."""
    bill = {
        "schema_version": 1,
        "occurred_at": "2026-10-01T12:00:00Z",
        "tenant": TENANT,
        "bill_id": bill_id,
        "account_id": "PPS-000412",
        "parcel_id": PARCEL,
        "bill_date": "2026-10-01",
        "due_date": due,
        "period_start": "2026-09-01",
        "period_end": "2026-10-01",
        "total": "41.24",  # 2.00 base + 6.54 x 6.00
    }
    chunk = {"schema_version": 1, "occurred_at": bill["occurred_at"], "tenant": TENANT, "bills": [bill]}
    chunk |= {"first_bill_id": bill_id, "last_bill_id": bill_id}
    rt.put_event("sewerbill.billing", "BillsIssued", chunk, bus="EventBus")
    rt.drain()


def _pay(rt: LocalRuntime, bill_id: str, paid_on: str) -> None:
    detail = {"occurred_at": f"{paid_on}T15:00:00Z", "tenant": TENANT, "account_id": "PPS-000412"}
    rt.put_event(
        "sewerbill.billing",
        "PaymentApplied",
        detail | {"bill_id": bill_id, "paid_on": paid_on},
        bus="EventBus",
    )
    rt.drain()


def _request(bill_id: str) -> dict[str, str]:
    return {"bill_id": bill_id, "grounds": "the paving was remeasured", "asserted_amount": "25.00"}


def test_reconsiderations_change_nothing_within_10_percent_and_refund_above(
    rt: LocalRuntime, captured: Captured
) -> None:
    rt.upload("UploadsBucket", "gis/rc.csv", EXTRACT)
    _bill(rt, "B-1")
    _bill(rt, "B-2")
    captured.take()

    status, recon = call(rt, "POST", f"{BASE}/reconsiderations", owner(PARCEL), _request("B-1"))
    assert status == 200 and (recon["status"], recon["billed_eru"], recon["asserted_amount"]) == (
        "filed",
        "6.54",
        "25.00",
    )
    # Found: 28,000 sq ft impervious -> 6.11 ERU; |6.11 - 6.54| = 0.43 = 6.6% of 6.54: no change.
    status, decided = call(
        rt,
        "POST",
        f"{STAFF_BASE}/reconsiderations/{recon['reconsideration_id']}/decision",
        STAFF,
        {"outcome": "decide", "reason": "survey of 2026-09", "found": {"impervious_sqft": "28000"}},
    )
    assert status == 200 and (decided["status"], decided["eru_found"], decided["refund_amount"]) == (
        "no_change",
        "6.11",
        "0",
    )
    events = captured.take()
    assert [e["detail-type"] for e in events] == ["ReconsiderationDecided"]
    assert events[0]["detail"]["outcome"] == "no_change"

    # Found: 15,000 sq ft -> 3.83 ERU, 41% less: the ERU is corrected from the start of the
    # reconsidered bill's period (PP-CWU-RECONSIDER), so billing re-rates that month, which
    # credits (6.54 - 3.83) x 6.00 x 1 month = 16.26; no separate refund is published.
    status, recon2 = call(rt, "POST", f"{BASE}/reconsiderations", owner(PARCEL), _request("B-2"))
    status, decided2 = call(
        rt,
        "POST",
        f"{STAFF_BASE}/reconsiderations/{recon2['reconsideration_id']}/decision",
        STAFF,
        {"outcome": "decide", "reason": "half the lot is now lawn", "found": {"impervious_sqft": "15000"}},
    )
    assert status == 200 and (decided2["status"], decided2["refund_amount"]) == ("changed", "16.26")
    events = {e["detail-type"]: e["detail"] for e in captured.take()}
    assert "RefundGranted" not in events
    determined = events["ERUDetermined"]
    assert (determined["eru"], determined["previous_eru"], determined["cause"]) == (
        "3.83",
        "6.54",
        "reconsideration",
    )
    assert (
        determined["effective_from"] == "2026-09-01"  # B-2's period start, not the decision day
        and determined["breakdown"]["data_source"] == "reconsideration"
    )

    # An appeal in time carries its fee; the Board reverses only by a majority (3 of 5).
    status, appeal = call(
        rt,
        "POST",
        f"{BASE}/appeals",
        owner(PARCEL),
        {"reconsideration_id": recon["reconsideration_id"], "grounds": "the survey missed the gravel lot"},
    )
    assert status == 200 and appeal["fee"] == "50.00"
    (fee,) = [e["detail"] for e in captured.take("FeeCharged")]
    assert (fee["kind"], fee["amount"], fee["rule_id"]) == ("appeal", "50.00", "PP-CWU-APPEAL")
    hearing = {
        "hearing_date": "2026-10-01",
        "members_present": 5,
        "votes_to_reverse": 3,
        "votes_to_uphold": 2,
    }
    status, body = call(rt, "POST", f"{STAFF_BASE}/appeals/{appeal['appeal_id']}/hearing", STAFF, hearing)
    assert status == 400 and body["error"]["message"].startswith("found: a reversal states the parcel data")
    # The Board reverses and finds 20,000 sq ft impervious: CN = (20000x98 + 23560x74)/43560
    # = 85.0193, Q = 0.7962 in, 2,890.0 cu ft / 627.0084 = 4.61 ERU, from the hearing date.
    status, heard = call(
        rt,
        "POST",
        f"{STAFF_BASE}/appeals/{appeal['appeal_id']}/hearing",
        STAFF,
        hearing | {"found": {"impervious_sqft": "20000"}},
    )
    assert status == 200 and (heard["status"], heard["eru_set"], heard["effective_from"]) == (
        "reversed",
        "4.61",
        "2026-10-01",
    )
    events = captured.take()
    (outcome,) = [e["detail"] for e in events if e["detail-type"] == "AppealDecided"]
    assert (outcome["outcome"], outcome["votes_to_reverse"], outcome["eru_set"]) == ("reversed", 3, "4.61")
    (board,) = [e["detail"] for e in events if e["detail-type"] == "ERUDetermined"]
    assert (board["eru"], board["previous_eru"], board["cause"], board["cause_ref"]) == (
        "4.61",
        "3.83",
        "appeal",
        appeal["appeal_id"],
    )
    assert board["effective_from"] == "2026-10-01" and board["breakdown"]["data_source"] == "appeal"
    assert board["sequence"] == determined["sequence"] + 1
    # The same hearing again is refused (already heard) and publishes nothing.
    status, _ = call(
        rt,
        "POST",
        f"{STAFF_BASE}/appeals/{appeal['appeal_id']}/hearing",
        STAFF,
        hearing | {"found": {"impervious_sqft": "20000"}},
    )
    assert status == 409 and captured.take() == []
    # Billing keeps the Board's ERU beside the earlier ones (its projection by sequence).
    kept = rt.client("dynamodb").get_item(
        TableName=rt.resource("BillingTable"),
        Key={"pk": {"S": f"ERU#{TENANT}"}, "sk": {"S": PARCEL}},
        ConsistentRead=True,
    )["Item"]
    by_sequence = {k: v["M"]["eru"]["S"] for k, v in kept["determinations"]["M"].items()}
    assert by_sequence[f"{board['sequence']:06d}"] == "4.61"
    status, view = call(rt, "GET", f"{BASE}/eru", owner(PARCEL))
    assert status == 200 and (view["eru"], view["data_source"]) == ("4.61", "appeal")
    assert rt.dead_letters == []


def test_late_requests_and_late_appeals_are_refused_with_their_dates(
    rt: LocalRuntime, captured: Captured
) -> None:
    _bill(rt, "B-3")  # due 2026-10-21, never paid
    _bill(rt, "B-4")
    _pay(rt, "B-4", "2026-10-02")  # paid: 30 days run to 2026-11-01
    status, recon = call(rt, "POST", f"{BASE}/reconsiderations", owner(PARCEL), _request("B-4"))
    decided = call(
        rt,
        "POST",
        f"{STAFF_BASE}/reconsiderations/{recon['reconsideration_id']}/decision",
        STAFF,
        {"outcome": "deny", "reason": "the measurements stand"},
    )[1]
    assert decided["appeal_by"] == "2026-10-31"

    rt.clock.advance(to=datetime(2026, 11, 2, 14, 0, tzinfo=UTC))
    status, body = call(rt, "POST", f"{BASE}/reconsiderations", owner(PARCEL), _request("B-3"))
    assert status == 400
    assert body["error"]["message"] == (
        "filed_on: filed 2026-11-02: bill B-3 was due 2026-10-21 and is unpaid, so a request had to be "
        "filed by the due date (PP-CWU-RECONSIDER)"
    )
    status, body = call(rt, "POST", f"{BASE}/reconsiderations", owner(PARCEL), _request("B-4"))
    assert status == 400 and "paid on 2026-10-02" in body["error"]["message"]
    assert "filed by 2026-11-01" in body["error"]["message"]
    # A bill id holding the key separator names no bill: a client error, never a 500.
    for bad in ("#", "B-4#x"):
        status, body = call(rt, "POST", f"{BASE}/reconsiderations", owner(PARCEL), _request(bad))
        assert status == 400 and "bill_id" in body["error"]["message"], (bad, status, body)

    status, body = call(
        rt,
        "POST",
        f"{BASE}/appeals",
        owner(PARCEL),
        {"reconsideration_id": recon["reconsideration_id"], "grounds": "late"},
    )
    assert status == 400
    assert body["error"]["message"] == (
        "filed_on: filed 2026-11-02: the decision of 2026-10-01 could be appealed until 2026-10-31 "
        "(within 30 days; PP-CWU-APPEAL)"
    )
    assert rt.dead_letters == []


def test_staff_see_what_waits_for_a_decision_until_it_is_decided(
    rt: LocalRuntime, captured: Captured
) -> None:
    """The staff view's pending decisions (issue 14): a filed reconsideration and a credit
    application are listed, oldest first, a page at a time; a decided one leaves the list."""
    parcel = "RC-P1"
    extract = EXTRACT.replace(PARCEL, parcel)
    rt.upload("UploadsBucket", "gis/rc-pending.csv", extract)
    rt.put_event(
        "sewerbill.billing",
        "BillIssued",
        {
            "schema_version": 1,
            "occurred_at": "2026-10-01T12:00:00Z",
            "tenant": TENANT,
            "bill_id": "B-P1",
            "account_id": "PPS-000499",
            "parcel_id": parcel,
            "bill_date": "2026-10-01",
            "due_date": "2027-06-30",  # in time whatever the module's clock
            "period_start": "2026-09-01",
            "period_end": "2026-10-01",
            "total": "41.24",
        },
        bus="EventBus",
    )
    rt.drain()
    pending_path = f"/staff/{TENANT}/parcels/pending-decisions"

    def mine(page: dict[str, Any]) -> list[tuple[str, str]]:
        return [(d["kind"], d["status"]) for d in page["decisions"] if d["parcel_id"] == parcel]

    status, recon = call(
        rt, "POST", f"/parcels/{TENANT}/{parcel}/reconsiderations", owner(parcel), _request("B-P1")
    )
    assert status == 200
    status, credit = call(
        rt,
        "POST",
        f"/parcels/{TENANT}/{parcel}/credits",
        owner(parcel),
        {
            "engineer_name": "R. Lin",
            "engineer_license": "PE-1",
            "document_ref": "plan-7",
            "practice": "wet pond",
        },
    )
    assert status == 200, credit
    status, page = call(rt, "GET", pending_path, STAFF)
    # Oldest filed first; filed the same day, by kind.
    assert status == 200 and mine(page) == [("credit", "submitted"), ("reconsideration", "filed")]
    assert page["next_cursor"] is None
    (listed,) = [d for d in page["decisions"] if d["id"] == recon["reconsideration_id"]]
    assert (listed["owner_name"], listed["filed_on"]) == ("Lakeview Commerce LLC", recon["filed_on"])

    # One at a time: the pages, joined, are the whole list, in the same order.
    walked, cursor = [], None
    while True:
        query = f"?limit=1&cursor={cursor}" if cursor else "?limit=1"
        status, one = call(rt, "GET", pending_path + query, STAFF)
        assert status == 200 and len(one["decisions"]) <= 1
        walked += one["decisions"]
        cursor = one["next_cursor"]
        if cursor is None:
            break
    assert walked == page["decisions"]

    # Decided: it no longer waits; the credit still does.
    status, _ = call(
        rt,
        "POST",
        f"/staff/{TENANT}/parcels/{parcel}/reconsiderations/{recon['reconsideration_id']}/decision",
        STAFF,
        {"outcome": "deny", "reason": "the measurements stand"},
    )
    assert status == 200
    status, page = call(rt, "GET", pending_path, STAFF)
    assert mine(page) == [("credit", "submitted")]

    # Staff only, and only their tenant's; an owner is refused in the error shape.
    status, refused = call(rt, "GET", pending_path, owner(parcel))
    assert status == 403 and refused["error"]["code"] == "forbidden"
    other = {"sub": "grafton-clerk", "role": "staff", "tenants": ["grafton-sewer"]}
    assert call(rt, "GET", pending_path, other)[0] == 403
    captured.take()
    assert rt.dead_letters == []
