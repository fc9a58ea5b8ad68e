"""Calendar arithmetic shared by every service (pure: dates in, dates out).

Month addition keeps the day of the month, clamped to the last day of a shorter month:
2026-01-31 + 1 month = 2026-02-28 (2028-02-29 in a leap year), 2024-02-29 + 24 months =
2026-02-28. It serves billing periods (PP-SEW-BILLING, GR-BILLING), the 24-month exit of
PP-SEW-CAT-B-EXIT and the periods a billing-cycle schedule closes.
"""

from __future__ import annotations

import calendar
from datetime import date


def add_months(start: date, months: int) -> date:
    """``start`` plus whole calendar months (negative goes back), the day clamped to the
    end of a shorter month; the result never spills into the following month."""
    index = start.year * 12 + start.month - 1 + months
    year, month0 = divmod(index, 12)
    month = month0 + 1
    return date(year, month, min(start.day, calendar.monthrange(year, month)[1]))
