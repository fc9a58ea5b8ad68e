"""How every SQS-fed function consumes its batch: errors end where they belong (STYLE 11).

:func:`consume_sqs` runs a record handler over a Lambda SQS event with Powertools' batch
processor and reports partial batch failures. It sorts failures in one place:

- a :class:`~common.errors.PermanentError` (bad data, unknown tenant, a message that is not
  what the queue expects) can never succeed: it is logged at error level with its cause
  and the message's id, published as a ``MessageRejected`` event (so it is recorded and
  visible), and the message is acknowledged;
- anything else is transient: the record is reported as failed, SQS redelivers it, and
  after the queue's ``maxReceiveCount`` it reaches the DLQ. If publishing a rejection
  fails, the record is failed too (retried), so no rejection is lost.

Each record is processed under its correlation id (``common.observability.correlate``),
and the counts ``MessagesRejected``, ``MessagesRetried`` and ``DeadLetters`` (a failure on
the queue's last receive, ``MAX_RECEIVE_COUNT`` in the template) are emitted; decorate the
entry point with ``@observed`` so they are flushed.

Handlers stay thin::

    def lambda_handler(event, context):
        return consume_sqs(event, context, record_handler, rejections=composition.rejections())

    lambda_handler = observed(lambda_handler)   # or @observed on the def
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from botocore.exceptions import BotoCoreError, ClientError

from common.clock import Clock
from common.errors import PermanentError, TransientError
from common.events import Event
from common.observability import Counts, correlate, correlation_id_of, count, current_correlation_id, logger

BODY_EXCERPT_CHARS = 2_000  # keeps MessageRejected far below EventBridge's 256 KB


class MessageRejected(Event):
    """A message its consumer can never process, acknowledged instead of retried.

    ``service`` is the consumer (the event's source is ``sewerbill.<service>``); ``reason``
    is the permanent error's text and ``error`` its class, so staff can tell what to fix.
    """

    SOURCE: ClassVar[str] = "sewerbill.common"
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("service", "message_id")

    service: str
    function: str
    message_id: str
    error: str
    reason: str
    body_excerpt: str


class RejectionSink(Protocol):
    service: str
    clock: Clock
    # The queue's maxReceiveCount, to tell a retry from a dead letter (None: unknown).
    max_receive_count: int | None

    def reject(self, rejection: MessageRejected) -> None: ...


class EventBridgeRejections:
    """Publishes rejections straight to the bus (a rejection changes no state to commit)."""

    def __init__(
        self,
        events_client: Any,
        bus_name: str,
        service: str,
        clock: Clock,
        max_receive_count: int | None = None,
    ) -> None:
        self._events = events_client
        self._bus = bus_name
        self.service = service
        self.clock = clock
        self.max_receive_count = max_receive_count

    def reject(self, rejection: MessageRejected) -> None:
        entry = rejection.put_events_entry(self._bus)
        entry["Source"] = f"sewerbill.{self.service}"
        try:
            response = self._events.put_events(Entries=[entry])
        except (ClientError, BotoCoreError) as exc:
            raise TransientError(f"could not publish MessageRejected: {exc}") from exc
        if response.get("FailedEntryCount"):
            raise TransientError(f"MessageRejected not accepted: {response.get('Entries')}")


def consume_sqs(
    event: Mapping[str, Any],
    context: Any,
    record_handler: Callable[[SQSRecord], Any],
    *,
    rejections: RejectionSink,
) -> PartialItemFailureResponse:
    """Process an SQS batch; permanent errors are rejected and acknowledged (module doc)."""
    function = getattr(context, "function_name", "") or ""

    last_receive = getattr(rejections, "max_receive_count", None)

    def guarded(record: SQSRecord) -> Any:
        with correlate(correlation_id_of(record.body, record.message_id)):
            try:
                return record_handler(record)
            except PermanentError as exc:
                logger.error(
                    "message rejected",
                    extra={"message_id": record.message_id, "error": type(exc).__name__, "reason": str(exc)},
                )
                rejections.reject(
                    MessageRejected(
                        occurred_at=rejections.clock.now(),
                        correlation_id=current_correlation_id(),
                        service=rejections.service,
                        function=function,
                        message_id=record.message_id,
                        error=type(exc).__name__,
                        reason=str(exc)[:BODY_EXCERPT_CHARS],
                        body_excerpt=(record.body or "")[:BODY_EXCERPT_CHARS],
                    )
                )
                count(Counts.MESSAGES_REJECTED)
                return None
            except Exception as exc:
                receives = int(record.attributes.approximate_receive_count or 0)
                dead = last_receive is not None and receives >= last_receive
                logger.exception(
                    "message failed on its last receive: it goes to the DLQ"
                    if dead
                    else "message failed, will be retried",
                    extra={
                        "message_id": record.message_id,
                        "error": type(exc).__name__,
                        "receives": receives,
                    },
                )
                count(Counts.DEAD_LETTERS if dead else Counts.MESSAGES_RETRIED)
                raise

    # A fresh processor per batch; always answer with batchItemFailures, even when all failed.
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    return process_partial_response(
        event=dict(event), record_handler=guarded, processor=processor, context=context
    )


def rejections_for(service: str) -> EventBridgeRejections:
    """The rejection sink a composition root builds at cold start (``@cold_start`` it)."""
    import boto3

    from common.clock import RuntimeClock
    from common.config import FunctionConfig, load

    config = load(FunctionConfig)
    return EventBridgeRejections(
        boto3.client("events"), config.event_bus_name, service, RuntimeClock(), config.max_receive_count
    )
