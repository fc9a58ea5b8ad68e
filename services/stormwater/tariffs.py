"""The stormwater section of the Clean Water Utility tariff, as the domain's settings.

Kept outside `domain/` so the pure domain never depends on how tariffs are stored.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from common.tariffs import PPStormwaterTariff, TariffBook
from stormwater.domain.eru import StormwaterSettings
from stormwater.domain.parcels import TariffView

_HUNDRED = Decimal(100)


def settings_from_tariff(tariff: PPStormwaterTariff) -> StormwaterSettings:
    """PP-CWU-CN, PP-CWU-TR55, PP-CWU-ERU-STD, PP-CWU-IMPERV-RES settings of one tariff version."""
    return StormwaterSettings(
        impervious_cn=tariff.impervious_cn.value,
        pervious_cn=tariff.pervious_cn.value,
        woods_cn=tariff.woods_cn.value,
        design_storm_in=tariff.design_storm_in.value,
        standard_area_sqft=tariff.standard_area_sqft.value,
        standard_impervious_fraction=tariff.standard_impervious_percent.value / _HUNDRED,
        residential_allowance_sqft=tariff.residential_allowance_sqft.value,
        eru_places=tariff.eru_decimal_places.value,
    )


def tariff_view(tariff: PPStormwaterTariff) -> TariffView:
    return TariffView(
        version_id=tariff.version_id,
        effective_from=tariff.effective_from,
        settings=settings_from_tariff(tariff),
        eru_rate=tariff.eru_rate.value,
        project_evaluation_fee=tariff.project_evaluation_fee.value,
        credit_engineer_limit_percent=tariff.credit.engineer_limit_percent.value,
        credit_cap_percent=tariff.credit.cap_percent.value,
        credit_review_fee=tariff.credit.review_fee.value,
        appeal_fee=tariff.appeal_fee.value,
    )


class StormwaterTariffs:
    """The stormwater tenants' tariff versions, each built once into a ``TariffView``."""

    def __init__(self, book: TariffBook) -> None:
        self._book = book
        self._views: dict[str, TariffView] = {}
        self.tenants = frozenset(
            t for t in book.tenants if all(isinstance(v, PPStormwaterTariff) for v in book.versions(t))
        )

    def __call__(self, tenant: str, on: date) -> TariffView:
        tariff = self._book.in_force(tenant, on)
        if not isinstance(tariff, PPStormwaterTariff):
            raise ValueError(f"{tenant} is not a stormwater tenant")
        view = self._views.get(tariff.version_id)
        if view is None:
            view = self._views[tariff.version_id] = tariff_view(tariff)
        return view

    def versions(self, tenant: str) -> list[TariffView]:
        return [self(tenant, v.effective_from) for v in self._book.versions(tenant)]
