"""The stormwater service's contract for other services: a parcel document in, its ERU out.

Billing's `preview` and the portal hand a parcel as JSON (CONTRACTS.md `parcel`); this is
the one place that turns it into the domain's `Parcel` and determines its ERU with the
settings of a tariff version. In production the same determination reaches billing as the
ERUDetermined event. Errors are the domain's `StormwaterError` (with the field path).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from common.tariffs import PPStormwaterTariff
from stormwater.domain import EruDetermination, Parcel, determine_eru
from stormwater.tariffs import settings_from_tariff

_ZERO = Decimal(0)


def _or_zero(value: Any) -> Any:
    return _ZERO if value is None else value


def parcel_from_document(raw: Mapping[str, Any]) -> Parcel:
    """A `Parcel` from a CONTRACTS.md `parcel` object (use and areas; validated by the domain)."""
    return Parcel(
        use=raw.get("use"),  # type: ignore[arg-type]
        area_sqft=raw.get("area_sqft"),  # type: ignore[arg-type]
        impervious_sqft=raw.get("impervious_sqft"),  # type: ignore[arg-type]
        woods_sqft=_or_zero(raw.get("woods_sqft")),
        excluded_sqft=_or_zero(raw.get("excluded_sqft")),
    )


def determine(raw_parcel: Mapping[str, Any], tariff: PPStormwaterTariff) -> EruDetermination:
    """Validate the parcel and determine its ERU under `tariff` (PP-CWU-ERU)."""
    return determine_eru(parcel_from_document(raw_parcel), settings_from_tariff(tariff))
