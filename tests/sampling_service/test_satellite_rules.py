"""Satellite systems: the 18-working-day deadline and the 3-day resample window."""

from __future__ import annotations

from datetime import date

from sampling.domain.satellite import (
    add_working_days,
    deadline_actions,
    decide_resample_request,
    results_deadline,
)
from sampling.tariffs import closure_calendar


def test_results_are_due_18_working_days_after_sampling_across_a_weekend_and_thanksgiving() -> None:
    # Sampled Thu 2025-11-20 (day 0). Working days: Fri 21 (1), Mon 24 (2), Tue 25 (3),
    # Wed 26 (4), [Thu 27 Thanksgiving], Fri 28 (5), Mon Dec 1 (6), 2 (7), 3 (8), 4 (9),
    # 5 (10), Mon 8 (11), 9 (12), 10 (13), 11 (14), 12 (15), Mon 15 (16), 16 (17), Wed 17 (18).
    assert add_working_days(date(2025, 11, 20), 18, closure_calendar()) == date(2025, 12, 17)


def test_a_tenant_closure_day_from_the_tariff_moves_the_deadline_one_working_day() -> None:
    # Pleasant Prairie's tariff closes Fri 2025-11-28 too: Fri 28 no longer counts, so the
    # 18th working day is Thu 2025-12-18.
    is_closed = closure_calendar(frozenset({date(2025, 11, 28)}))
    deadline = results_deadline("SAT-1", date(2025, 11, 20), is_closed)
    assert deadline.due_on == date(2025, 12, 18)
    # Reminder 3 working days before: Mon 2025-12-15.
    assert deadline.remind_on == date(2025, 12, 15)


def test_a_reminder_before_the_deadline_and_a_breach_after_it_each_once() -> None:
    deadline = results_deadline("SAT-1", date(2025, 11, 20), closure_calendar())
    assert deadline_actions(deadline, date(2025, 12, 11), None, False, False).remind is False
    assert deadline_actions(deadline, deadline.remind_on, None, False, False).remind is True
    assert deadline_actions(deadline, deadline.remind_on, None, True, False).remind is False
    assert deadline_actions(deadline, deadline.due_on, None, True, False).breach is False
    assert deadline_actions(deadline, date(2025, 12, 18), None, True, False).breach is True
    assert deadline_actions(deadline, date(2025, 12, 18), date(2025, 12, 16), False, False).breach is False


def test_a_resample_request_on_day_3_is_accepted_and_on_day_4_refused_with_the_dates() -> None:
    delivered = date(2025, 12, 10)
    assert decide_resample_request(delivered, date(2025, 12, 13)).accepted is True
    refused = decide_resample_request(delivered, date(2025, 12, 14))
    assert refused.accepted is False
    assert refused.last_day == date(2025, 12, 13)
    assert (
        "2025-12-14" in refused.reason and "2025-12-10" in refused.reason and "2025-12-13" in refused.reason
    )
