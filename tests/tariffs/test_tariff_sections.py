"""The shipped tariffs feed the stormwater and sampling domains with the ordinance's figures."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from common.tariff_files import default_tariffs_dir, load_tariff_book
from sampling.domain.strength import (
    GRAFTON_NORMAL,
    PLEASANT_PRAIRIE_CATEGORY_A,
    SULLIVAN_NORMAL,
    Parameter,
)
from sampling.tariffs import limits_from_tariff
from stormwater.domain.eru import PLEASANT_PRAIRIE_DEFAULTS, Parcel, determine_eru
from stormwater.tariffs import settings_from_tariff

BOOK = load_tariff_book(default_tariffs_dir())


def test_stormwater_tariff_gives_the_standard_parcel_one_eru() -> None:
    settings = settings_from_tariff(BOOK.in_force("pleasant-prairie-stormwater", date(2026, 1, 1)))
    assert settings == PLEASANT_PRAIRIE_DEFAULTS
    # 18.21% of 15,100 sq ft = 2,749.71 sq ft impervious (PP-CWU-ERU-STD)
    std = Parcel(use="nonresidential", area_sqft=Decimal("15100"), impervious_sqft=Decimal("2749.71"))
    assert determine_eru(std, settings).eru == Decimal("1.00")


def test_strength_limits_come_from_each_tenant_tariff() -> None:
    on = date(2026, 1, 1)
    for tenant, expected in (
        ("pleasant-prairie-sewer", PLEASANT_PRAIRIE_CATEGORY_A),
        ("grafton-sewer", GRAFTON_NORMAL),
        ("sullivan-sewer", SULLIVAN_NORMAL),
    ):
        limits = limits_from_tariff(BOOK.in_force(tenant, on))  # type: ignore[arg-type]
        for p in Parameter:
            assert limits.limit(p) == expected.limit(p), (tenant, p)
