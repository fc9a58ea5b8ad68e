"""Publishes sampling's outbox to the bus. Trigger: the sampling table's DynamoDB stream."""

from __future__ import annotations

from typing import Any

from sampling import composition


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return composition.outbox_publisher().handle_stream_event(event)
