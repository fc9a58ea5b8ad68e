"""Metering determined an account's consumption: keep it for billing (event-carried state).

Trigger: ``sewerbill.metering``/``ConsumptionDetermined`` on the custom bus -> rule -> SQS.
Idempotent by business key: the same event twice changes nothing.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from billing import composition
from common.handling import consume_sqs
from common.messages import parse_event
from common.observability import logger, observed
from metering.events import ConsumptionDetermined


def record_handler(record: SQSRecord) -> None:
    event = parse_event(record.body, ConsumptionDetermined)
    stored = composition.keep_consumption_use_case()(event)
    logger.debug(
        "consumption kept" if stored else "consumption already kept", extra={"key": event.business_key()}
    )


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
