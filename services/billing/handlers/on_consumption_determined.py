"""Metering determined accounts' consumption: keep it for billing (event-carried state).

Trigger: ``sewerbill.metering``/``ConsumptionDetermined`` (one consumption) or
``ConsumptionsDetermined`` (a chunk of a file's consumptions, issue 7) on the custom bus ->
rule -> SQS. Idempotent by business key: the same consumption twice changes nothing.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from billing import composition
from common.handling import consume_sqs
from common.messages import event_of, parse_envelope
from common.observability import logger, observed
from metering.events import ConsumptionDetermined, ConsumptionsDetermined


def record_handler(record: SQSRecord) -> None:
    envelope = parse_envelope(record.body)
    if envelope.detail_type == ConsumptionsDetermined.detail_type():
        consumptions = event_of(envelope, ConsumptionsDetermined).consumptions
    else:
        consumptions = (event_of(envelope, ConsumptionDetermined),)
    keep = composition.keep_consumption_use_case()
    stored = keep(consumptions)
    logger.debug("consumptions kept", extra={"kept": stored, "received": len(consumptions)})


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
