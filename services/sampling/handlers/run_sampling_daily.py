"""Sampling's daily schedule fired: 24-month exits, satellite reminders and breaches, report reminders.

Trigger: EventBridge Scheduler (daily, template.yaml) -> SQS -> here; body is the
schedule's Input ``{"scheduled_time": ...}``. The day is the utility's local date of the
scheduled time (time is an input); every event it produces is published once per
business key, so a redelivery changes nothing.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import AwareDatetime, BaseModel, ConfigDict, ValidationError

from common.handling import consume_sqs
from common.messages import MalformedMessage, first_error
from common.observability import logger, observed
from sampling import composition
from sampling.domain.intake import local_today


class SamplingDayScheduled(BaseModel):
    """The Input of sampling's daily schedule."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scheduled_time: AwareDatetime


def record_handler(record: SQSRecord) -> None:
    try:
        request = SamplingDayScheduled.model_validate_json(record.body)
    except ValidationError as exc:
        raise MalformedMessage(f"sampling daily input: {first_error(exc)}") from None
    run = composition.service().run_daily(local_today(request.scheduled_time))
    logger.info("sampling daily run", extra={"run": run.__dict__})


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
