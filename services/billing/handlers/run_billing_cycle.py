"""A billing-cycle schedule fired for one tenant: record the cycle and announce it.

Trigger: EventBridge Scheduler (one schedule per tenant, template.yaml) -> SQS -> here; the
message body is the schedule's Input ``{"tenant": ..., "scheduled_time": ...}``.
Idempotent per (tenant, period). Rating accounts and issuing bills are NOT done here yet:
they come with the rating-engine issue, which will consume ``BillingCycleStarted``.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import ValidationError

from billing import composition
from billing.domain.cycles import CycleScheduled
from common.handling import consume_sqs
from common.messages import MalformedMessage, first_error
from common.observability import logger, observed


def record_handler(record: SQSRecord) -> None:
    try:
        request = CycleScheduled.model_validate_json(record.body)
    except ValidationError as exc:
        raise MalformedMessage(f"billing cycle input: {first_error(exc)}") from None
    started = composition.start_billing_cycle_use_case()(request)
    logger.info(
        "billing cycle started" if started else "billing cycle already started",
        extra={"tenant": request.tenant},
    )


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
