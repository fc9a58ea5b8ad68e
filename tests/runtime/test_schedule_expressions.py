"""AWS EventBridge Scheduler expressions on the simulated clock (pure, no sockets)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sewerbill.local.schedule import Schedule, ScheduleExpressionError


def fires(expr: str, after: datetime, until: datetime, tz: str = "UTC", **kw) -> list[datetime]:
    return list(Schedule(expr, tz, **kw).occurrences(after, until))


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_weekday_list_and_range_use_aws_numbering_sunday_is_1() -> None:
    got = fires("cron(30 8 ? * 2-6 *)", utc(2025, 3, 2), utc(2025, 3, 9))  # Sun 2 .. Sun 9
    assert [d.day for d in got] == [3, 4, 5, 6, 7]
    assert fires("cron(0 0 ? * SUN *)", utc(2025, 3, 1), utc(2025, 3, 31)) == [
        utc(2025, 3, d) for d in (2, 9, 16, 23, 30)
    ]
    assert [d.day for d in fires("cron(0 0 ? * 1,7 *)", utc(2025, 3, 1), utc(2025, 3, 10))] == [2, 8, 9]


def test_steps_and_lists_in_minutes_and_hours() -> None:
    got = fires("cron(0/15 9-10 * * ? *)", utc(2025, 1, 1), utc(2025, 1, 1, 23))
    assert len(got) == 8 and got[0] == utc(2025, 1, 1, 9) and got[-1] == utc(2025, 1, 1, 10, 45)
    assert fires("cron(5,35 */12 1 1 ? 2025)", utc(2024, 12, 31), utc(2026, 1, 2)) == [
        utc(2025, 1, 1, 0, 5),
        utc(2025, 1, 1, 0, 35),
        utc(2025, 1, 1, 12, 5),
        utc(2025, 1, 1, 12, 35),
    ]


def test_last_day_nearest_weekday_and_nth_weekday() -> None:
    assert [d.date().isoformat() for d in fires("cron(0 0 L * ? *)", utc(2024, 1, 1), utc(2024, 4, 1))] == [
        "2024-01-31",
        "2024-02-29",
        "2024-03-31",
    ]
    # 15 June 2025 is a Sunday -> Monday 16; 1 Feb 2025 is a Saturday -> Monday 3 (stays in month).
    assert fires("cron(0 0 15W * ? *)", utc(2025, 6, 1), utc(2025, 6, 30))[0].day == 16
    assert fires("cron(0 0 1W * ? *)", utc(2025, 2, 1), utc(2025, 2, 28))[0].day == 3
    # second Tuesday; last Friday
    assert fires("cron(0 0 ? * 3#2 *)", utc(2025, 5, 1), utc(2025, 5, 31))[0].day == 13
    assert fires("cron(0 0 ? * 6L *)", utc(2025, 5, 1), utc(2025, 5, 31))[0].day == 30


def test_time_zone_follows_daylight_saving() -> None:
    got = fires("cron(0 6 1 * ? *)", utc(2025, 1, 1), utc(2025, 8, 1), tz="America/Chicago")
    assert got[0] == utc(2025, 1, 1, 12) and got[-1] == utc(2025, 7, 1, 11)


def test_occurrences_are_after_start_and_up_to_end_inclusive() -> None:
    assert fires("cron(0 12 * * ? *)", utc(2025, 1, 1, 12), utc(2025, 1, 2, 12)) == [utc(2025, 1, 2, 12)]


def test_start_and_end_dates_bound_the_occurrences() -> None:
    bounded = fires(
        "cron(0 0 * * ? *)", utc(2025, 1, 1), utc(2025, 1, 31), start=utc(2025, 1, 10), end=utc(2025, 1, 12)
    )
    assert bounded == [utc(2025, 1, 10), utc(2025, 1, 11), utc(2025, 1, 12)]


@pytest.mark.parametrize(
    "bad",
    [
        "cron(0 0 * * * *)",
        "cron(0 0 ? * ? *)",
        "cron(0 0 * *)",
        "cron(61 0 * * ? *)",
        "rate(0 days)",
        "rate(6 hours)",  # valid on AWS, but the template uses cron only: not emulated
        "at(2025-03-01T09:00:00)",
        "every day",
    ],
)
def test_invalid_expressions_are_rejected(bad: str) -> None:
    with pytest.raises(ScheduleExpressionError):
        fires(bad, utc(2025, 1, 1), utc(2025, 1, 2))
