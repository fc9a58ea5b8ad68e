"""The TR-55 curve number method, as the Clean Water Utility ordinance uses it.

Pure Decimal arithmetic (X-MONEY: never float). Every function here computes in
``HYDROLOGY``, one context of ``HYDROLOGY_PRECISION`` significant digits built once at
import, through its methods (``HYDROLOGY.divide(a, b)``): no context is built, copied or
installed per parcel (issue 11: building one per call was most of a determination's cost).
Nothing is rounded along the way: curve numbers, depths and volumes keep full precision;
only ERUs are rounded, and only once (PP-CWU-ERU, in ``eru.py``).
"""

from __future__ import annotations

from decimal import (
    ROUND_HALF_EVEN,
    Context,
    Decimal,
    DivisionByZero,
    InvalidOperation,
    Overflow,
)

from stormwater.domain.errors import InvalidHydrology

HYDROLOGY_PRECISION = 40
"""Significant digits for hydrology arithmetic: far beyond any figure that is displayed."""

ZERO = Decimal(0)
TEN = Decimal(10)
HUNDRED = Decimal(100)
THOUSAND = Decimal(1000)
INITIAL_ABSTRACTION_RATIO = Decimal("0.2")
INCHES_PER_FOOT = Decimal(12)


def hydrology_context() -> Context:
    """A fresh Decimal context for hydrology: 40 digits, traps on invalid/zero-division/overflow."""
    return Context(
        prec=HYDROLOGY_PRECISION,
        rounding=ROUND_HALF_EVEN,
        traps=[InvalidOperation, DivisionByZero, Overflow],
    )


HYDROLOGY = hydrology_context()
"""The one context the hydrology arithmetic runs in, through its methods (never installed as
the thread's context, so callers' contexts are untouched). Its status flags accumulate and
are never read; its traps raise."""
_add, _sub, _mul, _div = HYDROLOGY.add, HYDROLOGY.subtract, HYDROLOGY.multiply, HYDROLOGY.divide


def potential_retention_in(cn: Decimal) -> Decimal:
    """Potential maximum retention S (in) = 1000 / CN - 10 (PP-CWU-TR55; TR-55 eq. 2-4)."""
    _check_cn(cn, "cn")
    return _sub(_div(THOUSAND, cn), TEN)


def runoff_depth_in(cn: Decimal, p_in: Decimal) -> Decimal:
    """Runoff depth Q (in) of a rain of ``p_in`` inches on cover of curve number ``cn``.

    PP-CWU-TR55: S = 1000/CN - 10, Ia = 0.2 S, Q = (P - Ia)^2 / (P - Ia + S) when P > Ia,
    else 0. Unrounded. CN 100 (S = 0) gives Q = P.
    """
    _check_cn(cn, "cn")
    if not p_in.is_finite() or p_in < 0:
        raise InvalidHydrology("p_in", f"rainfall must be a non-negative number of inches, got {p_in}")
    s = _sub(_div(THOUSAND, cn), TEN)
    ia = _mul(INITIAL_ABSTRACTION_RATIO, s)
    if p_in <= ia:
        return ZERO
    excess = _sub(p_in, ia)
    return _div(_mul(excess, excess), _add(excess, s))


def composite_cn(
    counted_area_sqft: Decimal,
    impervious_sqft: Decimal,
    woods_sqft: Decimal,
    *,
    impervious_cn: Decimal,
    pervious_cn: Decimal,
    woods_cn: Decimal,
) -> Decimal:
    """Area-weighted composite curve number of a parcel's counted area (PP-CWU-CN).

    ``counted_area_sqft`` is the parcel area with ponds, lakes, agricultural land and
    wetlands already removed (PP-CWU-CN interpretation). Impervious area weighs
    ``impervious_cn`` (98), woods/brush/meadow ``woods_cn`` (30) and the rest of the counted
    area ``pervious_cn`` (the Village's, a tariff setting). Unrounded.
    """
    for name, value in (
        ("counted_area_sqft", counted_area_sqft),
        ("impervious_sqft", impervious_sqft),
        ("woods_sqft", woods_sqft),
    ):
        if not value.is_finite() or value < 0:
            raise InvalidHydrology(name, f"must be a non-negative area, got {value}")
    if counted_area_sqft == 0:
        raise InvalidHydrology("counted_area_sqft", "a composite curve number needs a counted area above 0")
    for name, cn in (("impervious_cn", impervious_cn), ("pervious_cn", pervious_cn), ("woods_cn", woods_cn)):
        _check_cn(cn, name)
    other_pervious = _sub(_sub(counted_area_sqft, impervious_sqft), woods_sqft)
    if other_pervious < 0:
        raise InvalidHydrology(
            "counted_area_sqft",
            f"impervious ({impervious_sqft}) + woods ({woods_sqft}) exceed the counted area "
            f"({counted_area_sqft})",
        )
    weighted = _add(
        _add(_mul(impervious_sqft, impervious_cn), _mul(other_pervious, pervious_cn)),
        _mul(woods_sqft, woods_cn),
    )
    return _div(weighted, counted_area_sqft)


def runoff_volume_cuft(runoff_in: Decimal, area_sqft: Decimal) -> Decimal:
    """Runoff volume (cu ft) = Q (in) / 12 x area (sq ft) (PP-CWU-TR55). Unrounded."""
    return _div(_mul(runoff_in, area_sqft), INCHES_PER_FOOT)


def _check_cn(cn: Decimal, name: str) -> None:
    if not cn.is_finite() or cn <= 0 or cn > HUNDRED:
        raise InvalidHydrology(name, f"a curve number must be above 0 and at most 100, got {cn}")
