"""Satellite systems (PP-SEW-SAT-SAMPLE, PP-SEW-SAT-RESAMPLE): result deadlines and resamples.

Pure: the closure calendar is an input (``is_closed``: weekends, public holidays and the
tenant's own closure days, built outside the domain from the ``holidays`` package and the
tariff), and so is ``today``.

- Certified results are due ``working_days`` (18) working days after the sample is taken:
  the sample day is day 0, each following working day counts one, and the due date is the
  day that reaches 18.
- A reminder is due ``reminder_working_days`` working days before the due date; a breach is
  recorded on the first day after the due date with no delivery.
- A satellite system may request a resample within ``request_days`` (3) days of receiving
  a result (calendar days: delivered on the 1st, a request on the 4th is on day 3 and
  accepted, one on the 5th is refused naming the dates).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

RESULTS_DUE_WORKING_DAYS = 18
RESAMPLE_REQUEST_DAYS = 3
REMINDER_WORKING_DAYS = 3

IsClosed = Callable[[date], bool]


def add_working_days(start: date, days: int, is_closed: IsClosed) -> date:
    """The ``days``-th working day after ``start`` (``start`` itself is day 0)."""
    if days < 0:
        raise ValueError("days must not be negative")
    day = start
    counted = 0
    while counted < days:
        day += timedelta(days=1)
        if not is_closed(day):
            counted += 1
    return day


def subtract_working_days(end: date, days: int, is_closed: IsClosed) -> date:
    """The working day ``days`` working days before ``end``."""
    day = end
    counted = 0
    while counted < days:
        day -= timedelta(days=1)
        if not is_closed(day):
            counted += 1
    return day


@dataclass(frozen=True)
class ResultsDeadline:
    """When a satellite sample's certified results are due, and when to remind (PP-SEW-SAT-SAMPLE)."""

    sample_id: str
    sampled_on: date
    due_on: date
    remind_on: date
    rule_id: str = "PP-SEW-SAT-SAMPLE"


def results_deadline(
    sample_id: str,
    sampled_on: date,
    is_closed: IsClosed,
    working_days: int = RESULTS_DUE_WORKING_DAYS,
    reminder_working_days: int = REMINDER_WORKING_DAYS,
) -> ResultsDeadline:
    due = add_working_days(sampled_on, working_days, is_closed)
    return ResultsDeadline(
        sample_id=sample_id,
        sampled_on=sampled_on,
        due_on=due,
        remind_on=subtract_working_days(due, reminder_working_days, is_closed),
    )


@dataclass(frozen=True)
class DeadlineActions:
    remind: bool
    breach: bool


def deadline_actions(
    deadline: ResultsDeadline, today: date, delivered_on: date | None, reminded: bool, breached: bool
) -> DeadlineActions:
    """What the daily run does for one open deadline (each action once)."""
    if delivered_on is not None:
        return DeadlineActions(remind=False, breach=False)
    return DeadlineActions(
        remind=not reminded and deadline.remind_on <= today <= deadline.due_on,
        breach=not breached and today > deadline.due_on,
    )


@dataclass(frozen=True)
class ResampleRequestDecision:
    """PP-SEW-SAT-RESAMPLE: a satellite system's resample request, accepted or refused."""

    accepted: bool
    delivered_on: date
    requested_on: date
    last_day: date
    days_after_delivery: int
    reason: str
    rule_id: str = "PP-SEW-SAT-RESAMPLE"


def resample_window_ends_on(delivered_on: date, request_days: int = RESAMPLE_REQUEST_DAYS) -> date:
    """PP-SEW-SAT-RESAMPLE: the last day a satellite system may request a resample of a
    result it received on ``delivered_on`` (calendar days)."""
    return delivered_on + timedelta(days=request_days)


def decide_resample_request(
    delivered_on: date, requested_on: date, request_days: int = RESAMPLE_REQUEST_DAYS
) -> ResampleRequestDecision:
    last_day = resample_window_ends_on(delivered_on, request_days)
    after = (requested_on - delivered_on).days
    if requested_on < delivered_on:
        return ResampleRequestDecision(
            False,
            delivered_on,
            requested_on,
            last_day,
            after,
            f"requested on {requested_on}, before the result was delivered on {delivered_on}",
        )
    if requested_on > last_day:
        return ResampleRequestDecision(
            False,
            delivered_on,
            requested_on,
            last_day,
            after,
            f"requested on {requested_on}, {after} days after the result was delivered on "
            f"{delivered_on}; requests are accepted within {request_days} days (until {last_day})",
        )
    return ResampleRequestDecision(
        True,
        delivered_on,
        requested_on,
        last_day,
        after,
        f"requested {after} days after delivery on {delivered_on}, within {request_days} days",
    )
