"""An event that requires a notice arrived (billing's bills and legal notices, stormwater's
credit revocations and decision letters). Billing's bills come in chunks (``BillsIssued``):
each bill is handled as its own ``BillIssued``, and one bill's failure never stops the rest
(``common.handling.each_member``).

Trigger: EventBridge rule on the sewerbill bus -> SQS queue (+DLQ) -> here. A send that
fails is retried by the queue (its receive count is the attempt) and dead-lettered after
``maxReceiveCount``; the notice log keeps the failure for the failed-notices report.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from billing.events import BillIssued, BillsIssued, chunk_bills
from common.errors import TransientError
from common.events import Event
from common.handling import consume_sqs, each_member
from common.messages import MalformedMessage, parse_envelope
from common.observability import Counts, count, logger, observed
from notices import composition
from notices.app.delivery import CONSUMED, Outcome, batched, deliver_bills, handle_event
from notices.domain.delivery import SendFailed

E = TypeVar("E", bound=Event)


def record_handler(record: SQSRecord) -> None:
    envelope = parse_envelope(record.body)
    attempt = int(record.attributes.approximate_receive_count or 1)
    if envelope.detail_type == BillsIssued.detail_type():
        # A chunk of issued bills: each is validated and handled as its own BillIssued
        # (idempotent by it), so a malformed bill costs only itself.
        try:
            bills = chunk_bills(envelope.detail)
        except ValueError as exc:
            raise MalformedMessage(f"{envelope.detail_type}: {exc}") from None
        _handle_bills(bills, attempt)
        return
    event_type = CONSUMED.get(envelope.detail_type)
    if event_type is None:
        raise MalformedMessage(f"notices does not consume {envelope.source}/{envelope.detail_type}")
    _handle(_validated(event_type, envelope.detail_type, envelope.detail), attempt)


def _validated(event_type: type[E], detail_type: str, detail: Any) -> E:
    try:
        return event_type.model_validate(detail)
    except ValueError as exc:
        raise MalformedMessage(f"{detail_type}: {exc}") from None


def _handle_bills(bills: list[tuple[str, Any]], attempt: int) -> None:
    """A chunk's bills: those delivered on their own together (``deliver_bills``), the
    others (a Pleasant Prairie bill held for its combined document, Sullivan's annual notice)
    one at a time; each bill's error is its own (``each_member``)."""
    book = composition.tariff_book()
    members: list[tuple[str, Callable[[], None]]] = []
    together: list[tuple[str, BillIssued]] = []
    for key, detail in bills:
        try:
            event = _validated(BillIssued, f"BillsIssued {key}", detail)
        except MalformedMessage as exc:
            members.append((key, functools.partial(_raise, exc)))
            continue
        if batched(event, book):
            together.append((key, event))
        else:
            members.append((key, functools.partial(_handle, event, attempt)))
    if together:
        outcomes = deliver_bills(
            [event for _, event in together],
            ports=composition.bill_ports(),
            clock=composition.clock(),
            attempt=attempt,
        )
        for (key, _), outcome in zip(together, outcomes, strict=True):
            members.append((key, functools.partial(_counted, outcome)))
    each_member(members)


def _raise(exc: Exception) -> None:
    raise exc


def _counted(outcome: Outcome | Exception) -> None:
    """A bill of a chunk delivered together: counted as :func:`_handle` counts one."""
    if isinstance(outcome, Exception):
        if isinstance(outcome, TransientError):
            count(Counts.NOTICES_FAILED)
        raise outcome
    count(Counts.NOTICES_SENT, outcome.sent)
    logger.info("notices handled", extra=outcome.__dict__)


def _handle(event: Event, attempt: int) -> None:
    try:
        outcome = handle_event(
            event,
            contacts=composition.contacts(),
            ports=composition.ports(),
            clock=composition.clock(),
            book=composition.tariff_book(),
            attempt=attempt,
            holds=composition.bill_holds(),
        )
    except TransientError as exc:
        if isinstance(exc.__cause__, SendFailed):  # the send failed: retried by the queue
            count(Counts.NOTICES_FAILED)
        raise
    count(Counts.NOTICES_SENT, outcome.sent)
    logger.info("notices handled", extra=outcome.__dict__)


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
