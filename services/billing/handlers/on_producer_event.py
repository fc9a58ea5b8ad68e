"""Sampling's and stormwater's events, kept for billing (event-carried state).

Trigger: ``sewerbill.sampling`` / ``sewerbill.stormwater`` events on the custom bus -> rule
-> SQS -> here. Each kept item records the event it came from; a redelivery changes
nothing (kept by business key). Consumers import only the producers' ``events`` modules.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from billing import composition
from common.handling import consume_sqs
from common.messages import MalformedMessage, parse_envelope, parse_event
from common.observability import observed
from sampling.events import (
    SamplingCostCharged,
    SamplingCostsCharged,
    StrengthCategoryChanged,
    StrengthClassified,
)
from stormwater.events import CreditChanged, ERUDetermined, ERUsDetermined, FeeCharged, RefundGranted

logger = Logger()

KEPT = {
    cls.detail_type(): cls
    for cls in (
        StrengthClassified,
        StrengthCategoryChanged,
        SamplingCostCharged,
        SamplingCostsCharged,
        ERUDetermined,
        ERUsDetermined,
        CreditChanged,
        FeeCharged,
        RefundGranted,
    )
}


def record_handler(record: SQSRecord) -> None:
    cls = KEPT.get(parse_envelope(record.body).detail_type)
    if cls is None:
        raise MalformedMessage(f"billing keeps no {parse_envelope(record.body).detail_type}")
    event = parse_event(record.body, cls)
    composition.keep_producer_event_use_case()(event)
    logger.debug("kept", extra={"event": cls.detail_type(), "key": event.business_key()})


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
