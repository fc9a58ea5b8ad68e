"""The transactional outbox (DESIGN "Flow": an event is never lost once its cause committed).

Writing: :func:`outbox_put` returns a TransactWriteItems action that appends the event to
the service's own table, in the SAME transaction as the state change that caused it
(item key ``pk = OUTBOX#<event_id>``, ``sk = OUTBOX``).

Publishing: the table's stream (NEW_IMAGE) feeds that service's ``publish_outbox``
function, which hands the records to :class:`OutboxPublisher`. It keeps only INSERTs of
outbox items, sends them to the bus with PutEvents in batches of 10 and reports the
records it could not send as batch item failures, so the stream redelivers them. A crash
between commit and publish therefore only delays an event; a redelivery can publish an
event twice, which consumers absorb because they are idempotent by business key.

Outbox items expire through the table's TTL attribute ``expires_at``; the resulting
REMOVE stream records are ignored.

An item may also carry its own event (:func:`embedded_event`: ``outbox_source``,
``outbox_detail_type``, ``outbox_detail``), so that a state change and its event are one
item and one write (notices' log: a notice and its ``NoticeSent``). Such an item is
published on each INSERT and MODIFY of it (its table's stream filter passes those), since
each write of it is a new state with its own event; it never expires with the outbox.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from common.dynamo import from_item, put_if_absent
from common.events import Event, entry
from common.observability import current_actor, current_correlation_id

OUTBOX_PREFIX = "OUTBOX#"
OUTBOX_SK = "OUTBOX"
PUT_EVENTS_MAX = 10
KEEP_FOR = timedelta(days=7)


def stamped(event: Event) -> Event:
    """``event`` continuing the work in progress: it carries the running correlation id and
    names who does it (X-AUDIT), unless it has its own; one copy of it at most."""
    update: dict[str, str] = {}
    correlation_id = current_correlation_id()
    if correlation_id and not event.correlation_id:
        update["correlation_id"] = correlation_id
    actor = current_actor()
    if actor and not event.actor:
        update["actor"] = actor[:256]
    return event.model_copy(update=update) if update else event


def outbox_item(event: Event, *, now: datetime) -> dict[str, Any]:
    event = stamped(event)
    return {
        "pk": f"{OUTBOX_PREFIX}{event.event_id}",
        "sk": OUTBOX_SK,
        "source": event.SOURCE,
        "detail_type": event.detail_type(),
        "detail": event.detail_json(),
        "business_key": event.business_key(),
        "created_at": now.isoformat(),
        "expires_at": int((now + KEEP_FOR).timestamp()),
    }


EMBEDDED = ("outbox_source", "outbox_detail_type", "outbox_detail")


def embedded_event(event: Event) -> dict[str, str]:
    """The attributes that make an item carry ``event`` as its own outbox entry."""
    event = stamped(event)
    return dict(zip(EMBEDDED, (event.SOURCE, event.detail_type(), event.detail_json()), strict=True))


def outbox_put(table: str, event: Event, *, now: datetime) -> dict[str, Any]:
    """The TransactWriteItems action appending ``event`` to ``table``'s outbox."""
    return put_if_absent(table, outbox_item(event, now=now))


@dataclass(frozen=True)
class OutboxRecord:
    sequence_number: str
    source: str
    detail_type: str
    detail: str


def outbox_records(stream_records: Iterable[Mapping[str, Any]]) -> list[OutboxRecord]:
    """The outbox INSERTs among Lambda DynamoDB stream records, and the INSERTs and MODIFYs
    of items carrying their own event (:func:`embedded_event`), in stream order."""
    found: list[OutboxRecord] = []
    for record in stream_records:
        name = record.get("eventName")
        change = record.get("dynamodb") or {}
        image = change.get("NewImage") or {}
        if name in ("INSERT", "MODIFY") and EMBEDDED[1] in image:
            own = from_item(image)
            found.append(
                OutboxRecord(
                    sequence_number=str(change.get("SequenceNumber", "")),
                    source=own[EMBEDDED[0]],
                    detail_type=own[EMBEDDED[1]],
                    detail=own[EMBEDDED[2]],
                )
            )
            continue
        if name != "INSERT":
            continue
        pk = image.get("pk", {}).get("S", "")
        if not pk.startswith(OUTBOX_PREFIX):
            continue
        item = from_item(image)
        found.append(
            OutboxRecord(
                sequence_number=str(change.get("SequenceNumber", "")),
                source=item["source"],
                detail_type=item["detail_type"],
                detail=item["detail"],
            )
        )
    return found


class OutboxPublisher:
    """Sends outbox records to the bus, 10 per PutEvents call."""

    def __init__(self, events_client: Any, bus_name: str) -> None:
        self._events = events_client
        self._bus = bus_name

    def publish(self, records: list[OutboxRecord]) -> list[str]:
        """Publish ``records``; return the sequence numbers of those not accepted."""
        failed: list[str] = []
        for start in range(0, len(records), PUT_EVENTS_MAX):
            chunk = records[start : start + PUT_EVENTS_MAX]
            entries = [
                entry(source=r.source, detail_type=r.detail_type, detail=r.detail, bus_name=self._bus)
                for r in chunk
            ]
            try:
                resp = self._events.put_events(Entries=entries)
            except ClientError:
                failed.extend(r.sequence_number for r in chunk)
                continue
            for record, result in zip(chunk, resp.get("Entries", []), strict=False):
                if result.get("ErrorCode"):
                    failed.append(record.sequence_number)
            # Fewer results than entries would be a broken response: treat the rest as failed.
            failed.extend(r.sequence_number for r in chunk[len(resp.get("Entries", [])) :])
        return failed

    def handle_stream_event(self, event: Mapping[str, Any]) -> dict[str, list[dict[str, str]]]:
        """A Lambda DynamoDB-stream handler body with partial batch failure reporting."""
        failed = self.publish(outbox_records(event.get("Records", [])))
        return {"batchItemFailures": [{"itemIdentifier": seq} for seq in failed]}
