"""Payment arrangements: staff make, list and cancel them (GR-OVERDUE "unless paid or
arranged"); the daily assessment reads them (``billing.domain.arrangements``).

Stored as history, one fact one item, in billing's table under ``ARRANGEMENTS#<tenant>``:
``<account_id>#<arrangement_id>`` is the arrangement as made (never rewritten) and
``<account_id>#<arrangement_id>#CANCELLED`` its cancellation (written once). Making one is
idempotent by its ``arrangement_id``: the same again is replayed, other values refused.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from billing.adapters.arrangements import CANCELLED, arrangements_of, pk
from billing.adapters.repository import BillingRepo
from billing.app.eligibility import withdraw_eligibilities
from billing.domain.arrangements import ArrangementRefused, arrangement_of, make_arrangement
from common.errors import PermanentError
from common.tariffs import TariffBook


class ArrangementConflict(PermanentError):
    """An arrangement id already used for other values, or a cancelled one cancelled again."""


class UnknownArrangement(PermanentError):
    """No such account or arrangement (the message names the field)."""


def make(
    tenant: str,
    account_id: str,
    arrangement_id: str,
    instalments: list[tuple[date, Decimal]],
    end_on: date,
    approver: str,
    note: str,
    *,
    repo: BillingRepo,
    today: date,
    now: datetime,
    book: TariffBook | None = None,
) -> dict[str, Any]:
    """Keep a checked arrangement (ArrangementRefused names the field at fault). The same
    request again, on any later day, is replayed with the day it was made.

    With the ``book``, an eligibility for disconnection already published for a bill the
    arrangement covers is withdrawn at once (GR-OVERDUE "unless ... arranged";
    ``eligibility.withdraw_eligibilities``), on a replay too (a retry after a crash)."""
    if not repo.existing_accounts(tenant, [account_id]):
        raise UnknownArrangement(f"account_id: no account {account_id!r}")
    stored = repo.get(pk(tenant), f"{account_id}#{arrangement_id}")
    made_on = date.fromisoformat(stored["made_on"]) if stored else today
    arrangement = make_arrangement(
        tenant=tenant,
        account_id=account_id,
        arrangement_id=arrangement_id,
        made_on=made_on,
        instalments=instalments,
        end_on=end_on,
        approver=approver,
        note=note,
    )
    values = {**arrangement.to_json(), "tenant": tenant}
    # What the caller asked (without the day it was made), to tell a replay from a conflict.
    asked = json.dumps({k: v for k, v in values.items() if k != "made_on"}, sort_keys=True)
    item = {
        "pk": pk(tenant),
        "sk": f"{account_id}#{arrangement_id}",
        "made_on": made_on.isoformat(),
        "request": json.dumps(values, sort_keys=True),
        "asked": asked,
        "recorded_at": now.isoformat(),
    }
    if stored is None and repo.put_new(item):
        _withdraw(tenant, account_id, repo, book, now)
        return {**arrangement.to_json(), "status": "active", "replayed": False}
    stored = stored or repo.get(pk(tenant), f"{account_id}#{arrangement_id}") or {}
    if stored.get("asked") != asked:
        raise ArrangementConflict(f"arrangement_id: {arrangement_id!r} was made with other values")
    _withdraw(tenant, account_id, repo, book, now)
    return {**arrangement_of(json.loads(stored["request"])).to_json(), "replayed": True}


def _withdraw(
    tenant: str, account_id: str, repo: BillingRepo, book: TariffBook | None, now: datetime
) -> None:
    if book is None:
        return
    withdraw_eligibilities(tenant, {account_id}, repo=repo, book=book, now=now)


def listed(repo: BillingRepo, tenant: str, account_id: str, today: date) -> list[dict[str, Any]]:
    """The account's arrangements, oldest first, with their status today (active, broken,
    cancelled, ended) and the day a broken one broke."""
    arrangements = arrangements_of(repo, tenant, account_id)
    entries = repo.entries_of(tenant, account_id) if arrangements else []
    return [a.to_json(today, entries) for a in arrangements]


def cancel(
    tenant: str,
    account_id: str,
    arrangement_id: str,
    by: str,
    reason: str,
    *,
    repo: BillingRepo,
    today: date,
    now: datetime,
) -> dict[str, Any]:
    """Cancel from ``today`` (kept: the arrangement item is not touched). Cancelling it
    again with the same reason is replayed; a cancelled one is not cancelled otherwise."""
    found = {a.arrangement_id: a for a in arrangements_of(repo, tenant, account_id)}
    arrangement = found.get(arrangement_id)
    if arrangement is None:
        raise UnknownArrangement(f"arrangement_id: no arrangement {arrangement_id!r} on account {account_id}")
    if arrangement.cancelled_on is not None:
        if (arrangement.cancelled_by, arrangement.cancel_reason) == (by, reason):
            return {**arrangement.to_json(), "replayed": True}
        raise ArrangementConflict(
            f"arrangement_id: {arrangement_id!r} was cancelled on {arrangement.cancelled_on} by {arrangement.cancelled_by}"
        )
    try:
        done = arrangement.cancel(today, by, reason)
    except ArrangementRefused as exc:
        raise ArrangementConflict(str(exc)) from None
    item = {
        "pk": pk(tenant),
        "sk": f"{account_id}#{arrangement_id}#{CANCELLED}",
        "cancelled_on": today.isoformat(),
        "by": by,
        "reason": reason,
        "recorded_at": now.isoformat(),
    }
    if not repo.put_new(item):
        return cancel(tenant, account_id, arrangement_id, by, reason, repo=repo, today=today, now=now)
    return {**done.to_json(), "replayed": False}
