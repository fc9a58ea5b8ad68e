"""The audit store (X-AUDIT): every event on the bus kept with who, when, what and why.

``BillingOnAuditEventFunction`` takes every ``sewerbill.*`` event (its rule) and writes one
``AUDIT`` item per event into billing's table, keyed by the event's own id (``pk =
AUDIT#<event_id>``, ``sk = AUDIT``) and written only if absent: a redelivery, or the same
event published twice by an outbox, is kept once.

Two sparse global secondary indexes answer the staff route's questions; an item has an
index's key only when the event names it, so nothing else of the table is in them:

- ``AuditByAccount``: ``audit_account = <tenant>#<account_id>``, events about an account;
- ``AuditByActor``: ``audit_actor = <tenant>#<actor>``, what a staff member, a customer or
  a function did (the envelope's ``actor``; an event of a producer older than the field
  names none and is kept, under no actor).

A chunk event (``BillsIssued``, ``ConsumptionsDetermined``, ``ERUsDetermined``: members
each about an account) is kept as itself and, beside it, one item per member naming the
member's account (``pk = AUDIT#<event_id>#<n>``, ``member_of`` the chunk's id), so an
account's trail shows the bill a cycle issued it.

Both sort on ``audit_at = <occurred_at>#<event_id>``: oldest first, in the order things
happened. An event that names no tenant (a ``MessageRejected``) is kept, but in neither
index. Audit items never expire (no ``expires_at``): the bus's archive keeps the events
themselves seven years (X-RETENTION; template.yaml ``EventBusArchive``).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from common.dynamo import batch_put, from_item, get, put_new

AUDIT_PREFIX = "AUDIT#"
AUDIT_SK = "AUDIT"
BY_ACCOUNT = "AuditByAccount"
BY_ACTOR = "AuditByActor"
# What is kept of a detail: the event's "what" for staff, bounded far below DynamoDB's 400 KB.
DETAIL_CHARS = 100_000
COLUMNS = (
    "occurred_at",
    "tenant",
    "account_id",
    "actor",
    "source",
    "detail_type",
    "reason",
    "business_key",
    "event_id",
    "correlation_id",
)


class BadCursor(ValueError):
    """A cursor this store did not hand out."""


def audit_item(envelope: Mapping[str, Any]) -> dict[str, Any]:
    """The AUDIT item of an EventBridge event (its ``source``, ``detail-type``, ``detail``)."""
    detail = envelope.get("detail") if isinstance(envelope.get("detail"), dict) else {}
    assert isinstance(detail, dict)
    event_id = str(detail.get("event_id") or envelope.get("id") or "")
    occurred_at = str(detail.get("occurred_at") or envelope.get("time") or "")
    tenant = _text(detail.get("tenant"))
    account_id = _text(detail.get("account_id"))
    actor = _text(detail.get("actor"))
    reason = detail.get("reason")
    item: dict[str, Any] = {
        "pk": f"{AUDIT_PREFIX}{event_id}",
        "sk": AUDIT_SK,
        "event_id": event_id,
        "source": str(envelope.get("source", "")),
        "detail_type": str(envelope.get("detail-type", "")),
        "occurred_at": occurred_at,
        "tenant": tenant,
        "account_id": account_id,
        "actor": actor,
        "reason": None if reason is None else str(reason)[:2000],
        "correlation_id": _text(detail.get("correlation_id")),
        "detail": json.dumps(detail, separators=(",", ":"), ensure_ascii=False)[:DETAIL_CHARS],
        "audit_at": f"{occurred_at}#{event_id}",
    }
    if tenant and account_id:
        item["audit_account"] = f"{tenant}#{account_id}"
    if tenant and actor:
        item["audit_actor"] = f"{tenant}#{actor}"
    return item


def member_items(envelope: Mapping[str, Any], chunk: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An item per member of a chunk event that names an account (module doc)."""
    detail = envelope.get("detail") if isinstance(envelope.get("detail"), dict) else {}
    assert isinstance(detail, dict)
    found: list[dict[str, Any]] = []
    for value in detail.values():
        if not isinstance(value, list):
            continue
        for member in value:
            if not isinstance(member, dict) or not isinstance(member.get("account_id"), str):
                continue
            n = len(found)
            item = audit_item(
                {
                    **envelope,
                    "detail": {
                        "tenant": detail.get("tenant"),
                        "occurred_at": chunk["occurred_at"],
                        "actor": detail.get("actor"),
                        "reason": detail.get("reason"),
                        "correlation_id": detail.get("correlation_id"),
                        **{k: v for k, v in member.items() if v is not None},
                        "event_id": f"{chunk['event_id']}#{n}",
                    },
                }
            )
            item["member_of"] = chunk["event_id"]
            found.append(item)
    return found


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class AuditPage:
    rows: list[dict[str, Any]]
    next_cursor: str | None


class AuditLog:
    """Billing's table as the audit store: kept once per event, read per account or actor."""

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def keep(self, envelope: Mapping[str, Any]) -> bool:
        """Keep the event (and a chunk's members); False if it was kept already (a repeat).
        The members go first, each under its own fixed key: a retry after a failure writes
        them again, the same, before the chunk's own item marks the event kept."""
        item = audit_item(envelope)
        members = member_items(envelope, item)
        if members:
            if get(self._client, self._table, item["pk"], AUDIT_SK) is not None:
                return False  # a repeat: kept with its members already
            batch_put(self._client, self._table, members)
        return put_new(self._client, self._table, item)

    def page(
        self,
        tenant: str,
        *,
        account_id: str | None = None,
        actor: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> AuditPage:
        """A page of the tenant's audit trail of ``account_id`` or of ``actor``, oldest first."""
        if account_id is not None:
            index, key, value = BY_ACCOUNT, "audit_account", f"{tenant}#{account_id}"
        elif actor is not None:
            index, key, value = BY_ACTOR, "audit_actor", f"{tenant}#{actor}"
        else:
            raise ValueError("an account_id or an actor is required")
        args: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": index,
            "KeyConditionExpression": "#k = :v",
            "ExpressionAttributeNames": {"#k": key},
            "ExpressionAttributeValues": {":v": {"S": value}},
            "Limit": limit,
        }
        if cursor:
            args["ExclusiveStartKey"] = _start_key(cursor, key, value)
        answer = self._client.query(**args)
        rows = [row(from_item(i)) for i in answer.get("Items", [])]
        last = answer.get("LastEvaluatedKey")
        return AuditPage(rows, _cursor_of(last) if last else None)


def row(item: Mapping[str, Any]) -> dict[str, Any]:
    """What staff see of an AUDIT item: who, when, what (the event and its detail), why."""
    detail = json.loads(item.get("detail") or "{}")
    return {
        **{c: item.get(c) for c in COLUMNS if c != "business_key"},
        "business_key": _business_key(detail),
        "detail": detail,
    }


def _business_key(detail: Mapping[str, Any]) -> str | None:
    for name in ("bill_id", "notice_id", "sample_id", "account_id", "parcel_id", "file_id"):
        if isinstance(detail.get(name), str):
            return f"{name}={detail[name]}"
    return None


def _cursor_of(last: Mapping[str, Any]) -> str:
    plain = {k: v["S"] for k, v in last.items()}
    return base64.urlsafe_b64encode(json.dumps(plain, separators=(",", ":")).encode()).decode()


def _start_key(cursor: str, key: str, value: str) -> dict[str, Any]:
    try:
        plain = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, binascii.Error):
        raise BadCursor("cursor: not a cursor of this listing") from None
    if (
        not isinstance(plain, dict)
        or set(plain) != {"pk", "sk", key, "audit_at"}
        or plain[key] != value
        or not all(isinstance(v, str) for v in plain.values())
    ):
        raise BadCursor("cursor: not a cursor of this listing")
    return {k: {"S": v} for k, v in plain.items()}
