"""Event sources: SQS pollers, DynamoDB stream pollers and the dead-letter watch.

Each poller does what the Lambda service does for an event source mapping: receives a
batch, builds the Lambda-shaped event, invokes, and honours partial batch failure.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sewerbill.local.filters import compiled, passes
from sewerbill.local.invoker import Invoker
from sewerbill.local.stack import QueueSource, StreamSource

log = logging.getLogger("sewerbill.local")


@dataclass
class DeadLetter:
    queue: str  # the DLQ's logical id, or "stream:<table>" for a stream record given up on
    message_id: str
    body: str
    function: str | None = None
    receive_count: int | None = None
    at: datetime = field(default_factory=lambda: datetime.now(UTC))


def _batch_failures(result: Any, ids: list[str]) -> set[str] | None:
    """The failed item ids of a partial batch response, or None if the whole batch failed.

    As Lambda does: an unknown, empty or missing itemIdentifier fails the whole batch.
    """
    if not isinstance(result, dict) or not result.get("batchItemFailures"):
        return set()
    failed: set[str] = set()
    for item in result["batchItemFailures"]:
        ident = item.get("itemIdentifier") if isinstance(item, dict) else None
        if not ident or ident not in ids:
            return None
        failed.add(ident)
    return failed


def _lambda_message_attributes(attrs: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for name, value in attrs.items():
        entry: dict[str, Any] = {
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": value["DataType"],
        }
        if "StringValue" in value:
            entry["stringValue"] = value["StringValue"]
        if "BinaryValue" in value:
            entry["binaryValue"] = base64.b64encode(value["BinaryValue"]).decode()
        out[name] = entry
    return out


def fill_eventbridge_account(body: str, account: str, default_event: bool = False) -> str:
    """moto 5.2.5 drops `account` from events its rules deliver to SQS (its default input
    template lacks it); EventBridge always sends it, so put it back. The event is parsed to
    see its top level (an ``account`` inside the detail is not the event's), and the name is
    written in front of the body's own text rather than the whole event dumped again (a read
    file's chunks of consumptions are tens of KB each). ``default_event``: the body is known
    to be the default template's event as motoshim's PutEvents wrote it (`DirectSqs`'s
    `default_events`: a JSON object with ``id``, ``detail-type``, ``source`` and ``detail``
    and without ``account`` at its top level), so it is not parsed again to find that out."""
    if default_event:
        return '{"account": ' + json.dumps(account) + ", " + body[1:]
    if '"detail-type"' not in body or not body.startswith("{"):
        return body
    try:
        event = json.loads(body)
    except ValueError:
        return body
    if (
        not isinstance(event, dict)
        or not {"detail-type", "source", "detail", "id"} <= event.keys()
        or "account" in event
    ):
        return body
    return '{"account": ' + json.dumps(account) + ", " + body[1:]


class SqsPoller:
    def __init__(
        self, source: QueueSource, sqs: Any, invoker: Invoker, region: str, account: str | None = None
    ) -> None:
        self.source = source
        self.sqs = sqs
        self.invoker = invoker
        self.region = region
        self.account = account  # set: repair moto's EventBridge deliveries (see above)
        self.more = False  # poll again: a full batch was taken or some failed
        self.key = ("sqs", source.queue_arn)  # what the emulator's activity reports name
        self._tests = [compiled(f) for f in source.filters]  # made once, asked of every message
        self._default_events: set[str] = set()  # this batch's deliveries lacking `account`
        # at most this many messages a batch (None: the mapping's BatchSize): set by the
        # runtime when it shares a queue's messages among concurrent invocations
        self.batch_limit: int | None = None

    def _receive(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        self.more = False
        self._default_events = set()
        size = min(self.batch_limit or self.source.batch_size, self.source.batch_size)
        while len(messages) < size:
            asked = min(10, size - len(messages))
            got = self.sqs.receive_message(
                QueueUrl=self.source.queue_url,
                MaxNumberOfMessages=asked,
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
                WaitTimeSeconds=0,
            ).get("Messages", [])
            messages.extend(got)
            # what `DirectSqs` says of this receive's messages (motoshim change 21), kept for
            # every receive of the batch (each receive names only its own)
            self._default_events |= getattr(self.sqs, "default_events", set())
            if len(got) < asked:  # the queue has no more visible messages just now
                return messages
        self.more = True  # a full batch: there may be more
        return messages

    def record(self, message: dict[str, Any]) -> dict[str, Any]:
        body, md5 = message["Body"], message.get("MD5OfBody", "")
        if self.account is not None:
            known = message["MessageId"] in self._default_events
            fixed = fill_eventbridge_account(body, self.account, known)
            if fixed is not body:
                body, md5 = fixed, hashlib.md5(fixed.encode()).hexdigest()  # noqa: S324 - SQS's checksum
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": body,
            "attributes": message.get("Attributes", {}),
            "messageAttributes": _lambda_message_attributes(message.get("MessageAttributes", {})),
            "md5OfBody": md5,
            "eventSource": "aws:sqs",
            "eventSourceARN": self.source.queue_arn,
            "awsRegion": self.region,
        }

    def poll_once(self) -> int:
        self.more = False
        if not self.source.enabled:
            return 0
        messages = self._receive()
        if not messages:
            return 0
        records = [self.record(m) for m in messages]  # each made once: filtered, then handed over
        if self._tests:
            kept = [passes(self._tests, r) for r in records]
            dropped = [m for m, keep in zip(messages, kept, strict=True) if not keep]
            if dropped:
                self._settle(dropped, set())  # Lambda deletes messages no filter matches
                messages = [m for m, keep in zip(messages, kept, strict=True) if keep]
                records = [r for r, keep in zip(records, kept, strict=True) if keep]
                if not messages:
                    return len(dropped)
        event = {"Records": records}
        inv = self.invoker.invoke(self.source.function, event, "sqs", records=len(messages))
        ids = [m["MessageId"] for m in messages]
        if inv.error:
            failed = set(ids)
        elif self.source.report_batch_item_failures:
            found = _batch_failures(inv.result, ids)
            failed = set(ids) if found is None else found
        else:
            failed = set()
        inv.failures = len(failed)
        self._settle(messages, failed)
        return len(messages)

    def _settle(self, messages: list[dict[str, Any]], failed: set[str]) -> None:
        done = [m for m in messages if m["MessageId"] not in failed]
        again = [m for m in messages if m["MessageId"] in failed]
        for i in range(0, len(done), 10):
            chunk = done[i : i + 10]
            self.sqs.delete_message_batch(
                QueueUrl=self.source.queue_url,
                Entries=[{"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(chunk)],
            )
        # Lambda leaves failed messages to reappear when their visibility timeout ends;
        # locally the timeout "ends" at once so a drain redelivers without waiting.
        self.more = self.more or bool(again)
        for i in range(0, len(again), 10):
            chunk = again[i : i + 10]
            self.sqs.change_message_visibility_batch(
                QueueUrl=self.source.queue_url,
                Entries=[
                    {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                    for n, m in enumerate(chunk)
                ],
            )

    def visible(self) -> int:
        """The queue's messages that a receive can take now (ApproximateNumberOfMessages)."""
        attrs = self.sqs.get_queue_attributes(
            QueueUrl=self.source.queue_url, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
        return int(attrs["ApproximateNumberOfMessages"])

    def in_flight(self) -> int:
        attrs = self.sqs.get_queue_attributes(
            QueueUrl=self.source.queue_url,
            AttributeNames=[
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed",
            ],
        )["Attributes"]
        return sum(int(v) for v in attrs.values())


# What a stream record's `dynamodb` part holds besides its images.
_NOT_IMAGES = frozenset(
    {"Keys", "SequenceNumber", "SizeBytes", "StreamViewType", "ApproximateCreationDateTime"}
)


def _dynamodb_keys_read(pattern: dict[str, Any]) -> frozenset[str] | None:
    """The keys of a stream record's ``dynamodb`` part that ``pattern`` names: none when it
    names no such part, None when its rule is on the whole part."""
    if "dynamodb" not in pattern:
        return frozenset()
    part = pattern["dynamodb"]
    return frozenset(part) if isinstance(part, dict) else None


def _reaches_creation_time(pattern: dict[str, Any]) -> bool:
    """Whether ``pattern`` reads a stream record's ``ApproximateCreationDateTime`` (the one
    value of the ``dynamodb`` part the Lambda record converts: a rule on the whole part, or
    one naming that key)."""
    keys = _dynamodb_keys_read(pattern)
    return keys is None or "ApproximateCreationDateTime" in keys


def _reaches_images(pattern: dict[str, Any]) -> bool:
    """Whether ``pattern`` may read a stream record's images (a rule on the whole `dynamodb`
    part, or one naming a key of it other than those `_NOT_IMAGES` lists)."""
    keys = _dynamodb_keys_read(pattern)
    return keys is None or not keys <= _NOT_IMAGES


def _reads_size(pattern: dict[str, Any]) -> bool:
    """Whether ``pattern`` names a stream record's ``SizeBytes`` (moto measures it when the
    record is read)."""
    keys = _dynamodb_keys_read(pattern)
    return keys is not None and "SizeBytes" in keys


def _itself(record: dict[str, Any]) -> dict[str, Any]:
    return record


# A stream record read: (what the filters may read, a call giving the whole record).
_Entry = tuple[dict[str, Any], Callable[[], dict[str, Any]]]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()
    if isinstance(value, set):
        return [_jsonable(v) for v in value]
    return value


class StreamPoller:
    """Reads a table's stream from where the last read stopped (the shard iterator that
    GetRecords returned), and from the checkpoint again only after a failed batch."""

    def __init__(
        self,
        source: StreamSource,
        streams: Any,
        invoker: Invoker,
        region: str,
        give_up: Callable[[StreamSource, list[dict[str, Any]], str], None],
        direct: Callable[[str, str | None, int], list[Any]] | None = None,
    ) -> None:
        self.source = source
        # reads the emulator's stream in this process (motoshim.stream_entries: moto's records)
        self.direct = direct
        self.streams = streams
        self.invoker = invoker
        self.region = region
        self.give_up = give_up  # retries exhausted: to the OnFailure destination, or reported
        self.checkpoints: dict[str, str | None] = {}  # shard id -> last sequence number done
        self.attempts: dict[str, int] = {}  # shard id -> failed attempts at the checkpoint
        self.iterators: dict[str, str] = {}  # shard id -> where the next read starts
        self._shard_cache: list[str] = []
        self._polls = 0
        self.more = False
        # A filter on the record's size needs it before filtering (moto measures it when read).
        self._filter_on_size = any(_reads_size(f) for f in source.filters)
        self.key = ("stream", source.table_name)  # what the emulator's activity reports name
        # Filters that never read the creation time see moto's `dynamodb` part itself (`passes`).
        self._reads_creation_time = any(_reaches_creation_time(f) for f in source.filters)
        # Filters that never read an image see moto's record before its deferred images are
        # made (motoshim's change 19: a plain put's image is made when the record is read).
        self._reads_images = any(_reaches_images(f) for f in source.filters)
        # the filters as tests made once (`filters.compiled`), asked of every record
        self._tests = [compiled(f, _jsonable) for f in source.filters]

    def start(self) -> None:
        """For StartingPosition LATEST, skip what is already in the stream."""
        if self.source.starting_position != "LATEST":
            return
        self.skip_existing()

    def skip_existing(self) -> int:
        """Move the checkpoint past every record now in the stream, handing none out (a
        restored state's writes are not changes: `sewerbill.local.state`); how many."""
        skipped = 0
        for shard_id in self._shards():
            while read := self._read(shard_id, 1000):
                skipped += len(read)
        return skipped

    def _shards(self) -> list[str]:
        # Shards change rarely (moto keeps one per table): describe every 50 polls only.
        if not self._shard_cache or self._polls % 50 == 0:
            desc = self.streams.describe_stream(StreamArn=self.source.stream_arn)["StreamDescription"]
            self._shard_cache = [s["ShardId"] for s in desc.get("Shards", [])]
        self._polls += 1
        return self._shard_cache

    def _read(self, shard_id: str, limit: int) -> list[_Entry]:
        """The next records of the shard, each as (what a filter may read, the whole record)."""
        if self.direct is not None:  # moto in this process has one shard per table
            read = self.direct(self.source.stream_arn, self.checkpoints.get(shard_id), limit)
            if read:
                self.checkpoints[shard_id] = read[-1].record["dynamodb"]["SequenceNumber"]
            if self._filter_on_size:
                return [(r.to_json(), r.to_json) for r in read]
            if self._reads_images:
                return [(r.imaged(), r.to_json) for r in read]
            return [(r.record, r.to_json) for r in read]  # imaged and sized only if kept
        iterator = self.iterators.pop(shard_id, None)
        stored = iterator is not None
        if iterator is None:
            after = self.checkpoints.get(shard_id)
            args: dict[str, Any] = {"StreamArn": self.source.stream_arn, "ShardId": shard_id}
            if after:
                args.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=after)
            else:
                args["ShardIteratorType"] = "TRIM_HORIZON"
            iterator = self.streams.get_shard_iterator(**args)["ShardIterator"]
        try:
            got = self.streams.get_records(ShardIterator=iterator, Limit=limit)
        except (
            self.streams.exceptions.ExpiredIteratorException,  # idle past 15 minutes
            self.streams.exceptions.TrimmedDataAccessException,  # DynamoDB Local, after an empty read
        ):
            if not stored:
                raise
            return self._read(shard_id, limit)  # from the checkpoint instead
        if got.get("NextShardIterator"):
            self.iterators[shard_id] = got["NextShardIterator"]
        records: list[dict[str, Any]] = got.get("Records", [])
        if records:
            self.checkpoints[shard_id] = records[-1]["dynamodb"]["SequenceNumber"]
        return [(r, functools.partial(_itself, r)) for r in records]

    def _rewind(self, shard_id: str, checkpoint: str | None) -> None:
        """Read from just after `checkpoint` next time (a failed batch is retried)."""
        self.checkpoints[shard_id] = checkpoint
        self.iterators.pop(shard_id, None)
        self.more = True

    def _unconverted(self, raw: dict[str, Any], copied: bool = True) -> dict[str, Any]:
        """The Lambda record of `raw` with its `dynamodb` part's values not yet made JSON;
        not ``copied``, that part is `raw`'s own, its creation time as moto holds it."""
        ddb = raw["dynamodb"]
        created = ddb.get("ApproximateCreationDateTime")
        if copied:
            ddb = dict(ddb)
        if copied and isinstance(created, datetime):  # moto's own record holds a naive UTC time
            aware = created if created.tzinfo else created.replace(tzinfo=UTC)
            ddb["ApproximateCreationDateTime"] = int(aware.timestamp())
        return {
            "eventID": raw["eventID"],
            "eventName": raw["eventName"],
            "eventVersion": "1.1",
            "eventSource": "aws:dynamodb",
            "awsRegion": self.region,
            "dynamodb": ddb,
            "eventSourceARN": self.source.stream_arn,
        }

    def record(self, raw: dict[str, Any]) -> dict[str, Any]:
        event = self._unconverted(raw)
        event["dynamodb"] = _jsonable(event["dynamodb"])
        return event

    def passes(self, raw: dict[str, Any]) -> bool:
        """Whether the mapping's filters keep `raw`: what `record_passes` answers on
        `record(raw)`, converting only the parts of the record the patterns reach (a pattern
        reads only the keys it names), so a dropped record's images are never converted, nor
        its `dynamodb` part copied unless a pattern reads its creation time (issue 7: a read
        file's 20,000 records, all but 200 dropped): each filter's test, made once
        (`filters.compiled`, without reading the pattern again: 5.0 us a record for
        billing's two filters before, 2.5 us after), makes JSON only the values a list of
        rules reads (`_jsonable`), and stops at the first key that fails."""
        if not self._tests:
            return True
        # a pattern that never reads the creation time sees moto's `dynamodb` part itself
        event = self._unconverted(raw, copied=self._reads_creation_time)
        for test in self._tests:
            if test(event):
                return True
        return False

    def poll_once(self) -> int:
        self.more = False
        if not self.source.enabled:
            return 0
        handled = 0
        for shard_id in self._shards():
            before = self.checkpoints.get(shard_id)
            records = self._read(shard_id, self.source.batch_size)
            if not records:
                continue
            handled += len(records)
            self.more = self.more or len(records) == self.source.batch_size
            # Filtered-out records are skipped; the checkpoint still moves past them.
            kept = [(r, self.record(r)) for r in (whole() for view, whole in records if self.passes(view))]
            if not kept:
                continue
            inv = self.invoker.invoke(
                self.source.function, {"Records": [e for _, e in kept]}, "dynamodb", len(kept)
            )
            seqs = [r["dynamodb"]["SequenceNumber"] for r, _ in kept]
            first_failed: int | None = None
            if inv.error:
                first_failed = 0
            elif self.source.report_batch_item_failures:
                found = _batch_failures(inv.result, seqs)
                if found is None:
                    first_failed = 0
                elif found:
                    first_failed = min(seqs.index(s) for s in found)
            if first_failed is None:
                self.attempts.pop(shard_id, None)
                continue
            inv.failures = len(kept) - first_failed
            if first_failed > 0:  # progress up to the failed record; retry from it
                self._rewind(shard_id, seqs[first_failed - 1])
                self.attempts[shard_id] = 1
                continue
            self.attempts[shard_id] = self.attempts.get(shard_id, 0) + 1
            if self.attempts[shard_id] <= self.source.max_retries:
                self._rewind(shard_id, before)
                continue
            # Retries exhausted: Lambda discards the batch (to its on-failure destination).
            self.give_up(self.source, [e for _, e in kept], shard_id)
            self.attempts.pop(shard_id, None)
        return handled


class DeadLetterWatch:
    """Notices messages arriving in dead-letter queues and records them (without consuming)."""

    def __init__(self, dlqs: dict[str, str], sqs: Any, dead_letters: list[DeadLetter]) -> None:
        self.dlqs = dlqs  # url -> logical id
        self.sqs = sqs
        self.dead_letters = dead_letters
        self.seen: dict[str, set[str]] = {url: set() for url in dlqs}

    def check(self, urls: set[str] | None = None) -> int:
        """Look at `urls` (default: every dead-letter queue); returns how many are new."""
        new = 0
        for url, logical_id in self.dlqs.items():
            if urls is not None and url not in urls:
                continue
            if urls is None and self._count(url) <= len(self.seen[url]):
                continue  # nothing new (asked only when no one told us what arrived)
            peeked: list[dict[str, Any]] = []
            while True:
                got = self.sqs.receive_message(
                    QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"], VisibilityTimeout=30
                ).get("Messages", [])
                peeked.extend(got)
                if len(got) < 10:
                    break
            for i in range(0, len(peeked), 10):
                self.sqs.change_message_visibility_batch(
                    QueueUrl=url,
                    Entries=[
                        {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                        for n, m in enumerate(peeked[i : i + 10])
                    ],
                )
            for message in peeked:
                if message["MessageId"] in self.seen[url]:
                    continue
                self.seen[url].add(message["MessageId"])
                self.dead_letters.append(
                    DeadLetter(queue=logical_id, message_id=message["MessageId"], body=message["Body"])
                )
                log.error("dead letter in %s: %s %s", logical_id, message["MessageId"], message["Body"][:500])
                new += 1
        return new

    def _count(self, url: str) -> int:
        attrs = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
        return int(attrs["Attributes"]["ApproximateNumberOfMessages"])
