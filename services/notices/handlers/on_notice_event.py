"""An event that requires a notice arrived (billing's bills and legal notices, stormwater's
credit revocations and decision letters).

Trigger: EventBridge rule on the sewerbill bus -> SQS queue (+DLQ) -> here. A send that
fails is retried by the queue (its receive count is the attempt) and dead-lettered after
``maxReceiveCount``; the notice log keeps the failure for the failed-notices report.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from common.handling import consume_sqs
from common.messages import MalformedMessage, parse_envelope
from common.observability import Counts, count, logger, observed
from notices import composition
from notices.usecases import CONSUMED, handle_event


def record_handler(record: SQSRecord) -> None:
    envelope = parse_envelope(record.body)
    event_type = CONSUMED.get(envelope.detail_type)
    if event_type is None:
        raise MalformedMessage(f"notices does not consume {envelope.source}/{envelope.detail_type}")
    try:
        event = event_type.model_validate(envelope.detail)
    except ValueError as exc:
        raise MalformedMessage(f"{envelope.detail_type}: {exc}") from None
    outcome = handle_event(
        event,
        contacts=composition.contacts(),
        ports=composition.ports(),
        clock=composition.clock(),
        book=composition.tariff_book(),
        attempt=int(record.attributes.approximate_receive_count or 1),
        holds=composition.bill_holds(),
    )
    count(Counts.NOTICES_SENT, outcome.sent)
    logger.info("notices handled", extra=outcome.__dict__)


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
