"""A billing-cycle schedule fired for one tenant: record the cycle, fan out its accounts.

Trigger: EventBridge Scheduler (one schedule per tenant, template.yaml) -> SQS -> here; the
message body is the schedule's Input ``{"tenant": ..., "scheduled_time": ...}``. The cycle
is recorded once per (tenant, period); its accounts go to the issue-bills queue in chunks
(never one message per account). Running it again finishes a cycle that crashed.
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
    chunks = composition.run_cycle_use_case()(request)
    logger.info("billing cycle fanned out", extra={"tenant": request.tenant, "chunks": chunks})


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
