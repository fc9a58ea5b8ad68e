"""Billing periods: half-open ``[start, end)``, whole months (PP-SEW-BILLING, GR-BILLING).

Month addition (documented because calendars are ragged): ``start + n months`` keeps the
day of the month, clamped to the last day of a shorter month. So a Pleasant Prairie
period may start on any day: 2026-01-15 -> 2026-02-15; 2026-01-31 -> 2026-02-28
(2028-02-29 in a leap year); 2026-03-31 -> 2026-04-30. A quarter is three months:
2026-11-30 -> 2027-02-28. The clamping is the same as the sampling service's
``add_months`` (24-month exit of PP-SEW-CAT-B-EXIT).
"""

from __future__ import annotations

import calendar
from datetime import date


def add_months(start: date, months: int) -> date:
    """``start`` plus whole calendar months, the day clamped to the end of a shorter month."""
    index = start.year * 12 + start.month - 1 + months
    year, month0 = divmod(index, 12)
    month = month0 + 1
    return date(year, month, min(start.day, calendar.monthrange(year, month)[1]))


def is_billing_period(start: date, end: date, months: int) -> bool:
    """True when ``[start, end)`` is exactly one billing period of ``months`` months."""
    return add_months(start, months) == end
