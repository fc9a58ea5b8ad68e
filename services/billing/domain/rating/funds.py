"""Fund split recorded on a line (X-FUNDS, GR-FUNDS, SU-FUNDS).

The replacement share is rounded half-up to the cent (with ``round_line``, the one rounding
function); the rest of the line goes to operation and maintenance. The split is a detail of
the line, never a separate line.
"""

from __future__ import annotations

from decimal import Decimal

from common.money import round_line

ZERO_CENTS = Decimal("0.00")


def split_funds(amount: Decimal, replacement_share: Decimal) -> dict[str, Decimal]:
    """``{"replacement": round(amount x share), "om": amount - replacement}``."""
    replacement = round_line(amount * replacement_share)
    return {"replacement": replacement, "om": amount - replacement}


def om_only(amount: Decimal) -> dict[str, Decimal]:
    """A line wholly to operation and maintenance (no replacement share)."""
    return {"replacement": ZERO_CENTS, "om": amount}
