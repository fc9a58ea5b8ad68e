"""EventBridge Scheduler expressions: `cron(...)`, `rate(...)` and `at(...)`.

AWS cron has six fields: minutes, hours, day-of-month, month, day-of-week, year. One of
day-of-month and day-of-week must be `?`; day-of-week runs 1-7 = SUN-SAT. Supported:
`*`, `?`, lists, ranges, steps (`0/15`, `*/5`, `1-30/2`), month and day names, `L`
(last day of month; `6L` last Friday), `W` (`15W` nearest weekday, `LW`) and `#`
(`3#2` second Tuesday). Times are evaluated in the schedule's time zone (IANA name) and
returned as aware UTC datetimes.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

_MONTHS = {
    name: i
    for i, name in enumerate(
        ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"], start=1
    )
}
_DAYS = {name: i for i, name in enumerate(["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"], start=1)}


class ScheduleExpressionError(ValueError):
    """The expression is not a valid (or not a supported) EventBridge schedule expression."""


def _parse_set(text: str, low: int, high: int, names: dict[str, int] | None = None) -> set[int]:
    values: set[int] = set()
    for part in text.split(","):
        step = 1
        has_step = "/" in part
        if has_step:
            part, step_text = part.split("/", 1)
            step = int(step_text)
            if step < 1:
                raise ScheduleExpressionError(f"bad step in {text!r}")
        if part == "*":
            start, end = low, high
        elif "-" in part:
            a, b = part.split("-", 1)
            start, end = _value(a, names), _value(b, names)
        else:
            start = _value(part, names)
            end = high if has_step else start
        if not (low <= start <= high and low <= end <= high):
            raise ScheduleExpressionError(f"{text!r} is outside {low}-{high}")
        if start <= end:
            values.update(range(start, end + 1, step))
        else:  # wrap-around range such as FRI-MON
            span = list(range(start, high + 1)) + list(range(low, end + 1))
            values.update(span[::step])
    return values


def _value(text: str, names: dict[str, int] | None) -> int:
    upper = text.upper()
    if names and upper in names:
        return names[upper]
    if not upper.isdigit():
        raise ScheduleExpressionError(f"not a number or name: {text!r}")
    return int(upper)


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    dom: str  # kept as text: it may use L / W / ?
    months: frozenset[int]
    dow: str  # kept as text: it may use L / # / ?
    years: frozenset[int] | None

    @classmethod
    def parse(cls, body: str) -> Cron:
        fields = body.split()
        if len(fields) != 6:
            raise ScheduleExpressionError(f"cron needs 6 fields, got {len(fields)}: {body!r}")
        minute, hour, dom, month, dow, year = fields
        if (dom == "?") == (dow == "?"):
            raise ScheduleExpressionError("exactly one of day-of-month and day-of-week must be '?'")
        cron = cls(
            minutes=frozenset(_parse_set(minute, 0, 59)),
            hours=frozenset(_parse_set(hour, 0, 23)),
            dom=dom.upper(),
            months=frozenset(_parse_set(month, 1, 12, _MONTHS)),
            dow=dow.upper(),
            years=None if year == "*" else frozenset(_parse_set(year, 1970, 2199)),
        )
        cron.matches_day(date(2000, 1, 3))  # validates the day fields early
        return cron

    def matches_day(self, day: date) -> bool:
        if day.month not in self.months or (self.years is not None and day.year not in self.years):
            return False
        if self.dom != "?":
            return _dom_matches(self.dom, day)
        return _dow_matches(self.dow, day)

    def times_on(self, day: date) -> Iterator[tuple[int, int]]:
        for hour in sorted(self.hours):
            for minute in sorted(self.minutes):
                yield hour, minute


def _aws_dow(day: date) -> int:
    return (day.weekday() + 1) % 7 + 1  # Monday=0 -> 2, Sunday=6 -> 1


def _dom_matches(spec: str, day: date) -> bool:
    last = calendar.monthrange(day.year, day.month)[1]
    for part in spec.split(","):
        if part == "L":
            if day.day == last:
                return True
        elif part == "LW":
            if day == _nearest_weekday(date(day.year, day.month, last)):
                return True
        elif part.endswith("W"):
            target = int(part[:-1])
            if target <= last and day == _nearest_weekday(date(day.year, day.month, target)):
                return True
        elif day.day in _parse_set(part, 1, 31):
            return True
    return False


def _nearest_weekday(target: date) -> date:
    """AWS/Quartz `W`: the weekday nearest to the date, never crossing into another month."""
    if target.weekday() == 5:  # Saturday -> Friday, or Monday if Friday is last month
        return target - timedelta(days=1) if target.day > 1 else target + timedelta(days=2)
    if target.weekday() == 6:  # Sunday -> Monday, or Friday if Monday is next month
        last = calendar.monthrange(target.year, target.month)[1]
        return target + timedelta(days=1) if target.day < last else target - timedelta(days=2)
    return target


def _dow_matches(spec: str, day: date) -> bool:
    dow = _aws_dow(day)
    last = calendar.monthrange(day.year, day.month)[1]
    for part in spec.split(","):
        if part == "L":
            if dow == 7:
                return True
        elif "#" in part:
            name, nth = part.split("#", 1)
            if dow == _value(name, _DAYS) and (day.day - 1) // 7 + 1 == int(nth):
                return True
        elif part.endswith("L"):
            if dow == _value(part[:-1], _DAYS) and day.day + 7 > last:
                return True
        elif dow in _parse_set(part, 1, 7, _DAYS):
            return True
    return False


_RATE = re.compile(r"^(\d+)\s+(minute|minutes|hour|hours|day|days)$")


@dataclass(frozen=True)
class Schedule:
    """A parsed expression plus its time zone and optional start/end (aware datetimes)."""

    expression: str
    timezone: str = "UTC"
    start: datetime | None = None
    end: datetime | None = None

    def occurrences(
        self, after: datetime, until: datetime, anchor: datetime | None = None
    ) -> Iterator[datetime]:
        """UTC fire times t with after < t <= until (and within start/end)."""
        expr = self.expression.strip()
        lo, hi = after, until
        if self.start is not None and self.start > lo:
            lo = self.start - timedelta(microseconds=1)
        if self.end is not None and self.end < hi:
            hi = self.end
        if lo >= hi:
            return
        if expr.startswith("cron(") and expr.endswith(")"):
            yield from _cron_occurrences(Cron.parse(expr[5:-1]), ZoneInfo(self.timezone), lo, hi)
        elif expr.startswith("rate(") and expr.endswith(")"):
            yield from _rate_occurrences(expr[5:-1].strip(), self.start or anchor or after, lo, hi)
        elif expr.startswith("at(") and expr.endswith(")"):
            at = datetime.fromisoformat(expr[3:-1]).replace(tzinfo=ZoneInfo(self.timezone)).astimezone(UTC)
            if lo < at <= hi:
                yield at
        else:
            raise ScheduleExpressionError(f"unsupported schedule expression {expr!r}")


def _cron_occurrences(cron: Cron, tz: ZoneInfo, after: datetime, until: datetime) -> Iterator[datetime]:
    day = after.astimezone(tz).date()
    last_day = until.astimezone(tz).date()
    while day <= last_day:
        if cron.matches_day(day):
            for hour, minute in cron.times_on(day):
                # fold=0: a time skipped by a DST change runs an hour later; a repeated
                # time runs once.
                local = datetime(day.year, day.month, day.day, hour, minute, tzinfo=tz)
                at = local.astimezone(UTC)
                if after < at <= until:
                    yield at
        day += timedelta(days=1)


def _rate_occurrences(body: str, anchor: datetime, after: datetime, until: datetime) -> Iterator[datetime]:
    match = _RATE.match(body)
    if not match:
        raise ScheduleExpressionError(f"bad rate expression: rate({body})")
    value, unit = int(match.group(1)), match.group(2).rstrip("s")
    if value < 1:
        raise ScheduleExpressionError("rate value must be positive")
    period = timedelta(**{unit + "s": value})
    k = max(1, int((after - anchor) / period))
    at = anchor + k * period
    while at <= until:
        if at > after:
            yield at.astimezone(UTC)
        at += period
