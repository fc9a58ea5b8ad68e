"""The runtime's EventBridge fast path delivers exactly what moto as shipped delivers.

`motoshim` skips a rule whose pattern names its sources or detail types as plain strings,
none of them the event's, before moto's matcher runs (that matcher round-trips and
flattens the whole event for every rule on the bus, per event). Here the same events go
to a bus whose rules cover the shapes a pattern takes (plain lists, prefixes, ``$or``,
detail filters, no source at all, an event whose source is not a string) with the shim and
with moto as shipped (`motoshim.uninstall()`), and every queue must receive the same
messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator

pytestmark = pytest.mark.integration

PATTERNS: dict[str, dict[str, Any]] = {
    "plain": {"source": ["sewerbill.billing"], "detail-type": ["BillIssued", "PaymentApplied"]},
    "other-source": {"source": ["sewerbill.metering"]},
    "other-type": {"source": ["sewerbill.billing"], "detail-type": ["BillOverdue"]},
    "prefix": {"source": [{"prefix": "sewerbill."}]},
    "mixed": {"source": ["aws.s3", {"prefix": "sewerbill.bill"}]},
    "or": {"$or": [{"source": ["sewerbill.metering"]}, {"detail-type": ["BillIssued"]}]},
    "detail": {"source": ["sewerbill.billing"], "detail": {"tenant": ["grafton-sewer"]}},
    "no-source": {"detail-type": ["BillIssued"]},
    "anything-but": {"source": [{"anything-but": ["sewerbill.billing"]}]},
    "nested-miss": {"detail": {"bucket": {"name": ["other"]}}},
    # moto flattens {"a": {"b": "x"}, "a.b": "y"} to one key "detail.a.b", the last written
    "dotted": {"detail": {"a": {"b": ["y"]}}},
}

EVENTS = [
    ("sewerbill.billing", "BillIssued", {"tenant": "grafton-sewer", "total": "12.50"}),
    ("sewerbill.billing", "BillIssued", {"tenant": "sullivan-sewer"}),
    ("sewerbill.billing", "BillOverdue", {"tenant": "grafton-sewer"}),
    ("sewerbill.metering", "ConsumptionDetermined", {"tenant": "grafton-sewer"}),
    ("aws.s3", "Object Created", {"bucket": {"name": "b"}}),
    ("sewerbill.test", "Dotted", {"a": {"b": "x"}, "a.b": "y"}),
]


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    emulator = Emulator.start("thread")
    try:
        yield emulator
    finally:
        motoshim.install()
        emulator.stop()


def deliveries(emulator: Emulator, bus: str) -> dict[str, list[Any]]:
    events, sqs = emulator.client("events"), emulator.client("sqs")
    events.create_event_bus(Name=bus)
    urls = {}
    for name, pattern in PATTERNS.items():
        url = sqs.create_queue(QueueName=f"{bus}-{name}")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        events.put_rule(Name=f"{bus}-{name}", EventBusName=bus, EventPattern=json.dumps(pattern))
        events.put_targets(Rule=f"{bus}-{name}", EventBusName=bus, Targets=[{"Id": "q", "Arn": arn}])
        urls[name] = url
    for source, detail_type, detail in EVENTS:
        answer = events.put_events(
            Entries=[
                {
                    "Source": source,
                    "DetailType": detail_type,
                    "Detail": json.dumps(detail),
                    "EventBusName": bus,
                }
            ]
        )
        assert answer["FailedEntryCount"] == 0
    received: dict[str, list[Any]] = {}
    for name, url in urls.items():
        bodies = []
        while True:
            got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
            if not got:
                break
            for m in got:
                body = json.loads(m["Body"])
                bodies.append((body["source"], body["detail-type"], body["detail"], body["region"]))
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        received[name] = sorted(bodies, key=json.dumps)
    return received


def test_rules_skipped_by_the_fast_path_are_those_moto_would_not_match(emulator: Emulator) -> None:
    fast = deliveries(emulator, "fast")
    with motoshim.shipped():
        shipped = deliveries(emulator, "shipped")

    assert fast == shipped
    # the comparison is not vacuous: some rules match, some do not
    counts = {name: len(bodies) for name, bodies in fast.items()}
    assert counts == {
        "plain": 2,  # the two BillIssued
        "other-source": 1,  # the metering event only
        "other-type": 1,  # the BillOverdue
        "prefix": 5,  # every sewerbill.* event
        "mixed": 4,  # the S3 event and the three billing events
        "or": 3,  # the metering event and the two BillIssued
        "detail": 2,  # billing events of grafton-sewer
        "no-source": 2,
        "anything-but": 3,  # the metering, S3 and test events
        "nested-miss": 0,
        "dotted": 1,
    }
