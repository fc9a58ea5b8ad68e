"""Publishes billing's outbox to the bus. Trigger: the billing table's DynamoDB stream."""

from __future__ import annotations

from typing import Any

from billing import composition
from common.observability import observed


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return composition.outbox_publisher().handle_stream_event(event)
