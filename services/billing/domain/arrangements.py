"""Payment arrangements (GR-OVERDUE: "unless paid or arranged within the next 10 days,
service may be disconnected"), pure.

An arrangement is made by staff for one account on a day (``made_on``): a schedule of
instalments, each an amount due by a date, and an end date. It covers the bills of the
account issued on or before the day it was made (what the customer owed then; a later bill
runs its own course). It is *active* on a day from ``made_on`` to ``end_on`` unless it was
cancelled before that day or broken by then.

Broken (interpretation): an instalment is missed when the payments dated from ``made_on`` up
to its due date add up to less than the instalments due by then (cumulative, so paying
ahead counts); the arrangement is broken on the day after the missed due date, and the
account is eligible for disconnection again from that day (``DisconnectionEligible``).

Arrangements are kept as history: a cancellation is recorded on the arrangement (day, by
whom, why), never a delete.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from billing.domain.ledger import ZERO, Entry
from common.money import CENT

MAX_INSTALMENTS = 60
MAX_AMOUNT = Decimal("10000000")
MAX_SPAN_DAYS = 366 * 5  # an arrangement ends within five years of the day it is made


class ArrangementRefused(ValueError):
    """An arrangement that cannot be made or cancelled; the message starts with the field."""


@dataclass(frozen=True, slots=True)
class Instalment:
    due_on: date
    amount: Decimal


@dataclass(frozen=True, slots=True)
class Arrangement:
    tenant: str
    account_id: str
    arrangement_id: str
    made_on: date
    instalments: tuple[Instalment, ...]
    end_on: date
    approver: str
    note: str = ""
    cancelled_on: date | None = None
    cancelled_by: str = ""
    cancel_reason: str = ""

    @property
    def total(self) -> Decimal:
        return sum((i.amount for i in self.instalments), ZERO)

    def covers(self, bill_date: date) -> bool:
        return bill_date <= self.made_on

    def broken_on(self, entries: Iterable[Entry]) -> date | None:
        """The day after the first instalment missed, or None (see the module doc)."""
        payments = sorted(
            (e.posted_on, -e.amount) for e in entries if e.kind == "payment" and e.posted_on >= self.made_on
        )
        due = ZERO
        for inst in self.instalments:
            due += inst.amount
            paid = sum((amount for on, amount in payments if on <= inst.due_on), ZERO)
            if paid < due:
                return inst.due_on + timedelta(days=1)
        return None

    def active_on(self, day: date, entries: Iterable[Entry]) -> bool:
        if not self.made_on <= day <= self.end_on:
            return False
        if self.cancelled_on is not None and day >= self.cancelled_on:
            return False
        broken = self.broken_on(entries)
        return broken is None or day < broken

    def turning_days(self, entries: Iterable[Entry]) -> set[date]:
        """The days its cover can end (where the account may become eligible again)."""
        days = {self.made_on, self.end_on + timedelta(days=1)}
        broken = self.broken_on(entries)
        if broken is not None:
            days.add(broken)
        if self.cancelled_on is not None:
            days.add(self.cancelled_on)
        return days

    def status_on(self, day: date, entries: Iterable[Entry]) -> str:
        listed = list(entries)
        if self.cancelled_on is not None and day >= self.cancelled_on:
            return "cancelled"
        broken = self.broken_on(listed)
        if broken is not None and day >= broken:
            return "broken"
        if day > self.end_on:
            return "ended"
        if day < self.made_on:
            return "pending"
        return "active"

    def cancel(self, on: date, by: str, reason: str) -> Arrangement:
        if self.cancelled_on is not None:
            raise ArrangementRefused(
                f"arrangement_id: {self.arrangement_id!r} was cancelled on {self.cancelled_on}"
            )
        return Arrangement(
            self.tenant,
            self.account_id,
            self.arrangement_id,
            self.made_on,
            self.instalments,
            self.end_on,
            self.approver,
            self.note,
            cancelled_on=on,
            cancelled_by=by,
            cancel_reason=reason,
        )

    def to_json(self, today: date | None = None, entries: Sequence[Entry] = ()) -> dict[str, Any]:
        out: dict[str, Any] = {
            "arrangement_id": self.arrangement_id,
            "account_id": self.account_id,
            "made_on": self.made_on.isoformat(),
            "end_on": self.end_on.isoformat(),
            "instalments": [
                {"due_on": i.due_on.isoformat(), "amount": str(i.amount)} for i in self.instalments
            ],
            "total": str(self.total),
            "approver": self.approver,
            "note": self.note,
            "cancelled_on": self.cancelled_on.isoformat() if self.cancelled_on else None,
            "cancelled_by": self.cancelled_by or None,
            "cancel_reason": self.cancel_reason or None,
        }
        if today is not None:
            broken = self.broken_on(entries)
            out["broken_on"] = broken.isoformat() if broken else None
            out["status"] = self.status_on(today, entries)
        return out


def make_arrangement(
    *,
    tenant: str,
    account_id: str,
    arrangement_id: str,
    made_on: date,
    instalments: Sequence[tuple[date, Decimal]],
    end_on: date,
    approver: str,
    note: str = "",
) -> Arrangement:
    """A new arrangement, checked; an ArrangementRefused names the field at fault."""
    if not instalments:
        raise ArrangementRefused("instalments: at least one instalment is needed")
    if len(instalments) > MAX_INSTALMENTS:
        raise ArrangementRefused(f"instalments: at most {MAX_INSTALMENTS}, got {len(instalments)}")
    previous: date | None = None
    for n, (due_on, amount) in enumerate(instalments):
        if due_on < made_on:
            raise ArrangementRefused(
                f"instalments[{n}].due_on: {due_on} is before the arrangement is made ({made_on})"
            )
        if previous is not None and due_on <= previous:
            raise ArrangementRefused(
                f"instalments[{n}].due_on: {due_on} is not after the instalment before it ({previous})"
            )
        if amount <= 0 or amount >= MAX_AMOUNT or amount != amount.quantize(CENT):
            raise ArrangementRefused(
                f"instalments[{n}].amount: must be above zero in cents below {MAX_AMOUNT}, got {amount}"
            )
        previous = due_on
    assert previous is not None
    if end_on < previous:
        raise ArrangementRefused(f"end_on: {end_on} is before the last instalment is due ({previous})")
    if (end_on - made_on).days > MAX_SPAN_DAYS:
        raise ArrangementRefused(f"end_on: {end_on} is more than five years after {made_on}")
    return Arrangement(
        tenant=tenant,
        account_id=account_id,
        arrangement_id=arrangement_id,
        made_on=made_on,
        instalments=tuple(Instalment(d, a.quantize(CENT)) for d, a in instalments),
        end_on=end_on,
        approver=approver,
        note=note,
    )


def arrangement_of(item: Mapping[str, Any]) -> Arrangement:
    """From its stored JSON form (``to_json`` without status)."""
    return Arrangement(
        tenant=item["tenant"],
        account_id=item["account_id"],
        arrangement_id=item["arrangement_id"],
        made_on=date.fromisoformat(item["made_on"]),
        instalments=tuple(
            Instalment(date.fromisoformat(i["due_on"]), Decimal(i["amount"])) for i in item["instalments"]
        ),
        end_on=date.fromisoformat(item["end_on"]),
        approver=item["approver"],
        note=item.get("note") or "",
        cancelled_on=date.fromisoformat(item["cancelled_on"]) if item.get("cancelled_on") else None,
        cancelled_by=item.get("cancelled_by") or "",
        cancel_reason=item.get("cancel_reason") or "",
    )
