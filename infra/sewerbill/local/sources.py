"""Event sources: SQS pollers, DynamoDB stream pollers and the dead-letter watch.

Each poller does what the Lambda service does for an event source mapping: receives a
batch, builds the Lambda-shaped event, invokes, and honours partial batch failure.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sewerbill.local.filters import record_passes
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


def fill_eventbridge_account(body: str, account: str) -> str:
    """moto 5.2.5 drops `account` from events its rules deliver to SQS (its default input
    template lacks it); EventBridge always sends it, so put it back."""
    if '"detail-type"' not in body or '"account"' in body:
        return body
    try:
        event = json.loads(body)
    except ValueError:
        return body
    if not isinstance(event, dict) or not {"detail-type", "source", "detail", "id"} <= event.keys():
        return body
    event["account"] = account
    return json.dumps(event)


class SqsPoller:
    def __init__(
        self, source: QueueSource, sqs: Any, invoker: Invoker, region: str, account: str | None = None
    ) -> None:
        self.source = source
        self.sqs = sqs
        self.invoker = invoker
        self.region = region
        self.account = account  # set: repair moto's EventBridge deliveries (see above)

    def _receive(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        while len(messages) < self.source.batch_size:
            got = self.sqs.receive_message(
                QueueUrl=self.source.queue_url,
                MaxNumberOfMessages=min(10, self.source.batch_size - len(messages)),
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
                WaitTimeSeconds=0,
            ).get("Messages", [])
            if not got:
                break
            messages.extend(got)
        return messages

    def record(self, message: dict[str, Any]) -> dict[str, Any]:
        body, md5 = message["Body"], message.get("MD5OfBody", "")
        if self.account is not None:
            fixed = fill_eventbridge_account(body, self.account)
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
        if not self.source.enabled:
            return 0
        messages = self._receive()
        if not messages:
            return 0
        if self.source.filters:
            dropped = [m for m in messages if not record_passes(self.source.filters, self.record(m))]
            if dropped:
                self._settle(dropped, set())  # Lambda deletes messages no filter matches
                messages = [m for m in messages if m not in dropped]
                if not messages:
                    return len(dropped)
        if self.source.raw_events:
            failed = set()
            for message in messages:
                inv = self.invoker.invoke(
                    self.source.function, json.loads(self.record(message)["body"]), "eventbridge"
                )
                if inv.error:
                    failed.add(message["MessageId"])
        else:
            event = {"Records": [self.record(m) for m in messages]}
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
        for i in range(0, len(again), 10):
            chunk = again[i : i + 10]
            self.sqs.change_message_visibility_batch(
                QueueUrl=self.source.queue_url,
                Entries=[
                    {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                    for n, m in enumerate(chunk)
                ],
            )

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
    def __init__(
        self,
        source: StreamSource,
        streams: Any,
        invoker: Invoker,
        region: str,
        dead_letters: list[DeadLetter],
    ) -> None:
        self.source = source
        self.streams = streams
        self.invoker = invoker
        self.region = region
        self.dead_letters = dead_letters
        self.checkpoints: dict[str, str | None] = {}  # shard id -> last sequence number done
        self.attempts: dict[str, int] = {}  # shard id -> failed attempts at the checkpoint
        self._shard_cache: list[str] = []
        self._polls = 0

    def start(self) -> None:
        """For StartingPosition LATEST, skip what is already in the stream."""
        if self.source.starting_position != "LATEST":
            return
        for shard_id in self._shards():
            last = None
            while True:
                records = self._records(shard_id, last, 1000)
                if not records:
                    break
                last = records[-1]["dynamodb"]["SequenceNumber"]
            self.checkpoints[shard_id] = last

    def _shards(self) -> list[str]:
        # Shards change rarely (moto keeps one per table): describe every 50 polls only.
        if not self._shard_cache or self._polls % 50 == 0:
            self._shard_cache = self._describe_shards()
        self._polls += 1
        return self._shard_cache

    def _describe_shards(self) -> list[str]:
        desc = self.streams.describe_stream(StreamArn=self.source.stream_arn)["StreamDescription"]
        return [s["ShardId"] for s in desc.get("Shards", [])]

    def _records(self, shard_id: str, after: str | None, limit: int) -> list[dict[str, Any]]:
        args: dict[str, Any] = {"StreamArn": self.source.stream_arn, "ShardId": shard_id}
        if after:
            args.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=after)
        else:
            args["ShardIteratorType"] = "TRIM_HORIZON"
        iterator = self.streams.get_shard_iterator(**args)["ShardIterator"]
        return self.streams.get_records(ShardIterator=iterator, Limit=limit).get("Records", [])

    def record(self, raw: dict[str, Any]) -> dict[str, Any]:
        ddb = dict(raw["dynamodb"])
        created = ddb.get("ApproximateCreationDateTime")
        if isinstance(created, datetime):
            ddb["ApproximateCreationDateTime"] = int(created.timestamp())
        return {
            "eventID": raw["eventID"],
            "eventName": raw["eventName"],
            "eventVersion": "1.1",
            "eventSource": "aws:dynamodb",
            "awsRegion": self.region,
            "dynamodb": _jsonable(ddb),
            "eventSourceARN": self.source.stream_arn,
        }

    def poll_once(self) -> int:
        if not self.source.enabled:
            return 0
        handled = 0
        for shard_id in self._shards():
            records = self._records(shard_id, self.checkpoints.get(shard_id), self.source.batch_size)
            if not records:
                continue
            handled += len(records)
            if self.source.filters:
                kept = [r for r in records if record_passes(self.source.filters, self.record(r))]
                if not kept:
                    self.checkpoints[shard_id] = records[-1]["dynamodb"]["SequenceNumber"]
                    continue
                if len(kept) < len(records):
                    # Filtered-out records are skipped; the checkpoint still moves past them.
                    last = records[-1]["dynamodb"]["SequenceNumber"]
                    records = kept
                    records_end = last
                else:
                    records_end = None
            else:
                records_end = None
            event = {"Records": [self.record(r) for r in records]}
            inv = self.invoker.invoke(self.source.function, event, "dynamodb", records=len(records))
            seqs = [r["dynamodb"]["SequenceNumber"] for r in records]
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
                self.checkpoints[shard_id] = records_end or seqs[-1]
                self.attempts.pop(shard_id, None)
                continue
            inv.failures = len(records) - first_failed
            if first_failed > 0:  # progress up to the failed record; retry from it
                self.checkpoints[shard_id] = seqs[first_failed - 1]
                self.attempts[shard_id] = 1
                continue
            self.attempts[shard_id] = self.attempts.get(shard_id, 0) + 1
            if self.attempts[shard_id] > self.source.max_retries:
                # Retries exhausted: Lambda discards the batch (to an on-failure destination).
                for raw in records:
                    self.dead_letters.append(
                        DeadLetter(
                            queue=f"stream:{self.source.table_name}",
                            message_id=raw["dynamodb"]["SequenceNumber"],
                            body=json.dumps(self.record(raw), default=str),
                            function=self.source.function,
                        )
                    )
                    log.warning(
                        "gave up on stream record %s of %s after %d attempts",
                        raw["dynamodb"]["SequenceNumber"],
                        self.source.table_name,
                        self.attempts[shard_id],
                    )
                self.checkpoints[shard_id] = seqs[-1]
                self.attempts.pop(shard_id, None)
        return handled


class DeadLetterWatch:
    """Notices messages arriving in dead-letter queues and records them (without consuming)."""

    def __init__(self, dlqs: dict[str, str], sqs: Any, dead_letters: list[DeadLetter]) -> None:
        self.dlqs = dlqs  # url -> logical id
        self.sqs = sqs
        self.dead_letters = dead_letters
        self.seen: dict[str, set[str]] = {url: set() for url in dlqs}

    def check(self) -> int:
        new = 0
        for url, logical_id in self.dlqs.items():
            count = int(
                self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])[
                    "Attributes"
                ]["ApproximateNumberOfMessages"]
            )
            if count <= len(self.seen[url]):
                continue
            peeked: list[dict[str, Any]] = []
            while True:
                got = self.sqs.receive_message(
                    QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"], VisibilityTimeout=30
                ).get("Messages", [])
                if not got:
                    break
                peeked.extend(got)
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
                    DeadLetter(
                        queue=logical_id,
                        message_id=message["MessageId"],
                        body=message["Body"],
                    )
                )
                log.warning("dead letter in %s: %s", logical_id, message["MessageId"])
                new += 1
        return new
