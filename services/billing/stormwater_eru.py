"""Billing's side of the stormwater contract: ERUs come from the stormwater service.

Billing never computes an ERU. The rating domain takes an `eru_of` function; this module
is the one that calls the stormwater service's published contract and turns its errors
into rating errors with the same field path (`parcel.area_sqft`, `parcel.use`).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from billing.domain.rating.errors import InvalidScenario
from common.tariffs import PPStormwaterTariff
from stormwater.contract import determine
from stormwater.domain import StormwaterError


def eru_of(raw_parcel: Mapping[str, Any], tariff: PPStormwaterTariff) -> tuple[Decimal, dict[str, Any]]:
    """The parcel's rounded ERU and the determination's derivation (for the ERU line)."""
    try:
        determination = determine(raw_parcel, tariff)
    except StormwaterError as exc:
        raise InvalidScenario(exc.field, exc.message) from None
    return determination.eru, determination.derivation()
