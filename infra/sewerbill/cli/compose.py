"""The what-if commands compose the services' domains, as only staff tooling may.

A running service reaches another only through its events (billing learns a parcel's ERU
from the stormwater service's ERUDetermined event), so billing imports nothing of
stormwater. The staff command `sewerbill preview` has no events to wait for: it determines
the ERU here, with the stormwater service's own contract (`stormwater.contract`), and
injects the function into billing's rating domain (`parse_scenario(..., eru_of)`).
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
    """The parcel's rounded ERU and the determination's derivation (for the ERU line).

    The stormwater domain's errors become rating errors with the same field path
    (`parcel.area_sqft`, `parcel.use`), so `preview` reports them like any other input.
    """
    try:
        determination = determine(raw_parcel, tariff)
    except StormwaterError as exc:
        raise InvalidScenario(exc.field, exc.message) from None
    return determination.eru, determination.derivation()
