"""Publishes sampling's outbox to the bus. Trigger: the sampling table's DynamoDB stream."""

from __future__ import annotations

from typing import Any

from common.observability import observed
from sampling import composition


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return composition.outbox_publisher().handle_stream_event(event)
