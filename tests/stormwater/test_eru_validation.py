"""Bad parcel and settings input raises an error naming the field (CONTRACTS.md input rules)."""

from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest

from stormwater.domain import (
    PLEASANT_PRAIRIE_DEFAULTS,
    InvalidParcel,
    InvalidSettings,
    Parcel,
    StormwaterError,
    StormwaterSettings,
)


def _parcel(**overrides: Any) -> Parcel:
    fields: dict[str, Any] = {
        "use": "nonresidential",
        "area_sqft": Decimal(10000),
        "impervious_sqft": Decimal(2000),
    }
    fields.update(overrides)
    return Parcel(**fields)


@pytest.mark.parametrize("use", ["commercial", "Residential", "", None, 3])
def test_unknown_use_names_parcel_use(use):
    with pytest.raises(InvalidParcel) as exc:
        _parcel(use=use)
    assert exc.value.field == "parcel.use"
    assert str(exc.value).startswith("parcel.use: ")


@pytest.mark.parametrize("name", ["area_sqft", "impervious_sqft", "woods_sqft", "excluded_sqft"])
def test_negative_area_names_that_field(name):
    with pytest.raises(InvalidParcel) as exc:
        _parcel(**{name: Decimal("-1")})
    assert exc.value.field == f"parcel.{name}"
    assert "negative" in exc.value.message


@pytest.mark.parametrize("name", ["area_sqft", "impervious_sqft", "woods_sqft", "excluded_sqft"])
def test_float_area_is_refused_naming_the_field(name):
    with pytest.raises(InvalidParcel) as exc:
        _parcel(**{name: 1.5})
    assert exc.value.field == f"parcel.{name}"


@pytest.mark.parametrize("bad", [Decimal("NaN"), Decimal("Infinity"), "abc", True, [1]])
def test_non_numeric_area_names_the_field(bad):
    with pytest.raises(InvalidParcel) as exc:
        _parcel(woods_sqft=bad)
    assert exc.value.field == "parcel.woods_sqft"


def test_ints_and_decimal_strings_are_accepted_as_decimals():
    p = _parcel(area_sqft=10000, impervious_sqft="2000.5")
    assert p.area_sqft == Decimal(10000) and isinstance(p.area_sqft, Decimal)
    assert p.impervious_sqft == Decimal("2000.5")
    assert p.woods_sqft == Decimal(0)


def test_zero_area_names_area_sqft():
    with pytest.raises(InvalidParcel) as exc:
        _parcel(area_sqft=Decimal(0), impervious_sqft=Decimal(0))
    assert exc.value.field == "parcel.area_sqft"


def test_cover_exceeding_the_area_names_area_sqft():
    # 6,000 + 3,000 + 1,001 = 10,001 > 10,000
    with pytest.raises(InvalidParcel) as exc:
        _parcel(impervious_sqft=Decimal(6000), woods_sqft=Decimal(3000), excluded_sqft=Decimal(1001))
    assert exc.value.field == "parcel.area_sqft"


def test_cover_exactly_filling_the_area_is_accepted():
    p = _parcel(impervious_sqft=Decimal(6000), woods_sqft=Decimal(3000), excluded_sqft=Decimal(1000))
    assert p.counted_area_sqft == Decimal(9000)


def test_residential_fit_check_uses_structures_not_the_allowance():
    # 9,500 structures + 500 woods = 10,000: fits; the 750 allowance is capped, not refused
    p = _parcel(use="residential", impervious_sqft=Decimal(9500), woods_sqft=Decimal(500))
    assert p.impervious_sqft == Decimal(9500)
    with pytest.raises(InvalidParcel) as exc:
        _parcel(use="residential", impervious_sqft=Decimal(9501), woods_sqft=Decimal(500))
    assert exc.value.field == "parcel.area_sqft"


def test_exempt_parcels_are_validated_too():
    with pytest.raises(InvalidParcel) as exc:
        _parcel(use="agricultural", impervious_sqft=Decimal(20000))
    assert exc.value.field == "parcel.area_sqft"


def test_errors_are_value_errors_of_one_hierarchy():
    with pytest.raises(StormwaterError):
        _parcel(use="farm")
    assert issubclass(InvalidParcel, ValueError)
    assert issubclass(InvalidSettings, StormwaterError)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("impervious_cn", Decimal(0)),
        ("pervious_cn", Decimal(101)),
        ("woods_cn", Decimal(-30)),
        ("design_storm_in", Decimal(0)),
        ("standard_area_sqft", Decimal(0)),
        ("standard_impervious_fraction", Decimal("1.01")),
        ("residential_allowance_sqft", Decimal(-1)),
        ("eru_places", -1),
        ("eru_places", Decimal(2)),
        ("pervious_cn", 74.0),
    ],
)
def test_bad_settings_name_the_setting(name, value):
    with pytest.raises(InvalidSettings) as exc:
        replace(PLEASANT_PRAIRIE_DEFAULTS, **{name: value})
    assert exc.value.field == f"settings.{name}"


def test_settings_whose_standard_parcel_has_no_runoff_are_refused():
    # a 0.5 in storm on CN 78.3704: Ia = 0.551984 > 0.5, so the standard runoff is 0
    with pytest.raises(InvalidSettings) as exc:
        replace(PLEASANT_PRAIRIE_DEFAULTS, design_storm_in=Decimal("0.5"))
    assert exc.value.field == "settings.design_storm_in"


def test_tariff_defaults_are_the_tariffs_md_values():
    s = StormwaterSettings.tariff_defaults()
    assert s == PLEASANT_PRAIRIE_DEFAULTS
    assert (s.impervious_cn, s.pervious_cn, s.woods_cn) == (Decimal(98), Decimal(74), Decimal(30))
    assert s.design_storm_in == Decimal("2.0")
    assert s.standard_area_sqft == Decimal(15100)
    assert s.standard_impervious_fraction == Decimal("0.1821")
    assert s.standard_impervious_sqft == Decimal("2749.71")
    assert s.residential_allowance_sqft == Decimal(750)
    assert s.eru_places == 2
