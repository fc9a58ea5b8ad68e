"""Parsing what arrives on a queue: the EventBridge event a rule delivered as an SQS body.

Every asynchronous trigger reaches a function the same way (DESIGN "Flow"): a rule (or a
schedule) puts a message on the function's queue. For rules the message body is the
EventBridge event; :func:`parse_event` turns it into the producer's event model and
:func:`parse_object_created` into the S3 upload it announces. A body that is not what
the queue expects raises :class:`MalformedMessage` (permanent: rejected and acknowledged
by ``common.handling.consume_sqs``, never retried).
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from aws_lambda_powertools.utilities.parser.models import (
    EventBridgeModel,
    S3EventNotificationEventBridgeModel,
)
from pydantic import BaseModel, ConfigDict, ValidationError

from common.errors import PermanentError
from common.events import Event


class MalformedMessage(PermanentError):
    """A message that is not the event its queue expects; retrying cannot fix it."""


class Envelope(EventBridgeModel):
    """EventBridge event as delivered to a queue (``detail`` kept as a dict)."""

    detail: dict[str, Any]


E = TypeVar("E", bound=Event)


def parse_envelope(body: str | bytes) -> Envelope:
    try:
        return Envelope.model_validate_json(body)
    except ValidationError as exc:
        raise MalformedMessage(f"not an EventBridge event: {first_error(exc)}") from None


def parse_event(body: str | bytes, event_type: type[E]) -> E:
    """Parse an SQS message body holding an EventBridge event of ``event_type``.

    Source and detail-type must match the class: a rule sending the wrong events to a queue
    is a wiring fault worth failing loudly on.
    """
    return event_of(parse_envelope(body), event_type)


def event_of(envelope: Envelope, event_type: type[E]) -> E:
    """:func:`parse_event` of an envelope already parsed (a consumer that reads the
    detail-type first to choose the model parses the body once, not twice)."""
    if envelope.source != event_type.SOURCE or envelope.detail_type != event_type.detail_type():
        raise MalformedMessage(
            f"expected {event_type.SOURCE}/{event_type.detail_type()}, "
            f"got {envelope.source}/{envelope.detail_type}"
        )
    try:
        return event_type.model_validate(envelope.detail)
    except ValidationError as exc:
        raise MalformedMessage(f"{event_type.detail_type()}: {first_error(exc)}") from None


class UploadedObject(BaseModel):
    """An object that S3 announced as created (EventBridge ``Object Created``)."""

    model_config = ConfigDict(frozen=True)

    bucket: str
    key: str
    etag: str
    size: int


def _as_aws_sends_it(raw: Any) -> Any:
    """moto's S3 notifications differ from AWS's in two ways, handled here only: the object's
    ``etag`` is spelled ``eTag``, and ``time`` is a unix timestamp (pydantic reads both
    forms of a datetime, so only the etag needs renaming)."""
    if isinstance(raw, dict):
        obj = (raw.get("detail") or {}).get("object") if isinstance(raw.get("detail"), dict) else None
        if isinstance(obj, dict) and "eTag" in obj and "etag" not in obj:
            obj["etag"] = obj.pop("eTag")
    return raw


def parse_object_created(body: str | bytes) -> UploadedObject:
    """An SQS body holding S3's EventBridge ``Object Created`` event (Powertools' model)."""
    try:
        raw = json.loads(body)
    except ValueError as exc:
        raise MalformedMessage(f"not an EventBridge event: {exc}") from None
    envelope = parse_envelope(body)
    if envelope.source != "aws.s3" or envelope.detail_type != "Object Created":
        raise MalformedMessage(
            f"expected aws.s3/Object Created, got {envelope.source}/{envelope.detail_type}"
        )
    try:
        notification = S3EventNotificationEventBridgeModel.model_validate(_as_aws_sends_it(raw))
    except ValidationError as exc:
        raise MalformedMessage(f"Object Created: {first_error(exc)}") from None
    obj = notification.detail.object
    return UploadedObject(
        bucket=notification.detail.bucket.name,
        key=obj.key,
        etag=obj.etag.strip('"'),
        size=int(obj.size or 0),
    )


def first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(root)"
    return f"{where}: {err['msg']}"
