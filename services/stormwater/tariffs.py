"""The stormwater section of the Clean Water Utility tariff, as the domain's settings.

Kept outside `domain/` so the pure domain never depends on how tariffs are stored.
"""

from __future__ import annotations

from decimal import Decimal

from common.tariffs import PPStormwaterTariff
from stormwater.domain.eru import StormwaterSettings

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
