"""EventBridge Scheduler `cron(...)` expressions on the simulated clock.

AWS's six-field cron (`L`, `W`, `#`, `?`, day and month names, year) is parsed and iterated
by `aws-croniter`; this module adds the schedule's time zone (IANA name, daylight saving
included) and its optional start and end dates. `rate(...)` and `at(...)` are refused: the
template does not use them, and the runtime does not emulate what the template does not use.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from aws_croniter import AwsCroniter
from aws_croniter.exceptions import AwsCroniterExpressionError


class ScheduleExpressionError(ValueError):
    """The expression is not a valid (or not an emulated) EventBridge schedule expression."""


@dataclass(frozen=True)
class Schedule:
    """A cron expression plus its time zone and optional start/end (aware datetimes)."""

    expression: str
    timezone: str = "UTC"
    start: datetime | None = None
    end: datetime | None = None
    _cron: AwsCroniter = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        expr = self.expression.strip()
        if not (expr.startswith("cron(") and expr.endswith(")")):
            raise ScheduleExpressionError(f"{expr!r}: only cron(...) schedules are emulated locally")
        try:
            object.__setattr__(self, "_cron", AwsCroniter(expr[5:-1]))
        except AwsCroniterExpressionError as exc:
            raise ScheduleExpressionError(f"{expr!r}: {exc}") from exc

    def occurrences(self, after: datetime, until: datetime) -> Iterator[datetime]:
        """UTC fire times t with after < t <= until (and within start/end)."""
        lo, hi = after, until
        if self.start is not None and self.start > lo:
            lo = self.start - timedelta(microseconds=1)
        if self.end is not None and self.end < hi:
            hi = self.end
        if lo >= hi:
            return
        # aws-croniter counts in UTC; count in the zone's wall time (a day's margin either
        # side for the offset), then place each wall time in the zone: fold=0, so a time
        # skipped by a daylight-saving change runs an hour later and a repeated one once.
        tz = ZoneInfo(self.timezone)
        wall = lo.astimezone(tz).replace(tzinfo=UTC) - timedelta(days=1)
        last = hi.astimezone(tz).replace(tzinfo=UTC) + timedelta(days=1)
        for local in self._cron.get_all_schedule_bw_dates(wall, last):
            at = local.replace(tzinfo=tz).astimezone(UTC)
            if lo < at <= hi:
                yield at
