"""What a printed bill says beyond its charges, as data: pure, no rendering.

Dates as a customer reads them ("December 1, 2026"), the service period by its last day,
quantities rounded for display as the tariff bills them (the derivation keeps full
precision: only the printed figure is rounded), the late charge the tenant's rule would
add if the bill is paid late, the past-due part of the previous balance, and the use per
day behind the usage chart.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from common.money import CENT
from notices.domain.documents import BillDocument, UsagePoint
from notices.domain.model import money

# Places a quantity is printed with, by unit. ERUs are rounded to 2 places by the tariff
# (PP-CWU-ERU, ``eru_decimal_places``) and always print both; kgal and pounds are billed
# unrounded (X-VOLUME, X-POUNDS), so they print to the hundredth, a whole number without
# its places. Counted units (month, quarter, sample, day) print whole where they are.
QUANTITY_PLACES = {"kgal": 2, "lb": 2, "ERU": 2, "gal": 0}
FIXED_PLACES = {"ERU"}
DEFAULT_PLACES = 2


def us_date(day: date) -> str:
    """``December 1, 2026``."""
    return f"{day:%B} {day.day}, {day.year}"


def last_day(period_end: date) -> date:
    """The last day of a period whose end is exclusive (billing's convention)."""
    return period_end - timedelta(days=1)


def period_text(start: date, end_exclusive: date) -> str:
    """``July 1, 2026 through September 30, 2026``."""
    return f"{us_date(start)} through {us_date(last_day(end_exclusive))}"


def display_quantity(quantity: Decimal, unit: str) -> str:
    """The quantity as printed: rounded half-up to its unit's places (see QUANTITY_PLACES)."""
    places = QUANTITY_PLACES.get(unit, DEFAULT_PLACES)
    rounded = quantity.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if unit not in FIXED_PLACES and rounded == rounded.to_integral_value():
        text = f"{rounded.to_integral_value():,}"
    else:
        text = f"{rounded:,}"
    return f"{text} {unit}".strip()


@dataclass(frozen=True)
class LateChargeRule:
    """A tenant's late payment charge as its tariff states it (GR-LATE, SU-LATE,
    PP-CWU-PENALTY): a percent of the current charges or of the unpaid balance, a minimum,
    from so many days after the bill date (never before the due date)."""

    rule: str
    percent: Decimal
    after_days: int
    basis: str = "balance"  # "current": this bill's charges only (GR-LATE); else the amount due
    minimum: Decimal = Decimal("0.00")
    per_month: bool = False

    @classmethod
    def of(cls, data: dict[str, Any] | None) -> LateChargeRule | None:
        if not data:
            return None
        return cls(
            rule=str(data["rule"]),
            percent=Decimal(str(data["percent"])),
            after_days=int(data["after_days"]),
            basis=str(data.get("basis", "balance")),
            minimum=Decimal(str(data.get("minimum", "0.00"))),
            per_month=bool(data.get("per_month", False)),
        )


@dataclass(frozen=True)
class LateCharge:
    rule: str
    amount: Decimal
    after: date  # charged if not paid by this day
    per_month: bool

    def text(self) -> str:
        monthly = " (and each month it stays unpaid)" if self.per_month else ""
        return f"A late charge of {money(self.amount)}{monthly} applies if paid after {us_date(self.after)}."


def late_charge(doc: BillDocument, rule: LateChargeRule | None) -> LateCharge | None:
    """The late charge this bill would bear, or None (no rule, nothing due)."""
    if rule is None or doc.amount_due <= 0:
        return None
    basis = min(doc.total, doc.amount_due) if rule.basis == "current" else doc.amount_due
    if basis <= 0:
        return None
    amount = max((basis * rule.percent / 100).quantize(CENT, rounding=ROUND_HALF_UP), rule.minimum)
    after = max(doc.bill_date + timedelta(days=rule.after_days), doc.due_date)
    return LateCharge(rule=rule.rule, amount=amount, after=after, per_month=rule.per_month)


def past_due(doc: BillDocument) -> Decimal:
    """The part of the previous balance still unpaid when this bill was issued (its own due
    date has passed by then): printed in the past-due box. Zero when none."""
    unpaid = doc.previous_balance - doc.payments_since
    return unpaid if unpaid > 0 else Decimal("0.00")


def daily_use(point: UsagePoint, days: int) -> Decimal:
    return (point.volume_gal / days).quantize(Decimal(1), rounding=ROUND_HALF_UP) if days > 0 else Decimal(0)


def same_period_last_year(doc: BillDocument) -> UsagePoint | None:
    target = doc.period_start.replace(year=doc.period_start.year - 1)
    return next((p for p in doc.usage if p.period_start == target), None)


def current_use(doc: BillDocument) -> UsagePoint | None:
    return next((p for p in doc.usage if p.period_start == doc.period_start), None)


def period_days(doc: BillDocument) -> int:
    return (doc.period_end - doc.period_start).days


def eru(doc: BillDocument) -> Decimal | None:
    """The ERUs this stormwater bill charges (its PP-CWU-ERU line), or None."""
    return next((ln.quantity for ln in doc.lines if ln.unit == "ERU" and ln.quantity is not None), None)


def is_stormwater(doc: BillDocument) -> bool:
    """A parcel-based bill: ERU lines and no metered use."""
    return not doc.reads and any(ln.unit == "ERU" for ln in doc.lines)


def scan_line(account_id: str, amount_due: Decimal) -> str:
    """The stub's scan line (Code 128 and printed under it): the account and the amount
    due in cents, ten digits (a credit or nothing due scans as zero)."""
    cents = int((max(amount_due, Decimal(0)) * 100).to_integral_value(rounding=ROUND_HALF_UP))
    return f"{account_id} {cents:010d}"
