"""Time is an input (DESIGN "Flow"): code below the handler asks a Clock, never the OS.

Composition roots hand use cases a :class:`RuntimeClock`. In AWS it is the system clock and
nothing can move it: no environment variable is read. The local runtime (and tests) run
handlers in-process and call :func:`install` with their simulated clock, so a year of a
utility runs in seconds with every recorded instant on the simulated calendar.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant as an aware UTC datetime."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that says what it is told; tests and the simulated local clock use it."""

    def __init__(self, at: datetime) -> None:
        self._at = _require_aware(at)

    def now(self) -> datetime:
        return self._at

    def set(self, at: datetime) -> None:
        self._at = _require_aware(at)

    def advance(self, by: timedelta) -> None:
        self._at = self._at + by


_SYSTEM = SystemClock()
_installed: Clock | None = None


def install(clock: Clock | None) -> None:
    """Make every :class:`RuntimeClock` of this process follow ``clock`` (``None``: the system).

    Only the local runtime and tests call this; deployed code never does.
    """
    global _installed
    _installed = clock


class RuntimeClock:
    """The clock composition roots inject: the installed clock if any, else the system clock.

    Asked per call, not at cold start, because simulated time moves between invocations of a
    warm function.
    """

    def now(self) -> datetime:
        clock = _installed
        return _require_aware(clock.now()) if clock is not None else _SYSTEM.now()


def _require_aware(at: datetime) -> datetime:
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError("a clock needs an aware datetime")
    return at.astimezone(UTC)
