"""A tenant's sampling policy on a date: the tariff's settings as the domain needs them.

Built outside the domain (``sampling.tariffs``) from the tariff in force and the closure
calendar, so the use cases stay pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from sampling.domain.lab_files import DEFAULT_PLAUSIBLE_MAX_MG_L
from sampling.domain.samples import DEFAULT_DEVIATION_FACTOR, DEFAULT_SPLIT_DIFFERENCE_PERCENT
from sampling.domain.satellite import REMINDER_WORKING_DAYS, RESAMPLE_REQUEST_DAYS, RESULTS_DUE_WORKING_DAYS
from sampling.domain.strength import PP_EXIT_MONTHS, StrengthLimits


def _weekend(day: date) -> bool:
    return day.weekday() >= 5


@dataclass(frozen=True)
class TenantPolicy:
    tenant: str
    tariff_version: str
    limits: StrengthLimits
    billing_period_months: int
    exit_months: int = PP_EXIT_MONTHS
    plausible_max_mg_l: Mapping[str, Decimal] = field(
        default_factory=lambda: dict(DEFAULT_PLAUSIBLE_MAX_MG_L)
    )
    deviation_factor: Decimal = DEFAULT_DEVIATION_FACTOR
    split_difference_percent: Decimal = DEFAULT_SPLIT_DIFFERENCE_PERCENT
    sample_cost: Decimal | None = None
    satellite_working_days: int = RESULTS_DUE_WORKING_DAYS
    satellite_reminder_working_days: int = REMINDER_WORKING_DAYS
    satellite_request_days: int = RESAMPLE_REQUEST_DAYS
    is_closed: Callable[[date], bool] = _weekend
    report_due: tuple[int, int] | None = None
    report_reminder_days: tuple[int, ...] = ()
    # The tenant's first tariff version's effective date: no lab date lies before it
    # (common.fields.DateWindow); None where not known (then 1900-01-01).
    first_tariff_on: date | None = None


Policies = Callable[[str, date], TenantPolicy]
"""The policy of a tenant in force on a date (raises the sampling UnknownTenant)."""
