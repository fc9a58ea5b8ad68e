"""TR-55 curve number method (PP-CWU-TR55) and composite CN (PP-CWU-CN)."""

from decimal import Decimal

import pytest

from stormwater.domain import InvalidHydrology, composite_cn, runoff_depth_in, runoff_volume_cuft
from stormwater.domain.tr55 import potential_retention_in

P = Decimal("2.0")
CN = {"impervious_cn": Decimal(98), "pervious_cn": Decimal(74), "woods_cn": Decimal(30)}


def _two_places(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"))


def test_table_2_1_cn_98_two_inch_rain_gives_1_77_in():
    # S = 1000/98 - 10 = 0.204082; Ia = 0.040816; P - Ia = 1.959184
    # Q = 1.959184^2 / (1.959184 + 0.204082) = 3.838401 / 2.163265 = 1.774355 -> 1.77
    q = runoff_depth_in(Decimal(98), P)
    assert _two_places(q) == Decimal("1.77")
    assert q.quantize(Decimal("0.000001")) == Decimal("1.774355")


def test_table_2_1_cn_80_two_inch_rain_gives_0_56_in():
    # S = 1000/80 - 10 = 2.5 exactly; Ia = 0.5; Q = 1.5^2 / (1.5 + 2.5) = 2.25 / 4 = 0.5625
    q = runoff_depth_in(Decimal(80), P)
    assert q == Decimal("0.5625")
    assert _two_places(q) == Decimal("0.56")


def test_table_2_1_cn_50_two_inch_rain_has_no_runoff_because_p_equals_ia():
    # S = 1000/50 - 10 = 10; Ia = 2.0 = P, so P > Ia fails and Q = 0
    assert potential_retention_in(Decimal(50)) == Decimal(10)
    assert runoff_depth_in(Decimal(50), P) == 0


def test_low_cn_below_initial_abstraction_has_no_runoff():
    # CN 30: S = 23.333..., Ia = 4.667 > 2.0
    assert runoff_depth_in(Decimal(30), P) == 0


def test_cn_100_runs_off_all_the_rain():
    # S = 0, Ia = 0, Q = P^2 / P = P
    assert runoff_depth_in(Decimal(100), P) == Decimal("2.0")


def test_standard_parcel_runoff_depth_is_0_4983_in():
    # S = 1000/78.3704 - 10 = 2.759920; Ia = 0.551984; P - Ia = 1.448016
    # Q = 1.448016^2 / (1.448016 + 2.759920) = 2.096751 / 4.207936 = 0.498285
    q = runoff_depth_in(Decimal("78.3704"), P)
    assert q.quantize(Decimal("0.0001")) == Decimal("0.4983")
    assert q.quantize(Decimal("0.000001")) == Decimal("0.498285")


def test_runoff_depth_is_not_rounded_along_the_way():
    q = runoff_depth_in(Decimal("78.3704"), P)
    # far more digits than any display; X-MONEY: nothing rounded along the way
    assert len(q.as_tuple().digits) >= 30


def test_composite_cn_of_standard_parcel_is_78_3704_exactly():
    # 2,749.71 impervious (15,100 x 0.1821) and 12,350.29 pervious:
    # (2,749.71 x 98 + 12,350.29 x 74) / 15,100 = (269,471.58 + 913,921.46) / 15,100 = 78.3704
    assert composite_cn(Decimal(15100), Decimal("2749.71"), Decimal(0), **CN) == Decimal("78.3704")


def test_composite_cn_weights_woods_at_30():
    # 5,000 x 98 + 10,000 x 74 + 5,000 x 30 = 490,000 + 740,000 + 150,000 = 1,380,000; / 20,000 = 69
    assert composite_cn(Decimal(20000), Decimal(5000), Decimal(5000), **CN) == Decimal(69)


def test_composite_cn_all_impervious_is_98_and_all_woods_is_30():
    assert composite_cn(Decimal(100), Decimal(100), Decimal(0), **CN) == Decimal(98)
    assert composite_cn(Decimal(100), Decimal(0), Decimal(100), **CN) == Decimal(30)
    assert composite_cn(Decimal(100), Decimal(0), Decimal(0), **CN) == Decimal(74)


def test_runoff_volume_is_depth_over_12_times_area():
    # 0.5625 in over 1,200 sq ft = 0.5625 / 12 x 1,200 = 56.25 cu ft
    assert runoff_volume_cuft(Decimal("0.5625"), Decimal(1200)) == Decimal("56.25")


@pytest.mark.parametrize("cn", [Decimal(0), Decimal(-5), Decimal("100.01"), Decimal("NaN")])
def test_curve_number_outside_0_to_100_is_refused(cn):
    with pytest.raises(InvalidHydrology) as exc:
        runoff_depth_in(cn, P)
    assert exc.value.field == "cn"


def test_negative_rain_is_refused():
    with pytest.raises(InvalidHydrology) as exc:
        runoff_depth_in(Decimal(80), Decimal("-0.1"))
    assert exc.value.field == "p_in"


def test_composite_cn_refuses_cover_larger_than_the_counted_area():
    with pytest.raises(InvalidHydrology) as exc:
        composite_cn(Decimal(100), Decimal(60), Decimal(50), **CN)
    assert exc.value.field == "counted_area_sqft"


def test_composite_cn_needs_a_counted_area():
    with pytest.raises(InvalidHydrology) as exc:
        composite_cn(Decimal(0), Decimal(0), Decimal(0), **CN)
    assert exc.value.field == "counted_area_sqft"
