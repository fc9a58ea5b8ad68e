"""The daily tariff check fired: apply a new stormwater tariff version to every parcel.

Trigger: EventBridge Scheduler (daily, template.yaml) -> SQS -> here; body is the
schedule's Input ``{"scheduled_time": ...}``. Idempotent: a version is applied once.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import AwareDatetime, BaseModel, ValidationError

from common.handling import consume_sqs
from common.messages import MalformedMessage, first_error
from stormwater import composition

logger = Logger()


class TariffCheckScheduled(BaseModel):
    scheduled_time: AwareDatetime


def record_handler(record: SQSRecord) -> None:
    try:
        TariffCheckScheduled.model_validate_json(record.body)
    except ValidationError as exc:
        raise MalformedMessage(f"tariff check input: {first_error(exc)}") from None
    results = composition.apply_tariff_versions()()
    logger.info("tariff versions checked", extra={"results": [r.__dict__ for r in results]})


def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
