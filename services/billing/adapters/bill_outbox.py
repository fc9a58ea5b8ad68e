"""The billing table's stream as outbox: outbox items and issued bills (``BillIssued``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from billing.adapters.items import bill_issued_detail
from billing.events import BillIssued
from common.outbox import OutboxPublisher, OutboxRecord, outbox_records


def bill_records(stream_records: Iterable[Mapping[str, Any]]) -> list[OutboxRecord]:
    """The bill INSERTs among the stream records, each as its ``BillIssued``, in stream order.

    A bill item's event is written from the three string attributes it needs (``bill``,
    ``notice``, ``issued_at``), read straight from the stream's image."""
    found: list[OutboxRecord] = []
    for record in stream_records:
        if record.get("eventName") != "INSERT":
            continue
        change = record.get("dynamodb") or {}
        image = change.get("NewImage") or {}
        if not image.get("pk", {}).get("S", "").startswith("BILLS#") or "notice" not in image:
            continue
        found.append(
            OutboxRecord(
                sequence_number=str(change.get("SequenceNumber", "")),
                source=BillIssued.SOURCE,
                detail_type="BillIssued",
                detail=bill_issued_detail(image["bill"]["S"], image["notice"]["S"], image["issued_at"]["S"]),
            )
        )
    return found


class BillOutboxPublisher(OutboxPublisher):
    def handle_stream_event(self, event: Mapping[str, Any]) -> dict[str, list[dict[str, str]]]:
        records = event.get("Records", [])
        failed = self.publish(outbox_records(records) + bill_records(records))
        return {"batchItemFailures": [{"itemIdentifier": seq} for seq in failed]}
