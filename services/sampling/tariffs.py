"""Sampling's view of the tariffs: strength limits and the sampling policy in force.

Kept outside `domain/` so the pure domain never depends on how tariffs are stored, nor on
the holiday calendar library.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date
from decimal import Decimal
from functools import lru_cache

import holidays

from common.tariffs import GraftonTariff, PPSewerTariff, SullivanTariff, TariffBook
from common.tariffs import UnknownTenant as UnknownTariffTenant
from sampling.domain.errors import UnknownTenant
from sampling.domain.lab_files import DEFAULT_PLAUSIBLE_MAX_MG_L
from sampling.domain.policy import TenantPolicy
from sampling.domain.strength import CLASSIFIED_TENANTS, StrengthLimits


def limits_from_tariff(tariff: PPSewerTariff | GraftonTariff | SullivanTariff) -> StrengthLimits:
    """PP-SEW-CAT-A, GR-NORMAL or SU-NORMAL limits of one tariff version."""
    if isinstance(tariff, PPSewerTariff):
        setting = tariff.surcharge.category_a_limits
    else:
        setting = tariff.normal_limits
    limits: dict[str, Decimal] = {str(k): v for k, v in setting.value.items()}
    return StrengthLimits.from_mapping(limits, rule_id=setting.rule or "")


@lru_cache(maxsize=64)
def _public_holidays(year: int) -> frozenset[date]:
    """Wisconsin and US public holidays of ``year`` (the ``holidays`` package)."""
    return frozenset(holidays.country_holidays("US", subdiv="WI", years=year))


def closure_calendar(extra_closures: frozenset[date] = frozenset()) -> Callable[[date], bool]:
    """Closed on weekends, Wisconsin/US public holidays and the tenant's own closure days."""

    def is_closed(day: date) -> bool:
        return day.weekday() >= 5 or day in _public_holidays(day.year) or day in extra_closures

    return is_closed


def policy_from_tariff(tariff: PPSewerTariff | GraftonTariff | SullivanTariff) -> TenantPolicy:
    settings = tariff.sampling
    plausible: dict[str, Decimal] = dict(DEFAULT_PLAUSIBLE_MAX_MG_L)
    closures: frozenset[date] = frozenset()
    extra: dict[str, object] = {}
    if settings is not None:
        if settings.plausible_max_mg_l is not None:
            plausible.update({str(k): v for k, v in settings.plausible_max_mg_l.value.items()})
        if settings.closure_days is not None:
            closures = frozenset(settings.closure_days.value)
        if settings.resample_deviation_factor is not None:
            extra["deviation_factor"] = settings.resample_deviation_factor.value
        if settings.split_difference_percent is not None:
            extra["split_difference_percent"] = settings.split_difference_percent.value
        if settings.satellite_results_working_days is not None:
            extra["satellite_working_days"] = settings.satellite_results_working_days.value
        if settings.satellite_reminder_working_days is not None:
            extra["satellite_reminder_working_days"] = settings.satellite_reminder_working_days.value
        if settings.satellite_resample_request_days is not None:
            extra["satellite_request_days"] = settings.satellite_resample_request_days.value
        if settings.annual_report_due is not None:
            month, day = settings.annual_report_due.value.split("-")
            extra["report_due"] = (int(month), int(day))
        if settings.annual_report_reminder_days is not None:
            extra["report_reminder_days"] = tuple(settings.annual_report_reminder_days.value)
    if isinstance(tariff, PPSewerTariff):
        extra["exit_months"] = tariff.category_b_exit_months.value
        extra["sample_cost"] = tariff.sample_cost_per_sample.value
    return TenantPolicy(
        tenant=tariff.tenant,
        tariff_version=tariff.version_id,
        limits=limits_from_tariff(tariff),
        billing_period_months=tariff.billing_period_months,
        plausible_max_mg_l=plausible,
        is_closed=closure_calendar(closures),
        **extra,  # type: ignore[arg-type]
    )


class BookPolicies:
    """``Policies`` over a TariffBook: the tenant's sampling policy in force on a date."""

    def __init__(self, book: TariffBook) -> None:
        self._book = book

    def __call__(self, tenant: str, on: date) -> TenantPolicy:
        if tenant not in CLASSIFIED_TENANTS:
            raise UnknownTenant(tenant, CLASSIFIED_TENANTS)
        try:
            tariff = self._book.in_force(tenant, on)
        except UnknownTariffTenant:
            raise UnknownTenant(tenant, CLASSIFIED_TENANTS) from None
        assert isinstance(tariff, PPSewerTariff | GraftonTariff | SullivanTariff)
        return replace(policy_from_tariff(tariff), first_tariff_on=self._book.first_effective(tenant))
