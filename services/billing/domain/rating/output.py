"""A rated bill as the CONTRACTS.md ``preview`` output: decimal strings, never floats.

- ``amount``, ``total`` and money in details: two places ("45.00").
- ``rate``: at least two places ("6.50", "0.48", "-1.20"); more only when the rate has
  them (an unrounded per-REC rate).
- ``quantity`` and other figures: the exact decimal, without trailing zeros ("24.5", "1").
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from typing import Any

from billing.domain.rating.model import BillLine, RatedBill
from common.money import fmt

CENT = Decimal("0.01")


def plain(value: Decimal) -> str:
    """An exact decimal string without exponent or trailing zeros: 23.000 -> "23"."""
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def rate_text(value: Decimal) -> str:
    """A rate: two places unless it has more ("6.50", "37.50", "34.6153846...")."""
    normal = value.normalize()
    exponent = normal.as_tuple().exponent
    if isinstance(exponent, int) and exponent >= -2:
        return str(normal.quantize(CENT))
    return format(normal, "f")


_AS_IS = (str, int, bool, float, type(None))


def detail_value(value: Any) -> Any:
    """Details to JSON: Decimals with two places stay as they are (money), others plain.

    The exact types of a rated line's details (strings, Decimals, dicts) are answered before
    the general tests (a Mapping's is an ABC check: a cycle makes this call ~30 times a bill)."""
    kind = type(value)
    if kind in _AS_IS:
        return value
    if kind is dict:
        return {str(k): detail_value(v) for k, v in value.items()}
    if isinstance(value, Decimal):
        exponent = value.as_tuple().exponent
        return str(value) if exponent == -2 else plain(value)
    if isinstance(value, Mapping):
        return {str(k): detail_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [detail_value(v) for v in value]
    if isinstance(value, date):
        return value.isoformat()
    return value


def line_to_contract(bl: BillLine) -> dict[str, Any]:
    return {
        "rule_id": bl.rule_id,
        "description": bl.description,
        "quantity": plain(bl.quantity),
        "unit": bl.unit,
        "rate": rate_text(bl.rate),
        "amount": fmt(bl.amount),
        "details": detail_value(bl.details),
    }


def bill_to_contract(bill: RatedBill) -> dict[str, Any]:
    """The ``sewerbill preview`` output document; ``notes`` lists the rules that applied
    without a charge (empty when there are none)."""
    return {
        "tenant": bill.tenant,
        "period": {"start": bill.period_start.isoformat(), "end": bill.period_end.isoformat()},
        "tariff_versions": list(bill.tariff_versions),
        "lines": [line_to_contract(bl) for bl in bill.lines],
        "total": fmt(bill.total),
        "notes": [{"rule_id": note.rule_id, "text": note.text} for note in bill.notes],
    }
