"""Events are typed contracts owned by their producer (STYLE 4).

Every event is a frozen pydantic model deriving from :class:`Event`:

- ``detail-type`` is the class name, ``source`` is ``sewerbill.<service>`` (the class
  variable ``SOURCE``);
- every detail carries ``schema_version``, ``occurred_at`` (aware, UTC), ``event_id`` and
  its business key (the fields named by ``BUSINESS_KEY``);
- changes are additive only, so consumers ignore fields they do not know;
- ``correlation_id`` (optional) names the chain of work the event belongs to, across
  services: the outbox and the rejection publisher stamp it from the consumer that is
  running (``common.observability``); it is left out of the detail when unknown.

This module builds the EventBridge ``PutEvents`` entry for an event; ``common.messages``
parses what arrives. It imports only pydantic, so domain code may build events.

Every entry stays under EventBridge's 256 KB by construction: :meth:`Event.detail_json` (what
the outbox stores) and :func:`entry` refuse a larger one with :class:`EventTooLarge`. A
payload that grows with its input belongs in S3 (``common.reports``), the event carrying a
pointer (claim check, STYLE 18).
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any, ClassVar, Self, get_args, get_origin

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from common.errors import SewerbillError
from common.ids import new_event_id

# EventBridge's PutEvents limit on one entry: Source + DetailType + Detail (+ Time,
# Resources: never set here), counted in UTF-8 bytes.
MAX_ENTRY_BYTES = 256 * 1024
# Envelope fields of X-AUDIT, absent from a detail (and a member event) when unknown.
_LEFT_OUT_WHEN_NONE = ("actor", "reason")


class EventTooLarge(SewerbillError, ValueError):
    """An event over EventBridge's 256 KB: a bug in the producer, which should have put the
    growing part in S3 (``common.reports``). Not retryable by waiting, not the message's fault."""


class Event(BaseModel):
    """Base of every domain event published on the sewerbill bus."""

    # extra="ignore": a newer producer may add fields (additive changes only).
    model_config = ConfigDict(frozen=True, extra="ignore")

    SOURCE: ClassVar[str] = ""
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ()

    schema_version: int = 1
    event_id: str = Field(default_factory=new_event_id)
    occurred_at: AwareDatetime
    correlation_id: str | None = Field(default=None, max_length=256)
    actor: str | None = Field(default=None, max_length=256)
    reason: str | None = Field(default=None, max_length=2000)

    @field_validator("occurred_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return value.astimezone(UTC)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.SOURCE and not cls.SOURCE.startswith("sewerbill."):
            raise TypeError(f"{cls.__name__}.SOURCE must be 'sewerbill.<service>'")

    @classmethod
    def detail_type(cls) -> str:
        return cls.__name__

    def business_key(self) -> str:
        """The fields that identify what this event is about, joined with '#'."""
        return "#".join(str(getattr(self, name)) for name in self.BUSINESS_KEY)

    def detail_json(self) -> str:
        detail = self.model_dump_json(exclude=self._left_out())
        check_entry_size(source=self.SOURCE, detail_type=self.detail_type(), detail=detail)
        return detail

    def _left_out(self) -> dict[str, Any] | None:
        """What :meth:`detail_json` leaves out: an unknown correlation id, actor or reason,
        and the envelope's actor and reason of the member events it carries."""
        left: dict[str, Any] = {name: True for name in _LEFT_OUT_WHEN_NONE if getattr(self, name) is None}
        if not self.correlation_id:
            left["correlation_id"] = True
        left.update(_member_exclusions(type(self)))
        return left or None

    def correlated(self, correlation_id: str | None) -> Self:
        """This event carrying ``correlation_id``, unless it already carries one."""
        if self.correlation_id or not correlation_id:
            return self
        return self.model_copy(update={"correlation_id": correlation_id})

    def attributed(self, actor: str | None) -> Self:
        """This event naming ``actor`` as who did it, unless it already names one."""
        if self.actor or not actor:
            return self
        return self.model_copy(update={"actor": actor[:256]})

    def put_events_entry(self, bus_name: str) -> dict[str, str]:
        """The entry for ``events.put_events(Entries=[...])``."""
        return entry(
            source=self.SOURCE, detail_type=self.detail_type(), detail=self.detail_json(), bus_name=bus_name
        )

    @classmethod
    def from_detail(cls, detail: dict[str, Any] | str) -> Self:
        """The event back from a detail as EventBridge delivers it (a dict) or as it was
        published (its JSON text)."""
        return cls.model_validate_json(detail) if isinstance(detail, str) else cls.model_validate(detail)


def _envelope_only(model: type[Event]) -> dict[str, bool]:
    """The X-AUDIT fields of ``model`` that are the envelope's own (not redefined by it)."""
    return {
        name: True
        for name in _LEFT_OUT_WHEN_NONE
        if model.model_fields[name].annotation == Event.model_fields[name].annotation
        and model.model_fields[name].default is None
    }


def _event_types(annotation: Any) -> tuple[type[Event], bool] | None:
    """The event type an annotation holds, and whether as a sequence of them."""
    if isinstance(annotation, type) and issubclass(annotation, Event):
        return annotation, False
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (tuple, list) and args:
        found = _event_types(args[0])
        if found is not None:
            return found[0], True
    if args and origin is not None and origin not in (tuple, list):  # X | None, Annotated[X, ...]
        for arg in args:
            found = _event_types(arg)
            if found is not None:
                return found
    return None


@functools.cache
def _member_exclusions(model: type[Event]) -> dict[str, Any]:
    """For each field of ``model`` holding events, their envelope's actor and reason (member
    events are the parent's work: only the parent names who and why)."""
    found: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        held = _event_types(field.annotation)
        if held is None:
            continue
        own = _envelope_only(held[0])
        if own:
            found[name] = {"__all__": own} if held[1] else own
    return found


def entry_size(*, source: str, detail_type: str, detail: str) -> int:
    """The size EventBridge counts for an entry (its documented PutEvents calculation)."""
    return sum(len(part.encode("utf-8")) for part in (source, detail_type, detail))


def check_entry_size(*, source: str, detail_type: str, detail: str) -> None:
    size = entry_size(source=source, detail_type=detail_type, detail=detail)
    if size > MAX_ENTRY_BYTES:
        raise EventTooLarge(
            f"{detail_type} from {source} is {size} bytes, over EventBridge's {MAX_ENTRY_BYTES}; "
            "put the growing part in S3 (common.reports) and publish a pointer"
        )


def entry(*, source: str, detail_type: str, detail: str, bus_name: str) -> dict[str, str]:
    check_entry_size(source=source, detail_type=detail_type, detail=detail)
    return {"Source": source, "DetailType": detail_type, "Detail": detail, "EventBusName": bus_name}
