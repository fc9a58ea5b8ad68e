"""Concurrency shows up locally (issue 26): the same work run with the runtime's sources at
once (``concurrency="concurrent"``, as `sewerbill local up` runs them and AWS would: the
functions side by side, each up to its source's MaximumConcurrency) and one after another
(``"sequential"``) leaves the same stored outcome.

The work, all queued before one drain: the same new accounts file uploaded twice (two first
versions of the same accounts racing), Grafton's Q4 2027 cycle, and two first determinations
of GR-1's Q1 2028 consumption (the race billing's projection settles: the later one stays,
whichever is written first). The outcome compared: each account's bills and ledger total
(staff routes), the consumptions billing keeps, and the events on the bus by business key.
Whatever the interleaving, these must be equal, so the assertion does not depend on timing;
that the concurrent run did run at once is read from the workers it started."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from billing_support import staff_get

from metering.events import ConsumptionDetermined
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
HEADER = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,parcel_id,owner_name\n"
BILLED = HEADER + (
    "grafton-sewer,GR-1,Ann,1 Main St,1 Main St,53024,2027-07-01,residential,5/8,GP-1,Ann\n"
    "grafton-sewer,GR-2,Bob,2 Main St,2 Main St,53024,2027-07-01,residential,5/8,GP-2,Bob\n"
    "grafton-sewer,GR-3,Cy,3 Main St,3 Main St,53024,2027-07-01,residential,5/8,GP-3,Cy\n"
)
NEW = HEADER + (
    "grafton-sewer,GR-4,Di,4 Main St,4 Main St,53024,2027-12-15,residential,5/8,GP-4,Di\n"
    "grafton-sewer,GR-5,Ed,5 Main St,5 Main St,53024,2027-12-15,residential,5/8,GP-5,Ed\n"
)
ACCOUNTS = [f"GR-{n}" for n in range(1, 6)]
AT = datetime(2028, 1, 1, 13, tzinfo=UTC)  # after the cycle's 06:00 Chicago: nothing fires itself


def consumption(account: str, gallons: int, start: date, end: date, at: datetime) -> ConsumptionDetermined:
    return ConsumptionDetermined(
        occurred_at=at,
        tenant="grafton-sewer",
        account_id=account,
        period_start=start,
        period_end=end,
        volume_gal=gallons,
        source_file=f"reads/{account}-{at:%H%M}.csv",
    )


Q4 = [consumption(a, g, date(2027, 10, 1), date(2028, 1, 1), AT) for a, g in (("GR-1", 23000), ("GR-2", 0))]
# two first determinations of one period, the later one (12:30) the one to keep
Q1 = [
    consumption("GR-1", 5000, date(2028, 1, 1), date(2028, 4, 1), datetime(2028, 1, 1, 12, tzinfo=UTC)),
    consumption("GR-1", 6000, date(2028, 1, 1), date(2028, 4, 1), datetime(2028, 1, 1, 12, 30, tzinfo=UTC)),
]


def put(rt: LocalRuntime, event: Any) -> None:
    rt.put_event(event.SOURCE, event.detail_type(), json.loads(event.detail_json()), bus="EventBus")


def watch_bus(rt: LocalRuntime) -> str:
    """A queue catching every event on the stack's bus, as an operator's rule would."""
    sqs, events = rt.client("sqs"), rt.client("events")
    url = sqs.create_queue(QueueName=f"{rt.stack.name}-watch")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    bus = rt.resource("EventBus")
    events.put_rule(Name="watch-all", EventBusName=bus, EventPattern='{"source": [{"prefix": ""}]}')
    events.put_targets(Rule="watch-all", EventBusName=bus, Targets=[{"Id": "watch", "Arn": arn}])
    return str(url)


def events_by_key(rt: LocalRuntime, url: str) -> set[tuple[Any, ...]]:
    """Each event seen on the bus by its type and business key (a chunk of bills by each bill),
    with what it says of money; delivered once or more, as EventBridge delivers."""
    sqs = rt.client("sqs")
    seen: set[tuple[Any, ...]] = set()
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        for m in messages:
            event = json.loads(m["Body"])
            kind, detail = event["detail-type"], event["detail"]
            for one in detail.get("bills") or [detail]:
                seen.add(
                    (
                        kind,
                        *(str(one.get(k)) for k in ("tenant", "account_id", "period_start", "bill_id")),
                        str(one.get("total")),
                        str(one.get("volume_gal")),
                    )
                )
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return seen


def outcome(rt: LocalRuntime, url: str) -> dict[str, Any]:
    tenant = "grafton-sewer"
    bills = {
        a: sorted(
            (b["period"]["start"], b["total"], b["amount_due"])
            for b in staff_get(rt, f"/staff/{tenant}/accounts/{a}/bills", tenant)["bills"]
        )
        for a in ACCOUNTS
    }
    ledger = {
        a: sum(
            Decimal(e["amount"])
            for e in staff_get(rt, f"/staff/{tenant}/accounts/{a}/ledger", tenant)["entries"]
        )
        for a in ACCOUNTS
    }
    items = rt.client("dynamodb").scan(TableName=rt.resource("BillingTable"))["Items"]
    usage = sorted(
        (i["pk"]["S"], i["sk"]["S"], i["volume_gal"]["S"], i["source_event_id"]["S"])
        for i in items
        if i["pk"]["S"].startswith("USAGE#")
    )
    return {"bills": bills, "ledger": ledger, "usage": usage, "events": events_by_key(rt, url)}


def run(concurrency: str) -> tuple[dict[str, Any], dict[str, int]]:
    stage = f"race-{concurrency}"
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=AT,
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": stage},
        stack_name=stage,
        concurrency=concurrency,
    ) as rt:
        rt.upload("UploadsBucket", "accounts/2027.csv", BILLED)
        for event in Q4:
            put(rt, event)
        rt.drain()
        url = watch_bus(rt)
        # at the same time: the new accounts twice, the cycle, two first determinations
        rt.upload("UploadsBucket", "accounts/2027-12-new.csv", NEW, drain=False)
        rt.upload("UploadsBucket", "accounts/2027-12-new-again.csv", NEW, drain=False)
        rt.send(
            "BillingRunBillingCycleQueue",
            {"tenant": "grafton-sewer", "scheduled_time": "2028-01-01T12:00:00Z"},
        )
        for event in Q1:
            put(rt, event)
        rt.drain()
        found = outcome(rt, url)
        assert rt.dead_letters == []
        return found, {f: rt.invoker.workers_started(f) for f in rt.stack.functions}


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, tuple[dict[str, Any], dict[str, int]]]]:
    yield {mode: run(mode) for mode in ("sequential", "concurrent")}


def test_the_work_at_once_leaves_what_it_leaves_one_after_another(runs: dict[str, Any]) -> None:
    (sequential, _), (concurrent, _) = runs["sequential"], runs["concurrent"]
    assert concurrent == sequential
    # and it is the outcome expected: GR-1 and GR-2 billed for Q4, GR-3 held, GR-4 and GR-5
    # opened after it; GR-1's Q1 consumption the later determination
    assert {a: [(p, t) for p, t, _ in b] for a, b in sequential["bills"].items()} == {
        "GR-1": [("2027-10-01", "194.50")],
        "GR-2": [("2027-10-01", "45.00")],
        "GR-3": [],
        "GR-4": [],
        "GR-5": [],
    }
    q1 = [u for u in sequential["usage"] if u[0].startswith("USAGE#grafton-sewer#2028-01-01")]
    assert [(sk, volume, event_id) for _, sk, volume, event_id in q1] == [("GR-1", "6000", Q1[1].event_id)]


def test_the_concurrent_run_ran_invocations_at_once(runs: dict[str, Any]) -> None:
    # the two uploads' messages were taken by two invocations at once, each in a worker of
    # its own (and the two determinations' likewise); one after another, one worker each
    _, concurrent = runs["concurrent"]
    _, sequential = runs["sequential"]
    assert concurrent["BillingOnFileUploadedFunction"] == 2
    assert concurrent["BillingOnConsumptionDeterminedFunction"] == 2
    assert max(sequential.values()) == 1
