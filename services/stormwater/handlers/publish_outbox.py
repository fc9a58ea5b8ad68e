"""Publishes stormwater's event-bearing items to the bus. Trigger: the table's stream."""

from __future__ import annotations

from typing import Any

from stormwater import composition
from stormwater.adapters.outbox import event_records


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    failed = composition.outbox_publisher().publish(event_records(event.get("Records", [])))
    return {"batchItemFailures": [{"itemIdentifier": seq} for seq in failed]}
