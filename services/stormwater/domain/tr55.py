"""The TR-55 curve number method, as the Clean Water Utility ordinance uses it.

Pure Decimal arithmetic (X-MONEY: never float). Every function here computes in
``hydrology_context()``, a local context of ``HYDROLOGY_PRECISION`` significant digits, and
rounds nothing along the way: curve numbers, depths and volumes keep full precision; only
ERUs are rounded, and only once (PP-CWU-ERU, in ``eru.py``).
"""

from __future__ import annotations

from decimal import (
    ROUND_HALF_EVEN,
    Context,
    Decimal,
    DivisionByZero,
    InvalidOperation,
    Overflow,
    localcontext,
)

from stormwater.domain.errors import InvalidHydrology

HYDROLOGY_PRECISION = 40
"""Significant digits for hydrology arithmetic: far beyond any figure that is displayed."""

ZERO = Decimal(0)
HUNDRED = Decimal(100)
INCHES_PER_FOOT = Decimal(12)


def hydrology_context() -> Context:
    """A fresh Decimal context for hydrology: 40 digits, traps on invalid/zero-division/overflow."""
    return Context(
        prec=HYDROLOGY_PRECISION,
        rounding=ROUND_HALF_EVEN,
        traps=[InvalidOperation, DivisionByZero, Overflow],
    )


def potential_retention_in(cn: Decimal) -> Decimal:
    """Potential maximum retention S (in) = 1000 / CN - 10 (PP-CWU-TR55; TR-55 eq. 2-4)."""
    _check_cn(cn, "cn")
    with localcontext(hydrology_context()):
        return Decimal(1000) / cn - 10


def runoff_depth_in(cn: Decimal, p_in: Decimal) -> Decimal:
    """Runoff depth Q (in) of a rain of ``p_in`` inches on cover of curve number ``cn``.

    PP-CWU-TR55: S = 1000/CN - 10, Ia = 0.2 S, Q = (P - Ia)^2 / (P - Ia + S) when P > Ia,
    else 0. Unrounded. CN 100 (S = 0) gives Q = P.
    """
    _check_cn(cn, "cn")
    if not p_in.is_finite() or p_in < 0:
        raise InvalidHydrology("p_in", f"rainfall must be a non-negative number of inches, got {p_in}")
    with localcontext(hydrology_context()):
        s = Decimal(1000) / cn - 10
        ia = Decimal("0.2") * s
        if p_in <= ia:
            return ZERO
        excess = p_in - ia
        return excess * excess / (excess + s)


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
    with localcontext(hydrology_context()):
        other_pervious = counted_area_sqft - impervious_sqft - woods_sqft
        if other_pervious < 0:
            raise InvalidHydrology(
                "counted_area_sqft",
                f"impervious ({impervious_sqft}) + woods ({woods_sqft}) exceed the counted area "
                f"({counted_area_sqft})",
            )
        weighted = impervious_sqft * impervious_cn + other_pervious * pervious_cn + woods_sqft * woods_cn
        return weighted / counted_area_sqft


def runoff_volume_cuft(runoff_in: Decimal, area_sqft: Decimal) -> Decimal:
    """Runoff volume (cu ft) = Q (in) / 12 x area (sq ft) (PP-CWU-TR55). Unrounded."""
    with localcontext(hydrology_context()):
        return runoff_in * area_sqft / INCHES_PER_FOOT


def _check_cn(cn: Decimal, name: str) -> None:
    if not cn.is_finite() or cn <= 0 or cn > HUNDRED:
        raise InvalidHydrology(name, f"a curve number must be above 0 and at most 100, got {cn}")
