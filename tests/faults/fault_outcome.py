"""The stored outcome of a flow on the local runtime, and how two outcomes differ.

What a utility keeps after a flow: every table's items (by their keys), the events the
outboxes published on the bus (by detail type and business key; a chunk's consumptions each
by their own), the emails SES accepted and the objects in the buckets. A run with a fault
(`sewerbill.local.faults`) is compared with the same flow run without one: what the faultless
run has and the faulty one lacks (or holds with other values) is *lost*; what the faulty run
has more of is *doubled*.

Volatile values are left out so that two runs of the same flow compare equal: the attributes
named in ``VOLATILE`` (ids drawn per delivery, such as a correlation id) wherever they
appear, including inside JSON strings, and values drawn at random (``RANDOM``: a version-4
UUID, such as an event id not derived from its business key, or an SES message id), which
read ``<random>``. Items whose keys then coincide (outbox items keyed by a random event id)
are told apart by their contents, so one published twice still counts twice. Both runs see
the same simulated time (the clock moves only when a test moves it), so timestamps are kept.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sewerbill.local import LocalRuntime

# Attributes drawn per delivery or per process (uuid4, request ids), not by the flow's data,
# and counters of deliveries and writes (a redelivery is one more attempt, one more write of
# the same item: a notice's attempts, a mark's writes, an item's optimistic version).
VOLATILE = frozenset(
    {
        "correlation_id",
        "request_id",
        "aws_request_id",
        "message_id",
        "receipt_handle",
        "attempts",
        "writes",
        "version",
    }
)
CAPTURE_QUEUE = "fault-harness-capture"
RANDOM = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"  # uuid4
    r"|[a-z]{16}-[a-z]{8}-[a-z]{4}-[a-z]{4}-[a-z]{4}-[a-z]{12}-[a-z]{6}"  # moto's SES message id
)


def capture_events(rt: LocalRuntime) -> str:
    """A queue that receives every event put on the stack's bus (a rule on the bus, as an
    archive would): what was published, counted at the end. Returns its URL."""
    sqs, events = rt.client("sqs"), rt.client("events")
    url = sqs.create_queue(QueueName=CAPTURE_QUEUE)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    bus = rt.resource("EventBus")
    events.put_rule(
        Name="fault-harness-capture",
        EventBusName=bus,
        EventPattern=json.dumps({"source": [{"prefix": "sewerbill."}]}),
    )
    events.put_targets(
        Rule="fault-harness-capture", EventBusName=bus, Targets=[{"Id": "capture", "Arn": arn}]
    )
    return str(url)


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in sorted(value.items()) if k not in VOLATILE}
    if isinstance(value, list | tuple):
        return [_normal(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(str(v) for v in value)
    if isinstance(value, str) and value[:1] in "[{":
        try:
            parsed = json.loads(value)
        except ValueError:
            return RANDOM.sub("<random>", value)
        return _normal(parsed)
    if isinstance(value, str):
        return RANDOM.sub("<random>", value)
    if isinstance(value, bytes | bytearray):
        return value.hex()
    return str(value) if not isinstance(value, bool | int | str | type(None)) else value


def _business_keys() -> dict[str, Any]:
    """Event classes by detail type (each service's events module)."""
    import importlib

    from common.events import Event

    for name in ("metering", "billing", "stormwater", "sampling", "notices"):
        importlib.import_module(f"{name}.events")
    found: dict[str, Any] = {}
    todo = list(Event.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        found.setdefault(cls.__name__, cls)
    return found


def _event_keys(detail_type: str, detail: dict[str, Any], classes: dict[str, Any]) -> list[tuple[str, str]]:
    """(detail type, business key) of an event and of the events it carries (a chunk's)."""
    cls = classes.get(detail_type)
    names = getattr(cls, "BUSINESS_KEY", ()) or ("event_id",)
    keys = [(detail_type, "#".join(str(detail.get(n)) for n in names))]
    if cls is not None:
        for field_name, info in cls.model_fields.items():
            inner = detail.get(field_name)
            args = getattr(info.annotation, "__args__", ())
            if isinstance(inner, list) and args and isinstance(args[0], type) and args[0].__name__ in classes:
                keys += [k for item in inner for k in _event_keys(args[0].__name__, item, classes)]
    return keys


@dataclass
class Outcome:
    items: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    events: Counter[tuple[str, str]] = field(default_factory=Counter)
    emails: Counter[str] = field(default_factory=Counter)
    objects: dict[str, int] = field(default_factory=dict)


def outcome(rt: LocalRuntime, capture_url: str) -> Outcome:
    """What the stack holds now (see the module)."""
    from common.dynamo import from_item

    found = Outcome()
    ddb = rt.client("dynamodb")
    items: dict[tuple[str, str, str], list[Any]] = {}
    for lid, resource in rt.cfn["Resources"].items():
        kind = resource["Type"]
        if lid not in rt.stack.resources:  # a condition left it out
            continue
        if kind == "AWS::DynamoDB::Table":
            table = rt.resource(lid)
            for page in ddb.get_paginator("scan").paginate(TableName=table):
                for raw in page["Items"]:
                    item = _normal(from_item(raw))
                    items.setdefault((lid, str(item.get("pk")), str(item.get("sk"))), []).append(item)
        elif kind == "AWS::S3::Bucket":
            s3 = rt.client("s3")
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=rt.resource(lid)):
                for obj in page.get("Contents", []):
                    found.objects[f"{lid}/{obj['Key']}"] = obj["Size"]
    for (lid, pk, sk), same in items.items():
        if len(same) == 1:
            found.items[(lid, pk, sk)] = same[0]
            continue
        for n, item in enumerate(sorted(same, key=lambda i: json.dumps(i, sort_keys=True, default=str))):
            found.items[(lid, pk, f"{sk} #{n + 1}")] = item
    classes = _business_keys()
    sqs = rt.client("sqs")
    while got := sqs.receive_message(QueueUrl=capture_url, MaxNumberOfMessages=10).get("Messages", []):
        for message in got:
            event = json.loads(message["Body"])
            found.events.update(_event_keys(event["detail-type"], event["detail"], classes))
        sqs.delete_message_batch(
            QueueUrl=capture_url,
            Entries=[{"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(got)],
        )
    from moto.ses.models import ses_backends

    backend = ses_backends[rt.stack.account][rt.stack.region]
    for sent in backend.sent_messages:
        to = getattr(sent, "destinations", None) or getattr(sent, "destination", None)
        subject = getattr(sent, "subject", None) or _subject(getattr(sent, "raw_data", ""))
        found.emails[f"{to}|{subject}"] += 1
    return found


def _subject(raw: str) -> str:
    for line in raw.splitlines():
        if line.lower().startswith("subject:"):
            return line[8:].strip()
    return ""


@dataclass(frozen=True)
class Difference:
    lost: list[str]
    doubled: list[str]

    def __bool__(self) -> bool:
        return bool(self.lost or self.doubled)


def compare(expected: Outcome, got: Outcome) -> Difference:
    """What ``got`` (the run with a fault) lost and doubled against ``expected`` (without)."""
    lost: list[str] = []
    doubled: list[str] = []
    for key, item in expected.items.items():
        if key not in got.items:
            lost.append(f"item {key} missing")
        elif got.items[key] != item:
            lost.append(f"item {key} differs: {_diff(item, got.items[key])}")
    doubled += [f"item {key} extra" for key in got.items.keys() - expected.items.keys()]
    for name, a, b in (("event", expected.events, got.events), ("email", expected.emails, got.emails)):
        lost += [f"{name} {k} x{a[k] - b[k]} missing" for k in a if a[k] > b[k]]
        doubled += [f"{name} {k} x{b[k] - a[k]} extra" for k in b if b[k] > a[k]]
    lost += [f"object {k} missing" for k in expected.objects.keys() - got.objects.keys()]
    doubled += [f"object {k} extra" for k in got.objects.keys() - expected.objects.keys()]
    return Difference(sorted(lost), sorted(doubled))


def _diff(a: Any, b: Any) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        names = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        return "; ".join(f"{k}: {str(a.get(k))[:120]} -> {str(b.get(k))[:120]}" for k in names[:3])
    return f"{str(a)[:120]} -> {str(b)[:120]}"
