"""Logs, metrics and traces for every function, wired once with Powertools.

Every handler adds ONE line on its entry point::

    from common.observability import observed

    @observed                      # SQS, stream and schedule handlers
    def lambda_handler(event, context): ...

    @observed(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)   # HTTP API handlers
    def lambda_handler(event, context): ...

``observed`` is Powertools' ``Logger.inject_lambda_context`` (request id, function name,
cold start on every log line; state cleared between invocations), ``Metrics.log_metrics``
(the counts below flushed as CloudWatch embedded metric format, namespace
:data:`NAMESPACE`, dimension ``service`` from ``POWERTOOLS_SERVICE_NAME``, plus a
``ColdStart`` count) and ``Tracer.capture_lambda_handler`` (X-Ray, ``Tracing: Active`` in
the template; off outside Lambda).

Business counts: ``count(Counts.READS_ACCEPTED, n)`` from a handler (one line, after its
use case returned). The names are fixed here so dashboards do not drift.

Correlation: one id follows a piece of work across services. ``consume_sqs`` calls
:func:`correlate` for each record with the id the incoming event carries (its
``detail.correlation_id``, else the EventBridge event id, else the SQS message id); the
logger shows it as ``correlation_id`` and every event written to an outbox or published as
a rejection while it is set carries it (``common.events.Event.correlation_id``).

Actor (X-AUDIT): each invocation starts with the function's own name as its actor (the
system's own work); a portal route's check of its token (``common.authz.require``) makes
the token's ``sub`` the actor for the rest of the request. Every event written to an outbox
names it (``common.events.Event.actor``).
"""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import StrEnum
from typing import Any, TypeVar, overload

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

NAMESPACE = "sewerbill"  # = POWERTOOLS_METRICS_NAMESPACE in template.yaml Globals

logger = Logger()  # service: POWERTOOLS_SERVICE_NAME, set per function in the template
metrics = Metrics(namespace=NAMESPACE)
tracer = Tracer()

# An invocation that counted nothing (a health check, an empty batch) is normal, not news.
warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)


class Counts(StrEnum):
    """The business counts every service emits (CloudWatch metric names)."""

    READS_ACCEPTED = "ReadsAccepted"
    READS_REJECTED = "ReadsRejected"
    BILLS_ISSUED = "BillsIssued"
    NOTICES_SENT = "NoticesSent"
    NOTICES_FAILED = "NoticesFailed"  # a send that failed (retried; the notice log keeps it)
    MESSAGES_REJECTED = "MessagesRejected"  # permanent errors, acknowledged (common.handling)
    MESSAGES_RETRIED = "MessagesRetried"  # transient errors, returned to the queue
    DEAD_LETTERS = "DeadLetters"  # a failed record on its queue's last receive


def count(name: Counts, value: int = 1) -> None:
    """Add ``value`` to the business count ``name`` for this invocation (flushed by @observed)."""
    if value:
        metrics.add_metric(name=str(name), unit=MetricUnit.Count, value=value)


H = TypeVar("H", bound=Callable[..., Any])


@overload
def observed(handler: H) -> H: ...
@overload
def observed(*, correlation_id_path: str | None = None) -> Callable[[H], H]: ...
def observed(handler: H | None = None, *, correlation_id_path: str | None = None) -> Any:
    """Wrap a Lambda entry point with the Logger, Metrics and Tracer of this module."""

    def wrap(fn: H) -> H:
        def acting(event: Any, context: Any, *args: Any, **kwargs: Any) -> Any:
            token = _actor.set(getattr(context, "function_name", None) or None)
            try:
                return fn(event, context, *args, **kwargs)
            finally:
                _actor.reset(token)

        functools.update_wrapper(acting, fn)
        with_logs = logger.inject_lambda_context(
            acting, correlation_id_path=correlation_id_path, clear_state=True
        )
        with_metrics = metrics.log_metrics(with_logs, capture_cold_start_metric=True)
        # Tracing off (no Lambda task root, as outside Lambda, or POWERTOOLS_TRACE_DISABLED):
        # the handler's subsegment would be X-Ray's dummy, built and dropped on every
        # invocation, so the handler is not wrapped at all. In Lambda, tracing on, it is.
        traced = (
            with_metrics
            if tracer.disabled
            else tracer.capture_lambda_handler(with_metrics, capture_response=False)
        )
        entry = functools.wraps(fn)(traced)
        entry.__observed__ = True  # type: ignore[attr-defined]  # checked by tests/template
        return entry  # type: ignore[return-value]

    return wrap(handler) if handler is not None else wrap


# --- actor ------------------------------------------------------------------------------
_actor: ContextVar[str | None] = ContextVar("sewerbill_actor", default=None)


def current_actor() -> str | None:
    """Who the work in progress is done by: the token's ``sub`` once a route checked it
    (:func:`act_as`), else the running function's name (set by :func:`observed`)."""
    return _actor.get()


def act_as(actor: str | None) -> None:
    """The rest of this invocation is done by ``actor`` (a token's ``sub``)."""
    if actor:
        _actor.set(actor)


# --- correlation ------------------------------------------------------------------------
_correlation_id: ContextVar[str | None] = ContextVar("sewerbill_correlation_id", default=None)


def current_correlation_id() -> str | None:
    """The correlation id of the work in progress: set by a consumer for its record, or
    taken by ``@observed(correlation_id_path=...)`` from the request."""
    return _correlation_id.get() or logger.get_correlation_id()


@contextmanager
def correlate(correlation_id: str | None) -> Iterator[None]:
    """Within the block, logs and published events carry ``correlation_id``."""
    token = _correlation_id.set(correlation_id)
    logger.set_correlation_id(correlation_id)
    try:
        yield
    finally:
        _correlation_id.reset(token)
        logger.set_correlation_id(None)


def correlation_id_of(body: str | None, message_id: str) -> str:
    """The id a message continues: its event's ``correlation_id``, else the event's own id
    (an S3 notification or a first event starts a chain), else the SQS message id (a
    schedule's input)."""
    try:
        parsed = json.loads(body or "")
    except ValueError:
        return message_id
    if isinstance(parsed, dict):
        detail = parsed.get("detail")
        if isinstance(detail, dict) and isinstance(detail.get("correlation_id"), str):
            return str(detail["correlation_id"])
        if isinstance(parsed.get("id"), str) and "detail-type" in parsed:
            return str(parsed["id"])
    return message_id
