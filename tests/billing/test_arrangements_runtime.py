"""Payment arrangements, disconnection eligibility (GR-OVERDUE) and back-dated lockbox
payments (GR-LATE, X-DUE, X-IMMUTABLE) through the local runtime on moto server (the real
template.yaml): the staff routes on the gateway with a minted token, lockbox uploads, the
daily assessment as the simulated clock passes the days, across 2028-02-29."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from metering.events import ConsumptionDetermined
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
TENANT = "grafton-sewer"
HEADER = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,parcel_id,owner_name\n"
ACCOUNTS = HEADER + (
    "grafton-sewer,GR-1,Ann,1 Main St,1 Main St,53024,2027-07-01,residential,5/8,GP-1,Ann\n"
    "grafton-sewer,GR-2,Bob,2 Main St,2 Main St,53024,2027-07-01,residential,5/8,GP-2,Bob\n"
    "grafton-sewer,GR-3,Cy,3 Main St,3 Main St,53024,2027-07-01,residential,5/8,GP-3,Cy\n"
)
LOCKBOX = "tenant,account_id,reference,paid_on,amount\n"


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    # 2027-12-31 is a Friday; the Grafton cycle fires on Saturday 2028-01-01.
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2027, 12, 31, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": "billing-arrange"},
        stack_name="billing-arrange",
    ) as runtime:
        yield runtime


def staff(rt: LocalRuntime, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    token = rt.mint_token(sub="clerk", claims={"role": "staff", "tenants": [TENANT]})
    req = urllib.request.Request(
        rt.gateway_url + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - the local gateway
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def ledger(rt: LocalRuntime, account: str) -> list[dict[str, Any]]:
    status, body = staff(rt, "GET", f"/staff/{TENANT}/accounts/{account}/ledger")
    assert status == 200
    entries: list[dict[str, Any]] = body["entries"]
    return entries


def published(rt: LocalRuntime, detail_type: str) -> list[dict[str, Any]]:
    """Billing's events of one type, from its outbox (the stream publishes each once)."""
    ddb = rt.client("dynamodb")
    table = rt.resource("BillingTable")
    found: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {
        "TableName": table,
        # the outbox's items only: the audit store keeps a copy of each event too (AUDIT#)
        "FilterExpression": "detail_type = :t AND begins_with(pk, :outbox)",
        "ExpressionAttributeValues": {":t": {"S": detail_type}, ":outbox": {"S": "OUTBOX#"}},
    }
    while True:
        page = ddb.scan(**kwargs)
        found += [json.loads(i["detail"]["S"]) for i in page.get("Items", [])]
        if "LastEvaluatedKey" not in page:
            return found
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_arrangements_and_backdated_payments_on_the_local_runtime(rt: LocalRuntime) -> None:
    rt.upload("UploadsBucket", "accounts/2027.csv", ACCOUNTS)
    for account, gallons in (("GR-1", 23000), ("GR-2", 0), ("GR-3", 23000)):
        event = ConsumptionDetermined(
            occurred_at=datetime(2027, 12, 31, 12, tzinfo=UTC),
            tenant=TENANT,
            account_id=account,
            period_start=date(2027, 10, 1),
            period_end=date(2028, 1, 1),
            volume_gal=gallons,
            source_file="reads/2027-q4.csv",
        )
        rt.put_event(event.SOURCE, event.detail_type(), json.loads(event.detail_json()), bus="EventBus")
    rt.drain()
    # Saturday 2028-01-01: GR-1 and GR-3 194.50 (45.00 + 23 x 6.50), GR-2 45.00.
    rt.clock.advance(to=datetime(2028, 1, 1, 13, tzinfo=UTC))
    # Saturday 01-22, day 21: GR-LATE 3%: 5.84 on 194.50, 1.35 on 45.00; the overdue notice.
    rt.clock.advance(to=datetime(2028, 1, 22, 14, tzinfo=UTC))
    assert [e["amount"] for e in ledger(rt, "GR-1") if e["kind"] == "late_charge"] == ["5.84"]

    # Monday 01-24 the lockbox file comes: GR-1 paid 194.50 on day 19 (Thu 01-20), GR-3 150.00
    # on day 18. Posted twice: posts and reverses once.
    rt.clock.advance(to=datetime(2028, 1, 24, 15, tzinfo=UTC))
    rows = (
        LOCKBOX + "grafton-sewer,GR-1,LBX-1,2028-01-20,194.50\ngrafton-sewer,GR-3,LBX-2,2028-01-19,150.00\n"
    )
    rt.upload("UploadsBucket", "payments/2028-01-24.csv", rows)
    rt.upload("UploadsBucket", "payments/2028-01-24-again.csv", rows)
    gr1 = ledger(rt, "GR-1")
    [charge] = [e for e in gr1 if e["kind"] == "late_charge"]
    # GR-1: the whole 5.84 reversed by an adjustment referring to the charge; balance 0.
    assert [(e["amount"], e["posted_on"], e["reference"]) for e in gr1 if e["kind"] == "adjustment"] == [
        ("-5.84", "2028-01-24", charge["entry_id"])
    ]
    assert "LBX-1 dated 2028-01-20" in next(e for e in gr1 if e["kind"] == "adjustment")["description"]
    assert sum(float(e["amount"]) for e in gr1) == pytest.approx(0)
    # GR-3: 194.50 - 150.00 = 44.50 unpaid by day 20; 3% = 1.335 -> 1.34; 5.84 - 1.34 = 4.50.
    gr3 = ledger(rt, "GR-3")
    assert [e["amount"] for e in gr3 if e["kind"] == "adjustment"] == ["-4.50"]

    # GR-2 (45.00 + 1.35) arranges on Friday 01-28, before its eligibility on Tue 02-01:
    # 20.00 by Tue 02-15 (paid), 26.35 by Mon 02-28 (missed).
    rt.clock.advance(to=datetime(2028, 1, 28, 15, tzinfo=UTC))
    status, made = staff(
        rt,
        "POST",
        f"/staff/{TENANT}/accounts/GR-2/arrangements",
        {
            "arrangement_id": "ARR-GR2",
            "instalments": [
                {"due_on": "2028-02-15", "amount": "20.00"},
                {"due_on": "2028-02-28", "amount": "26.35"},
            ],
            "end_on": "2028-03-31",
            "approver": "supervisor",
        },
    )
    assert status == 200 and made["made_on"] == "2028-01-28"
    rt.clock.advance(to=datetime(2028, 2, 15, 15, tzinfo=UTC))
    rt.upload(
        "UploadsBucket", "payments/2028-02-15.csv", LOCKBOX + "grafton-sewer,GR-2,LBX-3,2028-02-15,20.00\n"
    )
    rt.clock.advance(to=datetime(2028, 2, 28, 15, tzinfo=UTC))
    assert [e for e in published(rt, "DisconnectionEligible") if e["account_id"] == "GR-2"] == []
    # The leap day: the instalment of 02-28 was missed; eligible from Tuesday 2028-02-29.
    rt.clock.advance(to=datetime(2028, 3, 2, 15, tzinfo=UTC))
    events = published(rt, "DisconnectionEligible")
    assert sorted((e["account_id"], e["eligible_on"], e["amount_unpaid"], e["reason"]) for e in events) == [
        # X-ALLOCATION: the 20.00 pays the 1.35 late charge first, 18.65 of the 45.00 charges
        ("GR-2", "2028-02-29", "26.35", "arrangement_broken"),  # 45.00 - 18.65
        ("GR-3", "2028-02-01", "44.50", "notice_period_ended"),  # never arranged
    ]
    status, page = staff(rt, "GET", f"/staff/{TENANT}/accounts/GR-2/arrangements")
    assert status == 200
    assert [(a["arrangement_id"], a["status"], a["broken_on"]) for a in page["arrangements"]] == [
        ("ARR-GR2", "broken", "2028-02-29")
    ]
    # Notices: GR-2's overdue notice of day 21, then a fresh disconnection notice dated the
    # leap day for the broken arrangement; GR-3's eligibility was announced by its notice.
    rt.drain()
    status, log2 = staff(rt, "GET", f"/staff/{TENANT}/accounts/GR-2/notices")
    assert status == 200
    assert sorted(n["trigger"].split("#")[0] for n in log2["notices"] if n["rule_id"] == "GR-OVERDUE") == [
        "BillOverdue",
        "DisconnectionEligible",
    ]
    _, log3 = staff(rt, "GET", f"/staff/{TENANT}/accounts/GR-3/notices")
    assert [n["trigger"].split("#")[0] for n in log3["notices"] if n["rule_id"] == "GR-OVERDUE"] == [
        "BillOverdue"
    ]
    # The reversals of 01-24 were published as BillAdjusted (kind reversal), once each for
    # the file posted twice; GR-1 is mailed one credit memo.
    reversals = published(rt, "BillAdjusted")
    assert sorted((r["account_id"], r["kind"], r["amount"]) for r in reversals) == [
        ("GR-1", "reversal", "-5.84"),
        ("GR-3", "reversal", "-4.50"),
    ]
    _, log1 = staff(rt, "GET", f"/staff/{TENANT}/accounts/GR-1/notices")
    assert [(n["rule_id"], n["channel"]) for n in log1["notices"] if n["rule_id"] == "X-IMMUTABLE"] == [
        ("X-IMMUTABLE", "mail")
    ]

    # Friday 03-03 a lockbox file, posted twice, brings payments dated before both
    # eligibilities: GR-2's 26.35 instalment paid Mon 02-28 (so the arrangement never broke
    # and 20.00 + 26.35 = 46.35 paid the 45.00 bill and its 1.35 late charge), and GR-3's
    # 45.84 (44.50 + 1.34) paid Mon 01-31, the last of its 10 days. Both eligibilities are
    # withdrawn as never held, once, at posting.
    rt.clock.advance(to=datetime(2028, 3, 3, 15, tzinfo=UTC))
    rows = LOCKBOX + "grafton-sewer,GR-2,LBX-4,2028-02-28,26.35\ngrafton-sewer,GR-3,LBX-5,2028-01-31,45.84\n"
    rt.upload("UploadsBucket", "payments/2028-03-03.csv", rows)
    rt.upload("UploadsBucket", "payments/2028-03-03-again.csv", rows)
    rt.clock.advance(to=datetime(2028, 3, 4, 15, tzinfo=UTC))  # and the next daily assessment
    withdrawn = published(rt, "DisconnectionEligibilityWithdrawn")
    assert sorted(
        (w["account_id"], w["eligible_on"], w["ended_on"], w["never_held"], w["reason"], w["withdrawn_on"])
        for w in withdrawn
    ) == [
        ("GR-2", "2028-02-29", "2028-02-29", True, "paid", "2028-03-03"),
        ("GR-3", "2028-02-01", "2028-02-01", True, "paid", "2028-03-03"),
    ]
    # Notices: each customer was sent a notice announcing the eligibility (GR-2 its own
    # disconnection notice, GR-3 the overdue notice), so each gets one letter withdrawing it.
    rt.drain()
    for account in ("GR-2", "GR-3"):
        _, log = staff(rt, "GET", f"/staff/{TENANT}/accounts/{account}/notices")
        letters = [n for n in log["notices"] if n["trigger"].startswith("DisconnectionEligibilityWithdrawn#")]
        assert [(n["rule_id"], n["channel"], n["status"]) for n in letters] == [
            ("GR-OVERDUE", "mail", "sent")
        ]
    assert rt.dead_letters == []
