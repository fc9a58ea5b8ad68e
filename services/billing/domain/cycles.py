"""Billing cycles and the daily assessment, as far as the foundation goes.

A cycle schedule fires on the first of a month (tenant-local time) and bills the period
that just ended: one month for the Pleasant Prairie tenants (PP-SEW-BILLING,
PP-CWU-BILLING), three for Grafton and Sullivan (GR-BILLING). The period length is the
``billing_period_months`` of the tariff in force, so it is data, not code.

What this module does NOT do yet: rating accounts and issuing bills (the rating-engine
issue) and late charges, overdue and delinquency (the payments issue). Starting a cycle
only records it, once per (tenant, period), and announces ``BillingCycleStarted``; the
daily assessment only records the day it ran.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Protocol
from zoneinfo import ZoneInfo

from pydantic import AwareDatetime, BaseModel, ConfigDict

from billing.events import BillingCycleStarted
from common.clock import Clock
from common.dates import add_months
from common.errors import PermanentError

# All four tenants are Wisconsin utilities; schedules run in this zone too (template.yaml).
UTILITY_TZ = ZoneInfo("America/Chicago")


class CycleNotStartable(PermanentError):
    """The schedule names a tenant, or a date, that no tariff covers (a configuration fault)."""


class CycleScheduled(BaseModel):
    """The Input of a billing-cycle schedule (template.yaml ``BillingCycleSchedule*``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant: str
    scheduled_time: AwareDatetime


class AssessmentScheduled(BaseModel):
    """The Input of the daily assessment schedule."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scheduled_time: AwareDatetime


class TariffCalendar(Protocol):
    def billing_period_months(self, tenant: str, on: date) -> int:
        """Months per billing period of ``tenant`` on ``on``; raises CycleNotStartable."""
        ...


class CycleRepository(Protocol):
    def record_cycle_start(self, started: BillingCycleStarted) -> bool:
        """Store the cycle run with its outbox event; False if this cycle already started."""
        ...

    def record_assessment(self, day: date, scheduled_time: datetime) -> bool:
        """Store that the daily assessment ran for ``day``; False if already recorded."""
        ...


def local_date(at: datetime) -> date:
    return at.astimezone(UTILITY_TZ).date()


def period_ending(at: datetime, months: int) -> tuple[date, date]:
    """The ``months``-long period ending on the first of the month ``at`` falls in (local)."""
    day = local_date(at)
    end = date(day.year, day.month, 1)
    return add_months(end, -months), end


def start_billing_cycle(
    request: CycleScheduled, *, calendar: TariffCalendar, repo: CycleRepository, clock: Clock
) -> BillingCycleStarted | None:
    """Record the cycle for the period that just ended; None if it had already started."""
    end = period_ending(request.scheduled_time, 1)[1]
    months = calendar.billing_period_months(request.tenant, add_months(end, -1))
    start, end = period_ending(request.scheduled_time, months)
    started = BillingCycleStarted(
        occurred_at=clock.now(),
        tenant=request.tenant,
        period_start=start,
        period_end=end,
        period_months=months,
        scheduled_time=request.scheduled_time,
    )
    return started if repo.record_cycle_start(started) else None


def run_daily_assessment(request: AssessmentScheduled, *, repo: CycleRepository) -> bool:
    """Record the assessment day (tenant-local date of the fire time); False on a repeat."""
    return repo.record_assessment(local_date(request.scheduled_time), request.scheduled_time)
