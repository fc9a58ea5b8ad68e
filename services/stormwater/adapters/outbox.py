"""Stormwater's outbox is its own state (STYLE 17: one fact, one item).

An item that IS an event's fact (a determination ``ERU#<sequence>``, a fee ``FEE#<id>``, a
taken-in file, a credit state, a decision) carries the event's ``source``, ``detail_type``
and ``detail`` beside its own attributes. The table's stream (NEW_IMAGE, INSERTs of items
with ``detail_type``; see the template's filter) feeds ``publish_outbox``, which sends them
to the bus with the common :class:`~common.outbox.OutboxPublisher`. A rewrite of the same
key (a retry) is a MODIFY, so an event is published once per fact.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from common.dynamo import from_item
from common.events import Event
from common.observability import current_actor
from common.outbox import OutboxRecord

EVENT_ATTRIBUTE = "detail_type"


def event_attributes(event: Event) -> dict[str, Any]:
    event = event.attributed(current_actor())  # who did it (X-AUDIT)
    return {
        "source": event.SOURCE,
        "detail_type": event.detail_type(),
        "detail": event.detail_json(),
        "event_id": event.event_id,
    }


def event_records(stream_records: Iterable[Mapping[str, Any]]) -> list[OutboxRecord]:
    """The event-bearing INSERTs among Lambda DynamoDB stream records, in stream order."""
    found: list[OutboxRecord] = []
    for record in stream_records:
        if record.get("eventName") != "INSERT":
            continue
        change = record.get("dynamodb") or {}
        image = change.get("NewImage") or {}
        if EVENT_ATTRIBUTE not in image:
            continue
        item = from_item({k: image[k] for k in ("source", "detail_type", "detail") if k in image})
        found.append(
            OutboxRecord(
                sequence_number=str(change.get("SequenceNumber", "")),
                source=item["source"],
                detail_type=item["detail_type"],
                detail=item["detail"],
            )
        )
    return found
