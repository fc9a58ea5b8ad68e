"""The billing table's stream as outbox: outbox items and issued bills (``BillIssued``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from billing.adapters.items import bill_of
from common.dynamo import from_item
from common.outbox import OutboxPublisher, OutboxRecord, outbox_records


def bill_records(stream_records: Iterable[Mapping[str, Any]]) -> list[OutboxRecord]:
    from billing.usecases import bill_issued_event

    found: list[OutboxRecord] = []
    for record in stream_records:
        if record.get("eventName") != "INSERT":
            continue
        change = record.get("dynamodb") or {}
        image = change.get("NewImage") or {}
        if not image.get("pk", {}).get("S", "").startswith("BILLS#") or "notice" not in image:
            continue
        item = from_item(image)
        event = bill_issued_event(
            bill_of(item), json.loads(item["notice"]), datetime.fromisoformat(item["issued_at"])
        )
        found.append(
            OutboxRecord(
                sequence_number=str(change.get("SequenceNumber", "")),
                source=event.SOURCE,
                detail_type=event.detail_type(),
                detail=event.detail_json(),
            )
        )
    return found


class BillOutboxPublisher(OutboxPublisher):
    def handle_stream_event(self, event: Mapping[str, Any]) -> dict[str, list[dict[str, str]]]:
        records = event.get("Records", [])
        failed = self.publish(outbox_records(records) + bill_records(records))
        return {"batchItemFailures": [{"itemIdentifier": seq} for seq in failed]}
