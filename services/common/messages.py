"""Parsing what arrives on a queue: the EventBridge event a rule delivered as an SQS body.

Every asynchronous trigger reaches a function the same way (DESIGN "Flow"): a rule (or a
schedule) puts a message on the function's queue. For rules the message body is the
EventBridge event; :func:`parse_event` turns it into the producer's event model and
:func:`parse_object_created` into the S3 upload it announces. A body that is not what
the queue expects raises :class:`MalformedMessage` (permanent: it will reach the DLQ).
"""

from __future__ import annotations

from typing import Any, TypeVar

from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

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
    envelope = parse_envelope(body)
    if envelope.source != event_type.SOURCE or envelope.detail_type != event_type.detail_type():
        raise MalformedMessage(
            f"expected {event_type.SOURCE}/{event_type.detail_type()}, "
            f"got {envelope.source}/{envelope.detail_type}"
        )
    try:
        return event_type.model_validate(envelope.detail)
    except ValidationError as exc:
        raise MalformedMessage(f"{event_type.detail_type()}: {first_error(exc)}") from None


class _Bucket(BaseModel):
    name: str


class _Object(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    key: str
    size: int = 0
    # AWS spells it "etag"; moto 5.2 "eTag".
    etag: str = Field(default="", validation_alias=AliasChoices("etag", "eTag"))
    version_id: str | None = Field(default=None, validation_alias=AliasChoices("version-id", "version_id"))


class _ObjectCreatedDetail(BaseModel):
    bucket: _Bucket
    object: _Object


class UploadedObject(BaseModel):
    """An object that S3 announced as created (EventBridge ``Object Created``)."""

    model_config = ConfigDict(frozen=True)

    bucket: str
    key: str
    etag: str
    size: int


def parse_object_created(body: str | bytes) -> UploadedObject:
    envelope = parse_envelope(body)
    if envelope.source != "aws.s3" or envelope.detail_type != "Object Created":
        raise MalformedMessage(
            f"expected aws.s3/Object Created, got {envelope.source}/{envelope.detail_type}"
        )
    try:
        detail = _ObjectCreatedDetail.model_validate(envelope.detail)
    except ValidationError as exc:
        raise MalformedMessage(f"Object Created: {first_error(exc)}") from None
    return UploadedObject(
        bucket=detail.bucket.name,
        key=detail.object.key,
        etag=detail.object.etag.strip('"'),
        size=detail.object.size,
    )


def first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(root)"
    return f"{where}: {err['msg']}"
