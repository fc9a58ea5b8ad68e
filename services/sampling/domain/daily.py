"""When sampling's daily run has something to do, so that a day with nothing due costs one read.

The daily run (exits of PP-SEW-CAT-B-EXIT clocks, satellite results deadlines, annual
report reminders) works from dates known when each clock, deadline or policy is written.
A full run computes the next date anything can fall due (``common.due.next_due``) and records it;
every write of a new exit clock or deadline adds its date to a ``pending`` set beside it
(``common.due.DueMark``). On any other day the run reads that one mark and stops: on AWS one
read a day instead of two queries per tenant, and no idle work on the local runtime.

A full run happens at least every ``common.due.FULL_RUN_AT_LEAST_EVERY`` whatever the mark says:
the bound on how late a date this computation does not foresee (a tariff version that
moves the report window, a write that crashed between its item and its mark) is acted on.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

from sampling.domain.satellite import ResultsDeadline

_DAY = timedelta(days=1)


def deadline_next(
    deadline: ResultsDeadline, today: date, delivered: bool, reminded: bool, breached: bool
) -> date | None:
    """The first day after ``today`` on which ``deadline_actions`` can act on this deadline
    (its reminder window, else the day after it is due), None when nothing is left."""
    if delivered:
        return None
    later = today + _DAY
    dates = []
    remind_from = max(deadline.remind_on, later)
    if not reminded and remind_from <= deadline.due_on:
        dates.append(remind_from)
    if not breached:
        dates.append(max(deadline.due_on + _DAY, later))
    return min(dates, default=None)


def report_window_next(
    report_due: tuple[int, int] | None, days_before: Sequence[int], today: date
) -> date | None:
    """The first day after ``today`` inside an annual report reminder window (PP-SEW-REPORT:
    from the earliest reminder day through the due date, each day of which the run catches
    up with accounts that have not filed)."""
    if report_due is None or not days_before:
        return None
    later = today + _DAY
    for year in (later.year, later.year + 1):
        due = date(year, *report_due)
        if later <= due:
            return max(due - timedelta(days=max(days_before)), later)
    return None
