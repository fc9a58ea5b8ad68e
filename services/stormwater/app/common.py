"""What stormwater's use cases share: their errors, record codecs, pending-decision entries,
cursors, request-value parsers and the base holding the repositories and the clock."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from datetime import date
from decimal import Decimal
from typing import Any, TypeVar

from pydantic import TypeAdapter

from common.clock import Clock
from common.errors import FieldError
from common.values import NotADecimal, to_decimal
from stormwater.adapters.dynamodb import (
    DynamoParcelRepository,
    DynamoRecords,
    fact_item,
    pending_item,
)
from stormwater.domain import credits as cr
from stormwater.domain import reconsiderations as rc
from stormwater.domain.parcels import TariffView
from stormwater.events import Event

T = TypeVar("T")


class NotFound(FieldError):
    """No such parcel, credit, reconsideration or appeal (HTTP 404)."""


class BadRequest(FieldError):
    """The request is not what the route takes (HTTP 400)."""


_CREDIT = TypeAdapter(cr.Credit)
_RECON = TypeAdapter(rc.Reconsideration)
_APPEAL = TypeAdapter(rc.Appeal)
_BILL = TypeAdapter(rc.BillView)


def _dump(adapter: TypeAdapter[T], value: T) -> str:
    return adapter.dump_json(value).decode()


def _event_item(pk: str, sk: str, event: Event | None) -> list[dict[str, Any]]:
    if event is None:
        return []
    return [fact_item(pk, sk, "event", event.detail_json(), event)]


PendingRecord = cr.Credit | rc.Reconsideration | rc.Appeal
# Statuses in which a record waits for staff (or the Board): listed as a pending decision.
WAITING = {"credit": ("submitted", "under_review"), "reconsideration": ("filed",), "appeal": ("filed",)}


def _pending(record: PendingRecord) -> tuple[dict[str, Any], bool]:
    """The record's entry in the tenant's pending decisions, and whether it still waits."""
    if isinstance(record, cr.Credit):
        kind, record_id, filed_on = "credit", record.credit_id, record.submitted_on
        what = f"credit application ({record.documentation.practice[:200]})"
    elif isinstance(record, rc.Reconsideration):
        kind, record_id, filed_on = "reconsideration", record.reconsideration_id, record.filed_on
        what = f"reconsideration of bill {record.bill_id}"
    else:
        kind, record_id, filed_on = "appeal", record.appeal_id, record.filed_on
        what = f"appeal of {record.reconsideration_id} (Board hearing)"
    body = {
        "kind": kind,
        "id": record_id,
        "parcel_id": record.parcel_id,
        "owner_name": record.owner_name,
        "status": record.status,
        "filed_on": filed_on.isoformat(),
        "summary": what,
    }
    entry = pending_item(
        record.tenant, filed_on.isoformat(), kind, record.parcel_id, record_id, json.dumps(body)
    )
    return entry, record.status in WAITING[kind]


def _to_cursor(sort_key: str | None) -> str | None:
    """An opaque, URL-safe cursor (base64url of the last entry's sort key)."""
    return None if sort_key is None else base64.urlsafe_b64encode(sort_key.encode()).decode().rstrip("=")


def _from_cursor(cursor: str | None) -> str | None:
    if not cursor:
        return None
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise BadRequest("cursor", "is not a next_cursor this route gave") from None


def _decimal(
    body: Mapping[str, Any], name: str, *, prefix: str = "", maximum: Decimal | None = None
) -> Decimal:
    try:
        return to_decimal(body.get(name), maximum=maximum)
    except NotADecimal as exc:
        raise BadRequest(prefix + name, str(exc)) from None


def _date(body: Mapping[str, Any], name: str) -> date:
    from common.values import NotADate, to_date

    try:
        return to_date(body.get(name))
    except NotADate as exc:
        raise BadRequest(name, str(exc)) from None


def _int(body: Mapping[str, Any], name: str) -> int:
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(name, f"must be a whole number, got {value!r}")
    return value


def as_document(value: Any) -> Any:
    """A domain record as JSON-ready data (Decimals as strings, dates ISO)."""
    return json.loads(TypeAdapter(type(value)).dump_json(value))


class UseCaseBase:
    """What every group of stormwater use cases holds: the repositories, the tariffs, the clock."""

    def __init__(
        self,
        parcels: DynamoParcelRepository,
        records: DynamoRecords,
        tariff_for: Callable[[str, date], TariffView],
        clock: Clock,
    ) -> None:
        self._parcels = parcels
        self._records = records
        self._tariff_for = tariff_for
        self._clock = clock
