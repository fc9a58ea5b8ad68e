"""The daily assessment schedule fired: record the day it ran for.

Trigger: EventBridge Scheduler (daily, template.yaml) -> SQS -> here; body is the
schedule's Input ``{"scheduled_time": ...}``. Idempotent per tenant-local date. Late
charges, overdue and delinquency come with the payments issue; nothing is assessed yet.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import ValidationError

from billing import composition
from billing.domain.cycles import AssessmentScheduled
from common.handling import consume_sqs
from common.messages import MalformedMessage, first_error
from common.observability import logger, observed


def record_handler(record: SQSRecord) -> None:
    try:
        request = AssessmentScheduled.model_validate_json(record.body)
    except ValidationError as exc:
        raise MalformedMessage(f"daily assessment input: {first_error(exc)}") from None
    recorded = composition.daily_assessment_use_case()(request)
    logger.info("assessment recorded" if recorded else "assessment already recorded")


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
