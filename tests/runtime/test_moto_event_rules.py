"""The runtime's EventBridge fast path delivers exactly what moto as shipped delivers.

`motoshim` skips a rule whose pattern names its sources or detail types as plain strings,
none of them the event's, before moto's matcher runs (that matcher round-trips and
flattens the whole event for every rule on the bus, per event), and its `PutEvents` builds
each event's message, flattened view and SQS body once per event, not once per rule. Here
the same events go to a bus whose rules cover the shapes a pattern takes (plain lists,
prefixes, ``$or``, detail filters, no source at all, an event whose source is not a string)
and the targets moto treats otherwise (an input transformer, a FIFO queue's message group),
with the shim and with moto as shipped (`motoshim.uninstall()`), and every queue must
receive the same messages, byte for byte but the event id and the time (moto reads the
clock per rule, the shim once per event; both must be the time moto writes). The shim's
requests go to moto's events handler without Flask: a refusal is answered the same too.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from botocore.exceptions import ClientError

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

EVENTS: list[tuple[str, str, Any]] = [
    ("sewerbill.billing", "BillIssued", {"tenant": "grafton-sewer", "total": "12.50"}),
    ("sewerbill.billing", "BillIssued", {"tenant": "sullivan-sewer"}),
    ("sewerbill.billing", "BillOverdue", {"tenant": "grafton-sewer"}),
    ("sewerbill.metering", "ConsumptionDetermined", {"tenant": "grafton-sewer"}),
    ("aws.s3", "Object Created", {"bucket": {"name": "b"}}),
    ("sewerbill.test", "Dotted", {"a": {"b": "x"}, "a.b": "y"}),
    # what moto's string template alters, so the shim leaves it to moto: a placeholder in
    # the detail (moto fills it in), values beyond ASCII, numbers, nesting, a list detail
    ("sewerbill.billing", "BillIssued", {"tenant": "grafton-sewer", "note": "<source> in <region>"}),
    (
        "sewerbill.billing",
        "BillIssued",
        {"tenant": "grafton-sewer", "name": "Zoë \u2603", "n": [1, 2.5, None]},
    ),
    ("sewerbill.billing", "BillIssued", ["not", "an", "object"]),
]

# Targets moto delivers otherwise than with its default template (the shim hands the
# rule to moto): an input transformer, and a FIFO queue taking a message group.
TRANSFORMED = {
    "InputTransformer": {
        "InputPathsMap": {"tenant": "$.detail.tenant", "kind": "$.detail-type"},
        "InputTemplate": '{"kind": "<kind>", "tenant": "<tenant>"}',
    }
}


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
    # a rule with a transformed target beside a plain one, and one sending to a FIFO queue
    for name, fifo in (("transformed", False), ("fifo", True)):
        attributes = {"FifoQueue": "true", "ContentBasedDeduplication": "true"} if fifo else {}
        queue_name = f"{bus}-{name}" + (".fifo" if fifo else "")
        url = sqs.create_queue(QueueName=queue_name, Attributes=attributes)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        events.put_rule(Name=f"{bus}-{name}", EventBusName=bus, EventPattern=json.dumps(PATTERNS["plain"]))
        target: dict[str, Any] = {"Id": "q", "Arn": arn}
        target.update(TRANSFORMED if not fifo else {"SqsParameters": {"MessageGroupId": "g"}})
        targets = [target] + ([{"Id": "plain", "Arn": urls_arn(sqs, urls["plain"])}] if not fifo else [])
        events.put_targets(Rule=f"{bus}-{name}", EventBusName=bus, Targets=targets)
        urls[name] = url
    entries = [
        {"Source": source, "DetailType": detail_type, "Detail": json.dumps(detail), "EventBusName": bus}
        for source, detail_type, detail in EVENTS
    ]
    entries.append({**entries[0], "Resources": ["arn:aws:s3:::bucket", "<id>"]})  # moto fills it in
    entries.append({**entries[0], "Resources": ["arn:aws:s3:::bucket"]})
    entries.append({**entries[0], "Time": 1_800_000_000})  # a time given: moto's path
    entries.append(
        {"Source": "sewerbill.billing", "DetailType": "BillIssued", "Detail": "", "EventBusName": bus}
    )
    answers = [events.put_events(Entries=entries[i : i + 10]) for i in range(0, len(entries), 10)]
    refused = [e.get("ErrorCode") for a in answers for e in a["Entries"] if e.get("ErrorCode")]
    assert refused == ["InvalidArgument"]  # the entry without a detail, as moto answers it
    received: dict[str, list[Any]] = {}
    try:  # moto's refusal of an 11-entry request, answered the same through either transport
        events.put_events(Entries=entries[:1] * 11)
    except ClientError as exc:
        received["refused"] = [
            exc.response["Error"]["Code"],
            exc.response["ResponseMetadata"]["HTTPStatusCode"],
        ]
    for name, url in urls.items():
        bodies = []
        while True:
            got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
            if not got:
                break
            for m in got:
                body = json.loads(m["Body"])
                if "id" in body:  # random, and the time: read per rule by moto
                    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", body.pop("time")), body
                    body.pop("id")
                bodies.append(json.dumps(body))  # the rest byte for byte, keys in moto's order
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        received[name] = sorted(bodies)
    return received


def urls_arn(sqs: Any, url: str) -> str:
    return str(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"])


def test_rules_skipped_by_the_fast_path_are_those_moto_would_not_match(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.events.utils import EventTemplateParser

    templates = {"run": 0}
    fill = EventTemplateParser.parse

    def counted(*args: Any, **kwargs: Any) -> Any:
        templates["run"] += 1
        return fill(*args, **kwargs)

    monkeypatch.setattr(EventTemplateParser, "parse", staticmethod(counted))
    fast = deliveries(emulator, "fast")
    filled_fast, templates["run"] = templates["run"], 0
    with motoshim.shipped():
        shipped = deliveries(emulator, "shipped")

    assert fast == shipped
    # the comparison is not vacuous: some rules match, some do not
    assert fast.pop("refused") == ["ValidationException", 400]
    shipped.pop("refused")
    counts = {name: len(bodies) for name, bodies in fast.items()}
    # 8 BillIssued: the first 2, 3 more in the detail, 3 more in resources and time
    assert counts == {
        "plain": 16,  # the 8 BillIssued, again through the transformed rule's plain target
        "other-source": 1,  # the metering event only
        "other-type": 1,  # the BillOverdue
        "prefix": 11,  # every sewerbill.* event: 8 BillIssued, the overdue, metering, test
        "mixed": 10,  # the S3 event, the overdue and the 8 BillIssued
        "or": 9,  # the metering event and the 8 BillIssued
        "detail": 7,  # billing events of grafton-sewer (not sullivan, not the list detail)
        "no-source": 8,
        "anything-but": 3,  # the metering, S3 and test events
        "nested-miss": 0,
        "dotted": 1,
        "transformed": 8,
        "fifo": 8,
    }
    # moto as shipped fills its template for each of the 83 deliveries; the shim only for
    # the 4 BillIssued it hands to moto (a placeholder in the detail, the list detail, a
    # placeholder in resources, a time given: 9 + 8 + 9 + 9 deliveries = 35) and, for the
    # other 4 BillIssued, the transformed rule's 2 targets and the FIFO queue (4 x 3 = 12)
    assert (filled_fast, templates["run"]) == (47, sum(counts.values()))
