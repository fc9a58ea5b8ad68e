"""The outbox publishers: stream INSERTs of outbox items go to the bus, 10 per call."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from handler_support import Stack, sqs_event

from billing.handlers import publish_outbox as billing_publish_outbox
from common.outbox import OutboxPublisher, outbox_records
from metering.handlers import on_read_file_uploaded
from metering.handlers import publish_outbox as metering_publish_outbox

METERS = "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading\n"
READS = "tenant,meter_id,read_on,reading\n"


def upload(stack: Stack, key: str, rows: int) -> None:
    """A meters file and a read file whose ``rows`` reads each complete a quarter."""
    from common import clock

    clock.install(clock.FixedClock(datetime(2026, 10, 2, 15, tzinfo=UTC)))
    try:
        for name, text in (
            (
                "meters/" + key.split("/")[-1],
                METERS
                + "".join(f"grafton-sewer,GR-M{i},GR-{i},water,gal,6,2026-07-01,0\n" for i in range(rows)),
            ),
            (key, READS + "".join(f"grafton-sewer,GR-M{i},2026-10-01,{1000 + i}\n" for i in range(rows))),
        ):
            on_read_file_uploaded.lambda_handler(
                sqs_event(json.dumps(stack.put_upload(name, text.encode()))), None
            )
    finally:
        clock.install(None)


def test_outbox_inserts_reach_the_bus_even_when_published_after_a_crash(metering: Stack) -> None:
    upload(metering, "reads/a.csv", 3)
    # Nothing published yet: a crash here loses nothing, the stream still holds the records.
    assert metering.captured() == []

    result = metering_publish_outbox.lambda_handler({"Records": metering.stream_records("metering")}, None)

    assert result == {"batchItemFailures": []}
    [chunk] = metering.captured()
    assert (chunk["source"], chunk["detail-type"]) == ("sewerbill.metering", "ConsumptionsDetermined")
    assert sorted(c["account_id"] for c in chunk["detail"]["consumptions"]) == ["GR-0", "GR-1", "GR-2"]


def test_state_items_and_non_inserts_are_not_published(metering: Stack) -> None:
    upload(metering, "reads/a.csv", 2)
    records = metering.stream_records("metering")
    assert len(records) > len(outbox_records(records))  # consumption and file items are on the stream too
    removed = dict(records[0], eventName="REMOVE")
    modified = dict(records[0], eventName="MODIFY")

    metering_publish_outbox.lambda_handler({"Records": [*records, removed, modified]}, None)

    assert len(metering.captured()) == 1  # one chunk of two consumptions


def test_billing_publisher_publishes_billing_events(billing: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    from billing.handlers import run_billing_cycle

    monkeypatch.setenv("ISSUE_BILLS_QUEUE_URL", billing.sqs.create_queue(QueueName="issue-bills")["QueueUrl"])
    run_billing_cycle.lambda_handler(
        sqs_event(json.dumps({"tenant": "grafton-sewer", "scheduled_time": "2026-10-01T11:00:00Z"})), None
    )
    billing_publish_outbox.lambda_handler({"Records": billing.stream_records("billing")}, None)

    [event] = billing.captured()
    assert event["detail-type"] == "BillingCycleStarted"
    assert event["detail"]["period_start"] == "2026-07-01"


class FakeEvents:
    def __init__(self, fail_detail_containing: str | None = None) -> None:
        self.calls: list[list[dict[str, Any]]] = []
        self.fail = fail_detail_containing

    def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:  # noqa: N803 - boto3 spelling
        self.calls.append(Entries)
        results = [
            {"ErrorCode": "InternalFailure", "ErrorMessage": "boom"}
            if self.fail and self.fail in e["Detail"]
            else {"EventId": "x"}
            for e in Entries
        ]
        return {"FailedEntryCount": sum("ErrorCode" in r for r in results), "Entries": results}


def stream_insert(n: int) -> dict[str, Any]:
    return {
        "eventName": "INSERT",
        "dynamodb": {
            "SequenceNumber": f"{n:05d}",
            "Keys": {"pk": {"S": f"OUTBOX#{n}"}, "sk": {"S": "OUTBOX"}},
            "NewImage": {
                "pk": {"S": f"OUTBOX#{n}"},
                "sk": {"S": "OUTBOX"},
                "source": {"S": "sewerbill.metering"},
                "detail_type": {"S": "ConsumptionDetermined"},
                "detail": {"S": json.dumps({"n": n})},
            },
        },
    }


def test_events_are_sent_ten_per_put_events_call() -> None:
    fake = FakeEvents()
    result = OutboxPublisher(fake, "bus").handle_stream_event(
        {"Records": [stream_insert(i) for i in range(23)]}
    )
    assert result == {"batchItemFailures": []}
    assert [len(c) for c in fake.calls] == [10, 10, 3]
    assert all(e["EventBusName"] == "bus" for c in fake.calls for e in c)


def test_entries_the_bus_refused_are_reported_as_batch_item_failures() -> None:
    fake = FakeEvents(fail_detail_containing='"n": 12')
    result = OutboxPublisher(fake, "bus").handle_stream_event(
        {"Records": [stream_insert(i) for i in range(15)]}
    )
    assert result == {"batchItemFailures": [{"itemIdentifier": "00012"}]}
