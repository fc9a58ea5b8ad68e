"""common.values: the one policy for numbers and dates arriving in JSON documents."""

from datetime import date, datetime
from decimal import Decimal as D

import pytest

from common.values import NotADate, NotADecimal, to_date, to_decimal


@pytest.mark.parametrize(("raw", "value"), [(12, D(12)), (D("4.49"), D("4.49")), (" 1,000.5 ", D("1000.5"))])
def test_exact_numbers_are_accepted(raw: object, value: D) -> None:
    assert to_decimal(raw) == value


@pytest.mark.parametrize(
    ("raw", "why"),
    [(0.1, "float"), (True, "number"), ("NaN", "finite"), ("twelve", "number"), (None, "number")],
)
def test_inexact_or_non_numbers_are_refused(raw: object, why: str) -> None:
    with pytest.raises(NotADecimal, match=why):
        to_decimal(raw)


def test_dates_are_calendar_dates_written_iso() -> None:
    assert to_date("2027-02-15") == date(2027, 2, 15)
    for raw, why in (("2025-02-30", "calendar"), ("15/02/2027", "YYYY-MM-DD"), (20270215, "YYYY-MM-DD")):
        with pytest.raises(NotADate, match=why):
            to_date(raw)
    with pytest.raises(NotADate, match="date-time"):
        to_date(datetime(2027, 2, 15, 8, 0))


def test_month_addition_clamps_to_the_end_of_a_shorter_month() -> None:
    from common.dates import add_months

    assert add_months(date(2026, 1, 31), 1) == date(2026, 2, 28)
    assert add_months(date(2028, 1, 31), 1) == date(2028, 2, 29)
    assert add_months(date(2024, 2, 29), 24) == date(2026, 2, 28)  # PP-SEW-CAT-B-EXIT
    assert add_months(date(2026, 11, 30), 3) == date(2027, 2, 28)  # a Grafton quarter
    assert add_months(date(2025, 4, 1), -3) == date(2025, 1, 1)  # the quarter a cycle closes
