"""The real template on the local runtime (moto server): where failures end, and whose time
a handler sees.

- A permanent fault (a message no retry can fix) is acknowledged at once and published as
  ``MessageRejected``; a transient one is retried and, after the queue's maxReceiveCount
  (5), reaches the consumer's DLQ (STYLE 11; common.handling.consume_sqs).
- No environment variable moves a handler's clock: the runtime drives time by sending its
  simulated time with each invocation (installed in the function's own common.clock);
  without it a handler runs on the system clock, as deployed.

The tests change a function's configuration (`rt.invoker.configure`), as one would a
deployed function's, so they hold whichever way the runtime keeps functions apart
(a process per function, the default, or `SEWERBILL_LOCAL_ISOLATE=modules`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CONSUMER = "BillingOnConsumptionDeterminedFunction"


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2025, 2, 1, tzinfo=UTC),
        # Its own stage, so its names do not meet another module's stack on the same moto.
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": "failures"},
        stack_name="failures",
    ) as runtime:
        yield runtime


@pytest.fixture(scope="module")
def rejections(rt: LocalRuntime) -> str:
    """A queue catching every MessageRejected on the bus, as an operator's rule would."""
    sqs, events = rt.client("sqs"), rt.client("events")
    url = sqs.create_queue(QueueName="failures-rejections-watch")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    bus = rt.resource("EventBus")
    events.put_rule(
        Name="rejections-watch", EventBusName=bus, EventPattern='{"detail-type": ["MessageRejected"]}'
    )
    events.put_targets(Rule="rejections-watch", EventBusName=bus, Targets=[{"Id": "watch", "Arn": arn}])
    return str(url)


def read_all(rt: LocalRuntime, url: str) -> list[dict[str, Any]]:
    sqs = rt.client("sqs")
    found = []
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        for m in messages:
            found.append(json.loads(m["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return found


def messages_left(rt: LocalRuntime, queue: str) -> int:
    attrs = rt.client("sqs").get_queue_attributes(
        QueueUrl=rt.resource(queue),
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])


def consumption(account_id: str) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "event_id": f"evt-{account_id}",
        "occurred_at": "2025-02-01T00:00:00Z",
        "correlation_id": f"upload-{account_id}",
        "tenant": "grafton-sewer",
        "account_id": account_id,
        "period_start": "2025-01-01",
        "period_end": "2025-02-01",
        "volume_gal": 1000,
        "source_file": "reads/x.csv",
    }


def test_a_permanent_fault_is_acknowledged_once_and_published_as_a_rejection(
    rt: LocalRuntime, rejections: str
) -> None:
    malformed = consumption("GR-BAD")
    del malformed["volume_gal"]
    before = len(rt.invocations_of(CONSUMER))

    rt.put_event("sewerbill.metering", "ConsumptionDetermined", malformed, bus="EventBus")
    rt.drain()

    runs = rt.invocations_of(CONSUMER)[before:]
    assert [(r.records, r.failures, r.error) for r in runs] == [(1, 0, None)]  # received once, not retried
    assert messages_left(rt, "BillingOnConsumptionDeterminedQueue") == 0
    assert messages_left(rt, "BillingOnConsumptionDeterminedDLQ") == 0
    assert not [d for d in rt.dead_letters if d.queue == "BillingOnConsumptionDeterminedDLQ"]
    [rejected] = read_all(rt, rejections)
    assert rejected["source"] == "sewerbill.billing"
    assert rejected["detail"]["error"] == "MalformedMessage"
    assert "volume_gal" in rejected["detail"]["reason"]
    assert rejected["detail"]["correlation_id"] == "upload-GR-BAD"  # the chain it belonged to
    # Recorded at the simulated time of the runtime, not the machine's.
    assert rejected["detail"]["occurred_at"].startswith(rt.clock.now.date().isoformat())


def test_a_transient_fault_is_retried_and_reaches_the_dlq_after_max_receive_count(
    rt: LocalRuntime, rejections: str
) -> None:
    # DynamoDB "down" for this one function: its configuration points its DynamoDB client at
    # a port nothing listens on (one attempt per call), so boto3 raises what it raises when
    # it cannot connect. Its next invocation is a cold start with that configuration.
    rt.invoker.configure(
        CONSUMER, {"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1"}
    )
    before = len(rt.invocations_of(CONSUMER))
    try:
        rt.put_event("sewerbill.metering", "ConsumptionDetermined", consumption("GR-DOWN"), bus="EventBus")
        rt.drain()
    finally:
        rt.invoker.configure(CONSUMER)  # as the template says again

    runs = rt.invocations_of(CONSUMER)[before:]
    max_receive_count = 5  # template.yaml: RedrivePolicy.maxReceiveCount
    assert [(r.records, r.failures) for r in runs] == [(1, 1)] * max_receive_count
    [dead] = [d for d in rt.dead_letters if d.queue == "BillingOnConsumptionDeterminedDLQ"]
    assert json.loads(dead.body)["detail"]["account_id"] == "GR-DOWN"
    assert messages_left(rt, "BillingOnConsumptionDeterminedQueue") == 0
    assert read_all(rt, rejections) == []  # a transient fault is not a rejection


def test_no_environment_variable_moves_the_clock_the_runtime_drives(rt: LocalRuntime) -> None:
    # Variables a deployed function could be given (UpdateFunctionConfiguration); the
    # handler sees them and must ignore them for time.
    function = "BillingRunBillingCycleFunction"
    rt.invoker.configure(
        function, {"SEWERBILL_SIMULATED_NOW": "2031-06-01T00:00:00+00:00", "FAKETIME": "2031-06-01 00:00:00"}
    )
    try:
        # Grafton's quarterly cycle fires at 2025-04-01 11:00 UTC (06:00 in Chicago).
        rt.clock.advance(to=datetime(2025, 4, 1, 12, 0, tzinfo=UTC))
    finally:
        rt.invoker.configure(function)

    [cycle] = [c for c in cycles(rt) if c["tenant"]["S"] == "grafton-sewer"]
    assert cycle["recorded_at"]["S"].startswith("2025-04-01T11:00")


def test_a_deployed_style_function_runs_on_the_system_clock_whatever_its_environment(
    rt: LocalRuntime,
) -> None:
    function = "BillingRunBillingCycleFunction"
    # As deployed: nothing installs a clock in the function's process, whatever its variables.
    rt.invoker.configure(
        function, {"SEWERBILL_SIMULATED_NOW": "2031-06-01T00:00:00+00:00"}, simulated_clock=False
    )
    try:
        rt.send(
            "BillingRunBillingCycleQueue",
            # a quarter the simulated clock has not reached, so nothing has recorded it yet
            {"tenant": "sullivan-sewer", "scheduled_time": "2025-07-01T11:00:00Z"},
            drain=True,
        )
    finally:
        rt.invoker.configure(function)

    [cycle] = [
        c
        for c in cycles(rt)
        if c["tenant"]["S"] == "sullivan-sewer" and c["period_start"]["S"] == "2025-04-01"
    ]
    recorded = datetime.fromisoformat(cycle["recorded_at"]["S"])
    assert abs(recorded - datetime.now(UTC)) < timedelta(minutes=5)  # the machine's clock


def cycles(rt: LocalRuntime) -> list[dict[str, Any]]:
    items = rt.client("dynamodb").scan(TableName=rt.resource("BillingTable"))["Items"]
    return [i for i in items if "period_start" in i and "tenant" in i and "recorded_at" in i]
