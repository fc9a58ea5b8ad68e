"""Billing's table (the foundation part): cycle runs, assessment days, outbox.

Keys: ``CYCLE#<tenant>`` / ``PERIOD#<start>#<end>``; ``ASSESSMENT`` / ``DATE#<date>``;
``OUTBOX#<event_id>`` / ``OUTBOX`` (``common.outbox``).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from billing.events import BillingCycleStarted
from common.clock import Clock
from common.dynamo import ConditionFailed, put_if_absent, put_new, transact
from common.ids import key
from common.outbox import outbox_put


class DynamoBillingRepository:
    def __init__(self, client: Any, table: str, clock: Clock) -> None:
        self._client = client
        self._table = table
        self._clock = clock

    def record_cycle_start(self, started: BillingCycleStarted) -> bool:
        now = self._clock.now()
        item = {
            "pk": key("CYCLE", started.tenant),
            "sk": key("PERIOD", started.period_start, started.period_end),
            "tenant": started.tenant,
            "period_start": started.period_start.isoformat(),
            "period_end": started.period_end.isoformat(),
            "period_months": started.period_months,
            "scheduled_time": started.scheduled_time.isoformat(),
            "status": "started",
            "event_id": started.event_id,
            "recorded_at": now.isoformat(),
        }
        return self._write([put_if_absent(self._table, item), outbox_put(self._table, started, now=now)])

    def record_assessment(self, day: date, scheduled_time: datetime) -> bool:
        item = {
            "pk": "ASSESSMENT",
            "sk": key("DATE", day.isoformat()),
            "scheduled_time": scheduled_time.isoformat(),
            "recorded_at": self._clock.now().isoformat(),
        }
        return put_new(self._client, self._table, item)  # one item: no transaction needed

    def _write(self, actions: list[dict[str, Any]]) -> bool:
        try:
            transact(self._client, actions)
        except ConditionFailed as exc:
            if 0 in exc.indexes:
                return False  # the business key is already there: a repeat, nothing to do
            raise
        return True
