"""The simulated clock that fires the template's schedules.

`advance()` walks every schedule occurrence between now and the target time in time
order; each one sends the target's Input (with the Scheduler context attributes
substituted) to the target queue, or invokes the target function, and then the runtime
drains, so a day's work is finished before the next day's schedule fires.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sewerbill.local.stack import ScheduledTarget, Stack

log = logging.getLogger("sewerbill.local")


@dataclass
class Firing:
    schedule: str
    scheduled_time: datetime
    target_arn: str
    payload: str


class SimulatedClock:
    def __init__(
        self,
        start: datetime,
        stack: Stack,
        send: Callable[[ScheduledTarget, str, datetime], None],
        drain: Callable[[], Any],
    ) -> None:
        if start.tzinfo is None:
            raise ValueError("the clock needs an aware datetime (UTC)")
        self.now = start.astimezone(UTC)
        self.started = self.now
        self.stack = stack
        self._send = send
        self._drain = drain
        self.fired: list[Firing] = []

    def pending(self, until: datetime) -> list[tuple[datetime, ScheduledTarget]]:
        """Occurrences after now up to `until`, in time order (ties by schedule name)."""
        until = until.astimezone(UTC)
        due = [
            (at, sched)
            for sched in self.stack.schedules
            if sched.enabled
            for at in sched.schedule.occurrences(self.now, until)
        ]
        return sorted(due, key=lambda pair: (pair[0], pair[1].name))

    def advance(
        self,
        to: datetime | None = None,
        by: timedelta | None = None,
        drain_each: bool = True,
        progress: Callable[[Firing, int, int], None] | None = None,
    ) -> list[Firing]:
        if (to is None) == (by is None):
            raise ValueError("give exactly one of to= or by=")
        target = (self.now + by) if by is not None else to
        assert target is not None
        if target.tzinfo is None:
            raise ValueError("the clock needs an aware datetime (UTC)")
        target = target.astimezone(UTC)
        if target < self.now:
            raise ValueError(f"the clock only moves forward (now {self.now.isoformat()})")
        fired: list[Firing] = []
        due = self.pending(target)
        for n, (at, sched) in enumerate(due, start=1):
            self.now = at
            payload = self.render(sched, at)
            self._send(sched, payload, at)
            firing = Firing(sched.logical_id, at, sched.target_arn, payload)
            fired.append(firing)
            self.fired.append(firing)
            log.info("schedule %s fired for %s", sched.logical_id, at.isoformat())
            if progress is not None:
                progress(firing, n, len(due))
            if drain_each:
                self._drain()
        self.now = target
        if not drain_each and fired:
            self._drain()
        return fired

    @staticmethod
    def render(sched: ScheduledTarget, at: datetime) -> str:
        """The target input with EventBridge Scheduler's context attributes filled in."""
        stamp = at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        text = sched.input if sched.input is not None else "{}"
        if not isinstance(text, str):
            text = json.dumps(text)
        for key, value in {
            "<aws.scheduler.scheduled-time>": stamp,
            "<aws.scheduler.execution-id>": str(uuid.uuid4()),
            "<aws.scheduler.schedule-arn>": sched.arn,
            "<aws.scheduler.attempt-number>": "1",
        }.items():
            text = text.replace(key, value)
        return text
