"""Strength limits of each sewer tenant's tariff, as the sampling domain's StrengthLimits.

Kept outside `domain/` so the pure domain never depends on how tariffs are stored.
"""

from __future__ import annotations

from common.tariffs import GraftonTariff, PPSewerTariff, SullivanTariff
from sampling.domain.strength import StrengthLimits


def limits_from_tariff(tariff: PPSewerTariff | GraftonTariff | SullivanTariff) -> StrengthLimits:
    """PP-SEW-CAT-A, GR-NORMAL or SU-NORMAL limits of one tariff version."""
    if isinstance(tariff, PPSewerTariff):
        setting = tariff.surcharge.category_a_limits
    else:
        setting = tariff.normal_limits
    return StrengthLimits.from_mapping(dict(setting.value.items()), rule_id=setting.rule or "")
