"""Billing periods: half-open ``[start, end)``, whole months (PP-SEW-BILLING, GR-BILLING).

Month addition (documented because calendars are ragged): ``start + n months`` keeps the
day of the month, clamped to the last day of a shorter month. So a Pleasant Prairie
period may start on any day: 2026-01-15 -> 2026-02-15; 2026-01-31 -> 2026-02-28
(2028-02-29 in a leap year); 2026-03-31 -> 2026-04-30. A quarter is three months:
2026-11-30 -> 2027-02-28. The month arithmetic is ``common.dates.add_months``, the one the
sampling service's 24-month exit uses too.
"""

from __future__ import annotations

from datetime import date

from common.dates import add_months

__all__ = ["add_months", "is_billing_period"]


def is_billing_period(start: date, end: date, months: int) -> bool:
    """True when ``[start, end)`` is exactly one billing period of ``months`` months."""
    return add_months(start, months) == end
