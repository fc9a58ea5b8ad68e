"""Properties of the ERU determination (PP-CWU-ERU, -ERU-STD, -EXEMPT, -TR55)."""

from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal

from hypothesis import given
from hypothesis import strategies as st

from stormwater.domain import PLEASANT_PRAIRIE_DEFAULTS, Parcel, ParcelUse, determine_eru

SETTINGS = PLEASANT_PRAIRIE_DEFAULTS
CENT = Decimal("0.01")


def _sqft(hundredths: int) -> Decimal:
    return Decimal(hundredths) * CENT


@st.composite
def covers(draw, max_area: int = 10_000_000_00):
    """(area, impervious, woods, excluded) in hundredths of a sq ft, cover fitting the area."""
    area = draw(st.integers(min_value=1, max_value=max_area))
    excluded = draw(st.integers(min_value=0, max_value=area))
    woods = draw(st.integers(min_value=0, max_value=area - excluded))
    impervious = draw(st.integers(min_value=0, max_value=area - excluded - woods))
    return area, impervious, woods, excluded


def _parcel(use: ParcelUse, area: int, impervious: int, woods: int, excluded: int) -> Parcel:
    return Parcel(
        use=use,
        area_sqft=_sqft(area),
        impervious_sqft=_sqft(impervious),
        woods_sqft=_sqft(woods),
        excluded_sqft=_sqft(excluded),
    )


@given(
    pervious_cn=st.integers(min_value=60, max_value=98),
    fraction_bp=st.integers(min_value=1000, max_value=10000),
    area=st.integers(min_value=750_00, max_value=10_000_000_00),
)
def test_the_standard_parcel_is_one_eru_for_any_settings(pervious_cn, fraction_bp, area):
    settings = replace(
        SETTINGS,
        pervious_cn=Decimal(pervious_cn),
        standard_impervious_fraction=Decimal(fraction_bp).scaleb(-4),
        standard_area_sqft=_sqft(area),
    )
    impervious = settings.standard_impervious_sqft
    d = determine_eru(
        Parcel(use="nonresidential", area_sqft=_sqft(area), impervious_sqft=impervious), settings
    )
    assert d.eru_unrounded == 1
    assert d.eru == Decimal("1.00")
    if impervious >= settings.residential_allowance_sqft:
        structures = impervious - settings.residential_allowance_sqft
        r = determine_eru(
            Parcel(use="residential", area_sqft=_sqft(area), impervious_sqft=structures), settings
        )
        assert r.eru == Decimal("1.00")


@given(cover=covers(), use=st.sampled_from(["residential", "nonresidential"]), data=st.data())
def test_more_impervious_area_never_lowers_runoff_or_eru(cover, use, data):
    area, impervious, woods, excluded = cover
    more = data.draw(st.integers(min_value=impervious, max_value=area - excluded - woods), label="more")
    less_d = determine_eru(_parcel(use, area, impervious, woods, excluded), SETTINGS)
    more_d = determine_eru(_parcel(use, area, more, woods, excluded), SETTINGS)
    assert more_d.runoff_cuft >= less_d.runoff_cuft
    assert more_d.eru_unrounded >= less_d.eru_unrounded
    assert more_d.eru >= less_d.eru
    if less_d.composite_cn is not None and less_d.runoff_in is not None:
        assert more_d.composite_cn is not None and more_d.runoff_in is not None
        assert more_d.composite_cn >= less_d.composite_cn
        assert more_d.runoff_in >= less_d.runoff_in


@given(cover=covers(), use=st.sampled_from(["residential", "nonresidential"]))
def test_eru_is_never_negative_and_is_the_rounded_ratio(cover, use):
    d = determine_eru(_parcel(use, *cover), SETTINGS)
    assert d.eru >= 0
    assert d.eru == d.eru_unrounded.quantize(CENT, rounding=ROUND_HALF_UP)
    assert d.eru.as_tuple().exponent == -2
    assert not d.exempt
    assert d.counted_area_sqft == _sqft(cover[0] - cover[3])
    assert d.impervious_counted_sqft + _sqft(cover[2]) <= d.counted_area_sqft


@given(cover=covers(), use=st.sampled_from(["agricultural", "right_of_way"]))
def test_exempt_parcels_always_have_zero_eru(cover, use):
    d = determine_eru(_parcel(use, *cover), SETTINGS)
    assert d.exempt is True
    assert d.eru == 0
    assert d.to_contract_dict()["eru"] == "0"
    assert d.to_contract_dict()["exempt"] is True


@given(cover=covers(max_area=1_000_000_00), factor=st.integers(min_value=2, max_value=50))
def test_nonresidential_eru_scales_with_parcel_size_at_the_same_cover(cover, factor):
    # same cover fractions -> same CN and depth; volume (and ERU) proportional to the counted area
    base = determine_eru(_parcel("nonresidential", *cover), SETTINGS)
    scaled = determine_eru(_parcel("nonresidential", *(x * factor for x in cover)), SETTINGS)
    expected = base.eru_unrounded * factor
    # equal to 25 significant digits (hydrology runs at 40 digits, this test's product at 28)
    assert abs(scaled.eru_unrounded - expected) <= Decimal("1e-25") * max(expected, Decimal(1))


@given(cover=covers())
def test_residential_never_less_than_the_same_parcel_nonresidential(cover):
    # the allowance only adds impervious area (PP-CWU-IMPERV-RES)
    res = determine_eru(_parcel("residential", *cover), SETTINGS)
    nonres = determine_eru(_parcel("nonresidential", *cover), SETTINGS)
    assert res.eru_unrounded >= nonres.eru_unrounded


HALF_CENT = Decimal("0.005")


@given(cover=covers(), use=st.sampled_from(["residential", "nonresidential"]))
def test_a_clerk_redoes_the_eru_from_the_volumes_shown(cover, use):
    # CONTRACTS.md `eru`: runoff_cuft / standard_runoff_cuft, rounded half-up to 2 places,
    # is the ERU. Both volumes are shown at 4 places (each off by at most 0.00005), so the
    # quotient of the shown volumes is within (1 + ERU) x 0.00005 / 627.0084, about
    # (1 + ERU) x 8e-8, of the unrounded ratio the ERU is rounded from. Only a ratio that
    # close to a half-cent boundary can round apart: for a 100,000 sq ft parcel (ERU ~5)
    # that is a band of 5e-7 in 0.01; for a 9,000,000 sq ft one (ERU ~1,500), 1.2e-4.
    d = determine_eru(_parcel(use, *cover), SETTINGS)
    out = d.to_contract_dict()
    redone = (Decimal(out["runoff_cuft"]) / Decimal(out["standard_runoff_cuft"])).quantize(
        CENT, rounding=ROUND_HALF_UP
    )
    nearest_boundary = (d.eru_unrounded - HALF_CENT).quantize(CENT, rounding=ROUND_HALF_UP) + HALF_CENT
    if abs(d.eru_unrounded - nearest_boundary) > Decimal("1e-7") * (1 + d.eru_unrounded):
        assert str(redone) == out["eru"]
    if out["runoff_in"] is not None:
        assert Decimal(out["runoff_in"]).as_tuple().exponent == -6
    assert Decimal(out["runoff_cuft"]).as_tuple().exponent == -4
