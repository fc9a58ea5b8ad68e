"""Metering's daily run: estimate missing reads (X-PERIOD) and publish last month's
satellite flow (PP-SEW-SAT-FLOW).

Trigger: EventBridge Scheduler (daily, America/Chicago) -> SQS -> here. Idempotent: a
period is determined once and event ids are derived from their business keys.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import AwareDatetime, BaseModel, ConfigDict, ValidationError

from common.handling import consume_sqs
from common.messages import MalformedMessage, first_error
from common.observability import logger, observed
from metering import composition


class DailyRunScheduled(BaseModel):
    """The Input of the daily schedule (template.yaml ``MeteringDailySchedule``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scheduled_time: AwareDatetime


def record_handler(record: SQSRecord) -> None:
    try:
        run = DailyRunScheduled.model_validate_json(record.body)
    except ValidationError as exc:
        raise MalformedMessage(f"daily run: {first_error(exc)}") from None
    estimated, satellites = composition.run_daily(run.scheduled_time.date().isoformat())
    logger.info("daily run", extra={"estimated": estimated, "satellite_months": satellites})


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
