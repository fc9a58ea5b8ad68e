"""Money is Decimal, rounded half-up to the cent once per bill line (X-MONEY)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
ZERO = Decimal("0")


def round_line(amount: Decimal) -> Decimal:
    """Round one bill line to the cent, half-up on the magnitude (X-MONEY).

    A credit is rounded as a positive amount and then negated, so -0.005 becomes -0.01.
    """
    # Positional rounding and a Decimal zero: this is the hottest call of the rating engine.
    if amount < ZERO:
        return -((-amount).quantize(CENT, ROUND_HALF_UP))
    return amount.quantize(CENT, ROUND_HALF_UP)


def round_half_up(value: Decimal, places: int) -> Decimal:
    """Round a non-money quantity (e.g. ERUs) to `places` decimals, half-up on the magnitude."""
    q = Decimal(1).scaleb(-places)
    if value < 0:
        return -((-value).quantize(q, rounding=ROUND_HALF_UP))
    return value.quantize(q, rounding=ROUND_HALF_UP)


def fmt(amount: Decimal) -> str:
    """Format money for JSON output: a decimal string with two places."""
    return str(round_line(amount))
