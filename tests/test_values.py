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
