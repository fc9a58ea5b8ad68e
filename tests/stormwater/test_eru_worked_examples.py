"""Worked ERU examples, each derived by hand (RULES.md PP-CWU-*; TARIFFS.md 2023-01-01).

Settings throughout: impervious CN 98, pervious CN 74, woods CN 30, P = 2.0 in,
standard parcel 15,100 sq ft at 18.21% impervious, residential allowance 750 sq ft,
ERUs to 2 decimals half-up.

The standard parcel (PP-CWU-ERU-STD), the denominator of every ERU:
  impervious = 15,100 x 0.1821 = 2,749.71 sq ft
  CN  = 0.1821 x 98 + 0.8179 x 74 = 17.8458 + 60.5246 = 78.3704
  S   = 1000 / 78.3704 - 10 = 2.759920;  Ia = 0.2 S = 0.551984;  P - Ia = 1.448016
  Q   = 1.448016^2 / (1.448016 + 2.759920) = 2.096751 / 4.207936 = 0.498285 in
  V   = 0.498285 / 12 x 15,100 = 627.008438 cu ft
"""

from decimal import ROUND_HALF_UP, Decimal

import pytest

from stormwater.domain import PLEASANT_PRAIRIE_DEFAULTS, Parcel, determine_eru

SETTINGS = PLEASANT_PRAIRIE_DEFAULTS
SIX = Decimal("0.000001")


def _d(parcel: Parcel):
    return determine_eru(parcel, SETTINGS)


def test_standard_parcel_is_exactly_one_eru():
    d = _d(Parcel(use="nonresidential", area_sqft=Decimal(15100), impervious_sqft=Decimal("2749.71")))
    assert d.composite_cn == Decimal("78.3704")
    assert d.runoff_in.quantize(SIX) == Decimal("0.498285")
    assert d.runoff_cuft.quantize(SIX) == Decimal("627.008438")
    assert d.standard_runoff_cuft == d.runoff_cuft
    assert d.eru_unrounded == Decimal(1)
    assert d.eru == Decimal("1.00")
    assert str(d.eru) == "1.00"


def test_standard_parcel_as_residential_structures_plus_allowance_is_one_eru():
    # 1,999.71 sq ft of structures + 750 allowance = 2,749.71 impervious: the standard parcel
    d = _d(Parcel(use="residential", area_sqft=Decimal(15100), impervious_sqft=Decimal("1999.71")))
    assert d.impervious_counted_sqft == Decimal("2749.71")
    assert d.composite_cn == Decimal("78.3704")
    assert d.eru == Decimal("1.00")


def test_standard_parcel_contract_output_matches_contracts_md():
    d = _d(Parcel(use="nonresidential", area_sqft=Decimal(15100), impervious_sqft=Decimal("2749.71")))
    assert d.to_contract_dict() == {
        "eru": "1.00",
        "composite_cn": "78.3704",
        # CONTRACTS.md: each figure from its unrounded value, depth at 6 places, volumes at 4:
        # 0.498285 in; 0.498285... / 12 x 15,100 = 627.008438 -> 627.0084 (627.0084 /
        # 627.0084 = 1 -> 1.00). A volume from the 4-place depth (0.4983 / 12 x 15,100 =
        # 627.03) would no longer be reproducible from what is shown.
        "runoff_in": "0.498285",
        "runoff_cuft": "627.0084",
        "standard_runoff_cuft": "627.0084",
        "counted_area_sqft": "15100",
        "exempt": False,
    }


def test_a_large_parcel_s_eru_can_be_redone_from_the_figures_shown():
    # Issue 8: 100,000 sq ft nonresidential with 2,500 sq ft impervious, 97,500 pervious.
    # CN = (2,500 x 98 + 97,500 x 74) / 100,000 = (245,000 + 7,215,000) / 100,000 = 74.6
    # S  = 1000 / 74.6 - 10 = 3.404826;  Ia = 0.2 S = 0.680965;  P - Ia = 1.319035
    # Q  = 1.319035^2 / (1.319035 + 3.404826) = 1.739853 / 4.723861 = 0.368312 in
    # V  = 0.368312 / 12 x 100,000 = 3,069.2638 cu ft (from the unrounded depth)
    # ERU = 3,069.2638 / 627.0084 = 4.895092 -> 4.90.
    # The old display took the volume from the 4-place depth: 0.3683 / 12 x 100,000 =
    # 3,069.17 and 3,069.17 / 627.03 = 4.8948 -> 4.89, not the 4.90 billed.
    d = _d(Parcel(use="nonresidential", area_sqft=Decimal(100000), impervious_sqft=Decimal(2500)))
    out = d.to_contract_dict()
    assert out == {
        "eru": "4.90",
        "composite_cn": "74.6000",
        "runoff_in": "0.368312",
        "runoff_cuft": "3069.2638",
        "standard_runoff_cuft": "627.0084",
        "counted_area_sqft": "100000",
        "exempt": False,
    }
    redone = (Decimal(out["runoff_cuft"]) / Decimal(out["standard_runoff_cuft"])).quantize(
        Decimal("0.01"), rounding=ROUND_HALF_UP
    )
    assert str(redone) == out["eru"]


def test_one_acre_nonresidential_parcel_with_30000_sqft_impervious_is_6_54_eru():
    # PP-CWU-IMPERV-NONRES: all 30,000 sq ft impervious count; 43,560 - 30,000 = 13,560 pervious
    # CN = (30,000 x 98 + 13,560 x 74) / 43,560 = (2,940,000 + 1,003,440) / 43,560
    #    = 3,943,440 / 43,560 = 90.528926
    # S  = 1000 / 90.528926 - 10 = 1.046193;  Ia = 0.209239;  P - Ia = 1.790761
    # Q  = 1.790761^2 / (1.790761 + 1.046193) = 3.206826 / 2.836955 = 1.130376 in
    # V  = 1.130376 / 12 x 43,560 = 4,103.266092 cu ft
    # ERU = 4,103.266092 / 627.008438 = 6.544196 -> 6.54
    d = _d(Parcel(use="nonresidential", area_sqft=Decimal(43560), impervious_sqft=Decimal(30000)))
    assert d.composite_cn.quantize(SIX) == Decimal("90.528926")
    assert d.runoff_in.quantize(SIX) == Decimal("1.130376")
    assert d.runoff_cuft.quantize(SIX) == Decimal("4103.266092")
    assert d.eru_unrounded.quantize(SIX) == Decimal("6.544196")
    assert d.eru == Decimal("6.54")
    assert d.impervious_counted_sqft == Decimal(30000)
    assert d.to_contract_dict()["eru"] == "6.54"
    assert d.rule_ids == ("PP-CWU-ERU", "PP-CWU-ERU-STD", "PP-CWU-IMPERV-NONRES", "PP-CWU-CN", "PP-CWU-TR55")


def test_residential_2000_sqft_structures_on_12000_sqft_is_0_86_eru():
    # PP-CWU-IMPERV-RES: 2,000 structures + 750 allowance = 2,750 impervious; 9,250 pervious
    # CN = (2,750 x 98 + 9,250 x 74) / 12,000 = (269,500 + 684,500) / 12,000 = 954,000 / 12,000 = 79.5
    # S  = 1000 / 79.5 - 10 = 2.578616;  Ia = 0.515723;  P - Ia = 1.484277
    # Q  = 1.484277^2 / (1.484277 + 2.578616) = 2.203077 / 4.062893 = 0.542244 in
    # V  = 0.542244 / 12 x 12,000 = 542.243511 cu ft
    # ERU = 542.243511 / 627.008438 = 0.864811 -> 0.86
    d = _d(Parcel(use="residential", area_sqft=Decimal(12000), impervious_sqft=Decimal(2000)))
    assert d.impervious_counted_sqft == Decimal(2750)
    assert d.composite_cn == Decimal("79.5")
    assert d.runoff_in.quantize(SIX) == Decimal("0.542244")
    assert d.runoff_cuft.quantize(SIX) == Decimal("542.243511")
    assert d.eru_unrounded.quantize(SIX) == Decimal("0.864811")
    assert d.eru == Decimal("0.86")
    assert "PP-CWU-IMPERV-RES" in d.rule_ids


def test_woods_count_at_cn_30():
    # 20,000 sq ft nonresidential: 5,000 impervious, 5,000 woods, 10,000 other pervious
    # CN = (5,000 x 98 + 10,000 x 74 + 5,000 x 30) / 20,000 = 1,380,000 / 20,000 = 69
    # S  = 1000 / 69 - 10 = 4.492754;  Ia = 0.898551;  P - Ia = 1.101449
    # Q  = 1.101449^2 / (1.101449 + 4.492754) = 1.213191 / 5.594203 = 0.216866 in
    # V  = 0.216866 / 12 x 20,000 = 361.442767 cu ft
    # ERU = 361.442767 / 627.008438 = 0.576456 -> 0.58
    d = _d(
        Parcel(
            use="nonresidential",
            area_sqft=Decimal(20000),
            impervious_sqft=Decimal(5000),
            woods_sqft=Decimal(5000),
        )
    )
    assert d.composite_cn == Decimal(69)
    assert d.runoff_in.quantize(SIX) == Decimal("0.216866")
    assert d.runoff_cuft.quantize(SIX) == Decimal("361.442767")
    assert d.eru == Decimal("0.58")


def test_excluded_pond_is_removed_from_area_for_cn_and_volume():
    # 20,000 sq ft residential with a 5,000 sq ft pond: counted area 15,000
    # impervious = 2,250 structures + 750 = 3,000; other pervious = 15,000 - 3,000 = 12,000
    # CN = (3,000 x 98 + 12,000 x 74) / 15,000 = (294,000 + 888,000) / 15,000 = 78.8
    # S  = 1000 / 78.8 - 10 = 2.690355;  Ia = 0.538071;  P - Ia = 1.461929
    # Q  = 1.461929^2 / (1.461929 + 2.690355) = 2.137236 / 4.152284 = 0.514713 in
    # V  = 0.514713 / 12 x 15,000 = 643.391707 cu ft   (over 15,000 sq ft, not 20,000)
    # ERU = 643.391707 / 627.008438 = 1.026129 -> 1.03
    d = _d(
        Parcel(
            use="residential",
            area_sqft=Decimal(20000),
            impervious_sqft=Decimal(2250),
            excluded_sqft=Decimal(5000),
        )
    )
    assert d.counted_area_sqft == Decimal(15000)
    assert d.composite_cn == Decimal("78.8")
    assert d.runoff_cuft.quantize(SIX) == Decimal("643.391707")
    assert d.eru_unrounded.quantize(SIX) == Decimal("1.026129")
    assert d.eru == Decimal("1.03")
    assert d.to_contract_dict()["counted_area_sqft"] == "15000"


def test_residential_allowance_is_capped_so_impervious_and_woods_fit_the_counted_area():
    # 1,000 sq ft lot: 200 excluded, 300 woods, 400 structures. Counted area 800.
    # 400 + 750 = 1,150 is capped at 800 - 300 woods = 500; no other pervious area left.
    # CN = (500 x 98 + 300 x 30) / 800 = (49,000 + 9,000) / 800 = 72.5
    d = _d(
        Parcel(
            use="residential",
            area_sqft=Decimal(1000),
            impervious_sqft=Decimal(400),
            woods_sqft=Decimal(300),
            excluded_sqft=Decimal(200),
        )
    )
    assert d.counted_area_sqft == Decimal(800)
    assert d.impervious_counted_sqft == Decimal(500)
    assert d.composite_cn == Decimal("72.5")


def test_residential_lot_smaller_than_the_allowance_is_all_impervious():
    # 600 sq ft, no structures: 0 + 750 capped at 600 -> CN 98
    # Q(98) = 1.774355 in; V = 1.774355 / 12 x 600 = 88.717751; ERU = 88.717751 / 627.008438 = 0.141494
    d = _d(Parcel(use="residential", area_sqft=Decimal(600), impervious_sqft=Decimal(0)))
    assert d.impervious_counted_sqft == Decimal(600)
    assert d.composite_cn == Decimal(98)
    assert d.eru == Decimal("0.14")


def test_undeveloped_nonresidential_lot_gets_no_allowance():
    # same 12,000 sq ft lot with no structures: nonresidential has no allowance -> CN 74
    # S = 1000/74 - 10 = 3.513514; Ia = 0.702703; P - Ia = 1.297297
    # Q = 1.297297^2 / (1.297297 + 3.513514) = 1.682980 / 4.810811 = 0.349833 in
    # V = 0.349833 / 12 x 12,000 = 349.832979 cu ft; ERU = 349.832979 / 627.008438 = 0.557940 -> 0.56
    d = _d(Parcel(use="nonresidential", area_sqft=Decimal(12000), impervious_sqft=Decimal(0)))
    assert d.impervious_counted_sqft == 0
    assert d.composite_cn == Decimal(74)
    assert d.runoff_in.quantize(SIX) == Decimal("0.349833")
    assert d.eru_unrounded.quantize(SIX) == Decimal("0.557940")
    assert d.eru == Decimal("0.56")


@pytest.mark.parametrize("use", ["agricultural", "right_of_way"])
def test_agricultural_and_right_of_way_are_exempt_with_zero_eru(use):
    d = _d(Parcel(use=use, area_sqft=Decimal(43560), impervious_sqft=Decimal(30000)))
    assert d.exempt is True
    assert d.eru == 0
    assert d.eru_unrounded == 0
    assert d.rule_ids == ("PP-CWU-EXEMPT",)
    out = d.to_contract_dict()
    assert out["exempt"] is True
    assert out["eru"] == "0"
    assert out["composite_cn"] is None
    assert out["runoff_in"] is None
    assert out["standard_runoff_cuft"] == "627.0084"


def test_parcel_entirely_pond_has_zero_eru_but_is_not_exempt():
    d = _d(
        Parcel(
            use="nonresidential",
            area_sqft=Decimal(8000),
            impervious_sqft=Decimal(0),
            excluded_sqft=Decimal(8000),
        )
    )
    assert d.exempt is False
    assert d.counted_area_sqft == 0
    assert d.eru == Decimal("0.00")
    assert d.composite_cn is None
    out = d.to_contract_dict()
    assert out["eru"] == "0.00"
    assert out["runoff_cuft"] == "0.0000"
    assert out["counted_area_sqft"] == "0"


def test_eru_rounding_follows_the_tariff_setting():
    from dataclasses import replace

    three = replace(SETTINGS, eru_places=3)
    d = determine_eru(
        Parcel(use="nonresidential", area_sqft=Decimal(43560), impervious_sqft=Decimal(30000)), three
    )
    # 6.544196 -> 6.544 at 3 places
    assert d.eru == Decimal("6.544")
    assert d.to_contract_dict()["eru"] == "6.544"


def test_pervious_cn_is_a_tariff_setting():
    from dataclasses import replace

    # pervious CN 80 (soil group D): standard CN = 0.1821 x 98 + 0.8179 x 80 = 17.8458 + 65.432 = 83.2778
    higher = replace(SETTINGS, pervious_cn=Decimal(80))
    d = determine_eru(
        Parcel(use="nonresidential", area_sqft=Decimal(15100), impervious_sqft=Decimal("2749.71")), higher
    )
    assert d.composite_cn == Decimal("83.2778")
    assert d.eru == Decimal("1.00")
    # an all-pervious lot at CN 80: Q = 0.5625 exactly; V = 0.5625 / 12 x 15,100 = 707.8125
    lawn = determine_eru(
        Parcel(use="nonresidential", area_sqft=Decimal(15100), impervious_sqft=Decimal(0)), higher
    )
    assert lawn.runoff_cuft == Decimal("707.8125")


def test_derivation_carries_inputs_settings_and_figures_as_strings():
    d = _d(Parcel(use="residential", area_sqft=Decimal(12000), impervious_sqft=Decimal(2000)))
    details = d.derivation()
    assert details["rule_ids"] == [
        "PP-CWU-ERU",
        "PP-CWU-ERU-STD",
        "PP-CWU-IMPERV-RES",
        "PP-CWU-CN",
        "PP-CWU-TR55",
    ]
    assert details["eru"] == "0.86"
    assert details["eru_unrounded"] == "0.864811"
    assert details["composite_cn"] == "79.5000"
    assert details["runoff_in"] == "0.542244"
    assert details["impervious_sqft"] == "2000"
    assert details["impervious_counted_sqft"] == "2750"
    assert details["runoff_cuft_unrounded"] == "542.243511"
    assert details["standard_runoff_cuft_unrounded"] == "627.008438"
    assert details["standard_composite_cn"] == "78.3704"
    assert details["pervious_cn"] == "74"
    assert details["design_storm_in"] == "2.0"
    assert details["residential_allowance_sqft"] == "750"
    decimals = [v for k, v in details.items() if k not in ("rule_ids", "exempt", "eru_places")]
    assert all(isinstance(v, str) for v in decimals)
