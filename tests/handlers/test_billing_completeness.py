"""X-PERIOD completeness on billing's handlers (moto, in-process): every account-period from
the account's first period is billed, held with a reason naming what is missing and who can
supply it, or not yet due (issue 26).

Pleasant Prairie sewer bills monthly; its cycle on the first of a month bills the month
just ended and, for each account, every earlier month from its first one still unbilled.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from handler_support import Stack, authorized_http_event, eventbridge_body, lambda_context, sqs_event
from test_billing_flow import flow, of, upload  # noqa: F401
from test_billing_late_eru import deliver, eru

from billing.handlers import api, issue_bills, on_consumption_determined, run_billing_cycle
from common import clock
from metering.events import ConsumptionDetermined

PP = "pleasant-prairie-sewer"
SW = "pleasant-prairie-stormwater"
HEADER = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,zone,meter_size,parcel_id,bills_from"


def line(account: str, opened_on: str, bills_from: str = "", tenant: str = PP) -> str:
    if tenant == SW:
        return f"{SW},{account},Lakeview,9 Lake Rd,9 Lake Rd,53158,{opened_on},residential,,,P-1,{bills_from}"
    return f"{PP},{account},Ada,1 Green Bay Rd,1 Green Bay Rd,53158,{opened_on},nonresidential,PP,5/8,,{bills_from}"


@pytest.fixture
def at() -> Iterator[clock.FixedClock]:
    fixed = clock.FixedClock(datetime(2026, 4, 1, 13, tzinfo=UTC))  # Wed 04-01, 08:00 local
    clock.install(fixed)
    yield fixed
    clock.install(None)


def consume(account: str, month: int, gallons: int) -> None:
    start = date(2026, month, 1)
    event = ConsumptionDetermined(
        occurred_at=datetime(2026, 4, 1, 12, tzinfo=UTC),
        tenant=PP,
        account_id=account,
        period_start=start,
        period_end=date(2026, month + 1, 1),
        volume_gal=gallons,
        source_file="reads/q1.csv",
    )
    on_consumption_determined.lambda_handler(sqs_event(eventbridge_body(event)), lambda_context())


def cycle(stack: Stack, tenant: str, at: str = "2026-04-01T16:00:00Z") -> None:
    """The cycle schedule, then every chunk message it sent (as the queue would deliver)."""
    run_billing_cycle.lambda_handler(
        sqs_event(json.dumps({"tenant": tenant, "scheduled_time": at})), lambda_context()
    )
    queue = stack.issue_queue_url  # type: ignore[attr-defined]
    while msgs := stack.sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", []):
        for m in msgs:
            issue_bills.lambda_handler(sqs_event(m["Body"]), lambda_context())
            stack.sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])


def bills(stack: Stack, tenant: str = PP) -> list[tuple[str, str, str]]:
    return sorted((b["account_id"], b["period_start"], b["total"]) for b in of(stack, f"BILLS#{tenant}"))


def held(stack: Stack, tenant: str = PP) -> list[tuple[str, str]]:
    return sorted(
        (h["account_id"] if "account_id" in h else h["sk"].split("#")[0], h["period_start"])
        for h in of(stack, f"HELD#{tenant}")
    )


def staff(path: str, tenant: str = PP, **kw: Any) -> tuple[int, Any]:
    claims = {"sub": "clerk", "role": "staff", "tenants": f"[{tenant}]"}
    response = api.lambda_handler(authorized_http_event("GET", path, claims, **kw), lambda_context())
    text = response["body"]
    return response["statusCode"], json.loads(text) if text.startswith(("{", "[")) else text


def test_an_account_loaded_late_is_billed_for_its_back_months_by_the_next_cycle(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    # Opened in January, loaded on April 1 with its January to March consumption on file.
    upload(flow, "accounts/late.csv", HEADER + "\n" + line("PPS-1", "2026-01-05") + "\n")
    for month, gallons in ((1, 3000), (2, 4000), (3, 5000)):
        consume("PPS-1", month, gallons)
    cycle(flow, PP)
    billed = bills(flow)
    assert [(a, start) for a, start, _ in billed] == [
        ("PPS-1", "2026-01-01"),
        ("PPS-1", "2026-02-01"),
        ("PPS-1", "2026-03-01"),
    ]
    assert {b["bill_id"] for b in of(flow, f"BILLS#{PP}")} == {
        "PPS-1-2026-01-01",
        "PPS-1-2026-02-01",
        "PPS-1-2026-03-01",
    }
    # more water, a bigger bill: each month rated on its own consumption
    totals = [Decimal(t) for _, _, t in billed]
    assert totals == sorted(totals) and len(set(totals)) == 3
    assert held(flow) == []
    # The cycle run again bills nothing new (one bill per account and period).
    before = [i for i in flow.items("billing") if i["pk"].startswith(("BILLS#", "LEDGER#", "OUTBOX#"))]
    cycle(flow, PP)
    assert [
        i for i in flow.items("billing") if i["pk"].startswith(("BILLS#", "LEDGER#", "OUTBOX#"))
    ] == before


def test_bills_from_is_the_first_month_billed_and_a_bad_one_is_that_lines_rejection(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    lines = [
        line("PPS-1", "2026-01-05", "2026-03-01"),  # go-live: January and February billed before
        line("PPS-2", "2026-01-05", "2026-03-15"),  # not a period start
        line("PPS-3", "2026-02-05", "2026-01-01"),  # before the month of opened_on
        line("PPS-4", "2026-01-05", "2026-05-01"),  # in the future
        line("PPS-5", "2010-01-05", "2014-01-01"),  # before the tenant's first tariff (2015-06-01)
    ]
    upload(flow, "accounts/golive.csv", HEADER + "\n" + "\n".join(lines) + "\n")
    assert [a["sk"] for a in of(flow, f"ACCOUNTS#{PP}")] == ["PPS-1"]
    report = [
        json.loads(row)
        for o in flow.s3.list_objects_v2(Bucket=flow.s3.list_buckets()["Buckets"][0]["Name"])["Contents"]
        if o["Key"].startswith("reports/billing/accounts/golive.csv")
        for row in flow.s3.get_object(Bucket=flow.s3.list_buckets()["Buckets"][0]["Name"], Key=o["Key"])[
            "Body"
        ]
        .read()
        .decode()
        .splitlines()
    ]
    assert [(r["line"], r["column"]) for r in report] == [(n, "bills_from") for n in (3, 4, 5, 6)]
    for month in (1, 2, 3):
        consume("PPS-1", month, 3000)
    cycle(flow, PP)
    assert [(a, start) for a, start, _ in bills(flow)] == [("PPS-1", "2026-03-01")]
    assert held(flow) == []  # January and February: neither billed nor held (the old system's)
    status, body = staff(f"/staff/{PP}/reports/unbilled")
    assert status == 200 and body["rows"] == []


def test_a_parcels_first_determination_covers_the_month_its_account_was_loaded_for(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    # The GIS extract and the accounts file come in on the morning of the cycle: the first
    # determination takes effect on the upload date, yet it covers the unbilled March.
    upload(flow, "accounts/sw.csv", HEADER + "\n" + line("PPW-1", "2026-03-01", tenant=SW) + "\n")
    deliver(eru(1, date(2026, 4, 1), "1.00"))
    cycle(flow, SW)
    # PP-CWU-BASE 2.00 + 1.00 ERU x 6.00 = 8.00
    assert bills(flow, SW) == [("PPW-1", "2026-03-01", "8.00")]
    assert held(flow, SW) == []
    # A later determination takes effect on its date (prorated, X-PERIOD): April is billed
    # 1.00 ERU for April 1-15 and 2.00 ERU from April 16.
    deliver(eru(2, date(2026, 4, 16), "2.00"))
    at.set(datetime(2026, 5, 1, 13, tzinfo=UTC))
    cycle(flow, SW, "2026-05-01T16:00:00Z")
    [april] = [b for b in of(flow, f"BILLS#{SW}") if b["period_start"] == "2026-04-01"]
    assert [ln["amount"] for ln in april["lines"] if ln["rule_id"] == "PP-CWU-ERU"] == ["3.00", "6.00"]


def test_the_unbilled_report_lists_held_and_not_yet_due_months_and_nothing_billed(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    upload(
        flow,
        "accounts/a.csv",
        HEADER + "\n" + line("PPS-1", "2026-03-01") + "\n" + line("PPS-2", "2026-03-01") + "\n",
    )
    consume("PPS-1", 3, 3000)
    cycle(flow, PP)
    # After the cycle, an account opened in February is loaded: not yet seen by a cycle.
    upload(flow, "accounts/b.csv", HEADER + "\n" + line("PPS-3", "2026-02-10") + "\n")
    status, body = staff(f"/staff/{PP}/reports/unbilled")
    assert status == 200 and body["report"] == "unbilled"
    rows = [(r["account_id"], r["period_start"], r["period_end"], r["status"]) for r in body["rows"]]
    assert rows == [
        ("PPS-2", "2026-03-01", "2026-04-01", "held"),
        ("PPS-3", "2026-02-01", "2026-03-01", "not_yet_due"),
        ("PPS-3", "2026-03-01", "2026-04-01", "not_yet_due"),
    ]
    pps2 = body["rows"][0]
    assert pps2["reason"] == (
        "no consumption for 2026-03-01..2026-04-01 from metering: waiting for a read of the account's meter"
    )
    assert pps2["who_can_supply"].startswith("metering")
    status, text = staff(f"/staff/{PP}/reports/unbilled", query={"format": "csv"})
    assert status == 200
    assert text.splitlines()[0] == "account_id,period_start,period_end,status,reason,who_can_supply"
    assert len(text.splitlines()) == 4 and "PPS-1" not in text
    # The cycle's summary lists the held account with its reason and who can supply it.
    _, summary = staff(f"/staff/{PP}/cycles/2026-03-01")
    assert summary["held"] == [
        {"account_id": "PPS-2", "reason": pps2["reason"], "who_can_supply": pps2["who_can_supply"]}
    ]


def test_x_period_a_redelivered_chunk_counts_its_back_period_bills_in_its_summary(
    flow: Stack,  # noqa: F811
    at: clock.FixedClock,
) -> None:
    """A chunk's summary (bills, total) counts every bill the run issued for its accounts,
    back periods included (X-PERIOD): a redelivery after its bills were issued (a crash
    before the ack) reports what a run without the redelivery reported."""
    upload(flow, "accounts/late.csv", HEADER + "\n" + line("PPS-1", "2026-01-05") + "\n")
    for month, gallons in ((1, 3000), (2, 4000), (3, 5000)):
        consume("PPS-1", month, gallons)
    run_billing_cycle.lambda_handler(
        sqs_event(json.dumps({"tenant": PP, "scheduled_time": "2026-04-01T16:00:00Z"})), lambda_context()
    )
    queue = flow.issue_queue_url  # type: ignore[attr-defined]
    (message,) = flow.sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]

    def summaries() -> list[tuple[str, Any, str]]:
        return [(s["sk"], s["bills"], s["total"]) for s in of(flow, f"CYCLE#{PP}") if "#CHUNK#" in s["sk"]]

    issue_bills.lambda_handler(sqs_event(message["Body"]), lambda_context())
    once = summaries()
    expected = sum((Decimal(t) for _, _, t in bills(flow)), Decimal("0.00"))
    assert [(n, Decimal(t)) for _, n, t in once] == [(3, expected)]
    issue_bills.lambda_handler(sqs_event(message["Body"]), lambda_context())  # redelivered
    assert summaries() == once
    assert len(bills(flow)) == 3
