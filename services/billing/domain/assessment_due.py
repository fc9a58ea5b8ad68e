"""When the daily assessment has something to do, so that a day with nothing due costs one
read (issue 7; the pattern of ``common.due``, with one next day per tenant).

Every point the assessment acts on falls on a day known from the bills, the ledger, the
marks and the arrangements (``assessment.next_action_on``). A full run of a tenant records
the next such day (:class:`DueMark` ``next_on``); every write of an assessment input outside
the assessment (a bill issued, a payment, an adjustment, an arrangement made or cancelled, a
withdrawal mark) adds its tenant to ``pending`` and counts one more ``writes``. On any day
the run reads that one mark and assesses in full only the tenants due (``pending``, never
assessed, or ``next_on`` reached), exactly as before; the others are not read.

Races: a write lands its items first and then marks; a run reads the mark first, then the
tenant's items, and records its result only if ``writes`` has not moved since its read (a
conditional put). So a write the run did not see always leaves its tenant pending for the
next run. A full run happens at least every :data:`FULL_RUN_AT_LEAST_EVERY` whatever the
mark says: the bound on how late a day this computation does not foresee (a write that
crashed between its item and its mark, a tariff file deployed with a back-dated version) is
acted on; a tariff version taking effect is foreseen (:func:`next_run_on`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date

from common.due import FULL_RUN_AT_LEAST_EVERY, next_due

__all__ = ["FULL_RUN_AT_LEAST_EVERY", "DueMark", "next_run_on"]


@dataclass(frozen=True)
class DueMark:
    """The table's word on the next assessment work: each tenant's next full-run day as its
    last full run computed it, the tenants written since (``pending``) and how many writes
    marked them (``writes``: a run records its result only if none came meanwhile)."""

    next_on: Mapping[str, date] = field(default_factory=dict)
    pending: frozenset[str] = frozenset()
    writes: int = 0
    full: frozenset[str] = frozenset()
    """Tenants a write marked without naming its accounts: their next run is a full one."""
    assessed_on: Mapping[str, date] = field(default_factory=dict)
    """Each tenant's last assessed day: the next run reads the accounts due from that day on."""
    days: Mapping[str, tuple[date, ...]] = field(default_factory=dict)
    """Each tenant's later days on which an account has work, as its runs recorded them."""

    def due(self, tenant: str, today: date) -> bool:
        if tenant in self.pending or tenant not in self.next_on:
            return True
        return self.next_on[tenant] <= today


def next_run_on(today: date, candidates: Iterable[date | None]) -> date:
    """The day of the tenant's next full run: the earliest candidate after today, and at the
    latest :data:`FULL_RUN_AT_LEAST_EVERY` from today (``common.due.next_due``)."""
    return next_due(today, candidates)
