"""How every SQS-fed function consumes its batch: errors end where they belong (STYLE 11).

:func:`consume_sqs` runs a record handler over a Lambda SQS event with Powertools' batch
processor and reports partial batch failures. It sorts failures in one place:

- a :class:`~common.errors.PermanentError` (bad data, unknown tenant, a message that is not
  what the queue expects) can never succeed: it is logged at error level with its cause
  and the message's id, recorded as a ``MessageRejected`` event in the service's outbox
  (its table's stream publishes it), and the message is acknowledged;
- anything else is transient: the record is reported as failed, SQS redelivers it, and
  after the queue's ``maxReceiveCount`` it reaches the DLQ. So is a fault of the deploy,
  even wrapped in a permanent error: a ``ConfigError`` (a missing variable) or an AWS
  permission refusal (``AccessDenied``; ``common.errors.misconfiguration``) is retried and
  dead-lettered, never recorded as bad data, since the same message succeeds once fixed. If publishing a rejection
  fails, the record is failed too (retried), so no rejection is lost.

A chunk message (billing's ``BillsIssued``) is handled member by member with
:func:`each_member`: one member's failure never stops the others; a transient one retries the
message (the members done are skipped by their own business keys), permanent ones are
rejected together as one :class:`MembersRejected` naming each.

Each record is processed under its correlation id (``common.observability.correlate``),
and the counts ``MessagesRejected``, ``MessagesRetried`` and ``DeadLetters`` (a failure on
the queue's last receive, ``MAX_RECEIVE_COUNT`` in the template) are emitted; decorate the
entry point with ``@observed`` so they are flushed.

Handlers stay thin::

    @observed
    def lambda_handler(event, context):
        return consume_sqs(event, context, record_handler, rejections=composition.rejections())
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Protocol, TypeVar

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    SqsFifoPartialProcessor,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from botocore.exceptions import BotoCoreError, ClientError

from common.clock import Clock, RuntimeClock
from common.config import FunctionConfig, load
from common.dynamo import put_if_absent
from common.errors import PermanentError, TransientError, misconfiguration
from common.events import Event
from common.observability import Counts, correlate, correlation_id_of, count, current_correlation_id, logger

BODY_EXCERPT_CHARS = 2_000  # keeps MessageRejected far below EventBridge's 256 KB

T = TypeVar("T")


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
            except Exception as exc:
                if isinstance(exc, PermanentError) and misconfiguration(exc) is None:
                    _reject(record, exc)
                    return None
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

    def _reject(record: SQSRecord, exc: Exception) -> None:
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

    # A fresh processor per batch; always answer with batchItemFailures, even when all failed.
    # No context for it: Powertools passes one only to a record handler that takes a
    # `lambda_context` parameter (`guarded` does not), and finding that out costs an
    # `inspect.signature` of the handler on every batch.
    # A FIFO queue's records carry their message group: after a failure the rest of that
    # group's records are failed unprocessed, so none runs ahead of one that must be retried.
    records = event.get("Records") or []
    processor: BatchProcessor
    if records and (records[0].get("attributes") or {}).get("MessageGroupId"):
        processor = SqsFifoPartialProcessor(skip_group_on_error=True)
        processor.raise_on_entire_batch_failure = False
    else:
        processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    return process_partial_response(
        event=dict(event), record_handler=guarded, processor=processor, context=None
    )


class MembersRejected(PermanentError):
    """Some members of a chunk message (a ``BillsIssued``'s bills) can never be processed;
    every other member was. The message is acknowledged and rejected once, naming each
    member refused and why."""


def each_member(members: Iterable[tuple[str, Callable[[], T]]]) -> list[T]:
    """Handle every member of a chunk message, each with its own ``(key, handle)``: one
    member's error never keeps the others from being handled. Members are handled once each
    by their own business key (as a lone event would be), so a redelivery only retries what
    failed. After all: the first transient error is raised (the message is retried), else
    the permanent errors as one :class:`MembersRejected` (recorded and acknowledged by
    :func:`consume_sqs`)."""
    results: list[T] = []
    refused: list[str] = []
    transient: Exception | None = None
    count_ = 0
    for key, handle in members:
        count_ += 1
        try:
            results.append(handle())
        except PermanentError as exc:
            refused.append(f"{key}: {type(exc).__name__}: {exc}")
        except Exception as exc:
            logger.warning("a chunk's member failed", extra={"member": key, "error": type(exc).__name__})
            transient = transient or exc
    if transient is not None:
        raise transient
    if refused:
        raise MembersRejected(f"{len(refused)} of {count_} members refused: " + "; ".join(refused))
    return results


class OutboxRejections:
    """Records a rejection in the service's own table as an outbox item; the table's stream
    publishes it (STYLE 17). The consumer needs no bus permission of its own, and a
    redelivered message records the same rejection once (its event id is the message's)."""

    def __init__(
        self,
        ddb_client: Any,
        table: str,
        service: str,
        clock: Clock,
        max_receive_count: int | None = None,
    ) -> None:
        self._ddb = ddb_client
        self._table = table
        self.service = service
        self.clock = clock
        self.max_receive_count = max_receive_count

    def reject(self, rejection: MessageRejected) -> None:
        from common.outbox import outbox_item

        event = rejection.model_copy(update={"event_id": f"rejected-{self.service}-{rejection.message_id}"})
        item = outbox_item(event, now=self.clock.now())
        item["source"] = f"sewerbill.{self.service}"
        try:
            self._ddb.put_item(**put_if_absent(self._table, item)["Put"])
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return  # already recorded by an earlier delivery of the same message
            raise TransientError(f"could not record MessageRejected: {exc}") from exc
        except BotoCoreError as exc:
            raise TransientError(f"could not record MessageRejected: {exc}") from exc


class _TableConfig(FunctionConfig):
    table_name: str


def rejections_for(service: str) -> OutboxRejections:
    """The rejection sink a composition root builds at cold start (``@cold_start`` it):
    the function's own table (``TABLE_NAME``), whose stream publishes the outbox."""
    import boto3

    config = load(_TableConfig)
    return OutboxRejections(
        boto3.client("dynamodb"), config.table_name, service, RuntimeClock(), config.max_receive_count
    )
