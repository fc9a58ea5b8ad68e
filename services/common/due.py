"""A daily run's mark: when it next has work, so that a day with nothing due costs one read
(issue 7; sampling's ``DAILY``/``DUE`` is the first of these, billing's assessment keeps one
per tenant).

One item, ``DAILY`` / ``DUE`` in the service's table: ``next_on``, the day the last full run
computed its next work would fall; ``pending``, the days writes since then said work may
fall (a write adds its day, creating the mark); ``writes``, how many writes added them. The
run reads the mark and stops unless it is due; a full run records its next day only if
``writes`` has not moved since its read (a conditional put), so a write the run did not
see always leaves its day pending. A full run happens at least every
:data:`FULL_RUN_AT_LEAST_EVERY`: the bound on how late a day the computation does not
foresee (a write that crashed between its item and its mark) is acted on.

Writers land their items first and then the mark. This module is pure (domains may use
it); the mark's item is read and written by ``common.due_marks``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

FULL_RUN_AT_LEAST_EVERY = timedelta(days=28)
_DAY = timedelta(days=1)


@dataclass(frozen=True)
class DueMark:
    """The mark as read: ``next_on`` (None: no full run recorded yet), the days written
    since and how many writes added them."""

    next_on: date | None
    pending: frozenset[date] = frozenset()
    writes: int = 0

    def due(self, today: date) -> bool:
        if self.next_on is None:
            return True
        return min((self.next_on, *self.pending)) <= today


def next_due(today: date, candidates: Iterable[date | None]) -> date:
    """The next full run: the earliest candidate after today, at the latest
    :data:`FULL_RUN_AT_LEAST_EVERY` from today."""
    later = today + _DAY
    return min([today + FULL_RUN_AT_LEAST_EVERY, *(max(d, later) for d in candidates if d is not None)])
