"""Publishes billing's outbox to the bus. Trigger: the billing table's DynamoDB stream.

Two kinds of INSERT are published: outbox items (``common.outbox``) and issued bills,
whose item is their own outbox (one fact, one item): a batch's bills go out packed, as
``BillsIssued`` chunks of one tenant's bills (``billing.adapters.bill_outbox``).
"""

from __future__ import annotations

from typing import Any

from billing import composition
from common.observability import observed


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return composition.bill_outbox_publisher().handle_stream_event(event)
