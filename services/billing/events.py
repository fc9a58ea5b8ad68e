"""Events published by billing (the contract other services import; additive changes only).

BillIssued, PaymentApplied, BillOverdue, BillDelinquent and TaxRollCertified come with
the issues that implement them.
"""

from __future__ import annotations

from datetime import date

from pydantic import AwareDatetime, Field

from common.events import Event

SOURCE = "sewerbill.billing"


class BillingCycleStarted(Event):
    """A tenant's billing cycle for the half-open period [period_start, period_end) began."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "period_start", "period_end")

    tenant: str
    period_start: date
    period_end: date
    period_months: int = Field(ge=1)
    scheduled_time: AwareDatetime
