"""Metering determined an account's consumption: keep it for billing (event-carried state).

Trigger: ``sewerbill.metering``/``ConsumptionDetermined`` on the custom bus -> rule -> SQS.
Idempotent by business key: the same event twice changes nothing.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from billing import composition
from common.messages import parse_event
from metering.events import ConsumptionDetermined

logger = Logger()
# Always answer with batchItemFailures, even when every record failed.
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def record_handler(record: SQSRecord) -> None:
    event = parse_event(record.body, ConsumptionDetermined)
    stored = composition.keep_consumption_use_case()(event)
    logger.debug(
        "consumption kept" if stored else "consumption already kept", extra={"key": event.business_key()}
    )


def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
