"""The audit store's consumer (X-AUDIT): every event on the bus, kept once by its id.

Trigger: every ``sewerbill.*`` event on the custom bus -> rule -> SQS -> here. Each event is
written as an ``AUDIT`` item of billing's table (``billing.adapters.audit``): who (the
envelope's ``actor``), when, what (source, detail-type, detail) and why (``reason``). A
redelivery, or an event an outbox published twice, finds its item there and changes nothing.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from billing import composition
from common.handling import consume_sqs
from common.messages import MalformedMessage, parse_envelope
from common.observability import observed


def record_handler(record: SQSRecord) -> None:
    parse_envelope(record.body)  # an EventBridge event, or a permanent error
    envelope = json.loads(record.body)
    if not isinstance(envelope.get("detail"), dict):
        raise MalformedMessage("an audited event's detail must be an object")
    composition.audit_log().keep(envelope)


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
