"""common.values: the one policy for numbers and dates arriving in JSON documents."""

from datetime import date, datetime
from decimal import Decimal as D

import pytest

from common.values import CONCENTRATION_MG_L, NotADate, NotADecimal, to_date, to_decimal


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (12, D(12)),
        (D("4.49"), D("4.49")),
        ("12.50", D("12.50")),
        ("-3", D(-3)),
        # JSON numbers may have exponents (parse_float=Decimal): shown plain afterwards.
        (D("1E+3"), D(1000)),
        # Trailing zeros past 12 places are dropped exactly: 1.000...0 (16 places) is 1.
        (D("1.0000000000000000"), D(1)),
        (D("-0"), D(0)),
        # The edges: just under 10^12, exactly 12 places.
        (999_999_999_999, D("999999999999")),
        ("0.000000000001", D("1E-12")),
        (D("-999999999999.999999999999"), D("-999999999999.999999999999")),
    ],
)
def test_exact_bounded_numbers_are_accepted(raw: object, value: D) -> None:
    assert to_decimal(raw) == value
    assert str(to_decimal(raw)) == str(value)


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (0.1, "float"),
        (True, "number"),
        (None, "number"),
        ("twelve", "plain decimal"),
        # Lenient readings that once billed "2,5" as 25 gallons and "1_000" as 1000:
        ("2,5", "plain decimal"),
        (" 1,000.5 ", "plain decimal"),
        ("1_000", "plain decimal"),
        ("\uff11\uff10\uff10\uff10", "plain decimal"),  # full-width 1000
        ("\u0661\u0662", "plain decimal"),  # Arabic-Indic 12
        (" 12", "plain decimal"),
        ("12\n", "plain decimal"),
        ("1\u00a0000", "plain decimal"),
        ("+12", "plain decimal"),
        ("1e5", "plain decimal"),  # no exponent in strings
        ("0x1F", "plain decimal"),
        ("1.", "plain decimal"),
        (".5", "plain decimal"),
        ("NaN", "plain decimal"),
        ("Infinity", "plain decimal"),
        ("-inf", "plain decimal"),
        (D("NaN"), "finite"),
        (D("Infinity"), "finite"),
        # Out of bounds: each once reached arithmetic and raised InvalidOperation or Overflow.
        (D("1E+400"), "10\\^12"),
        (D("1E+999999999"), "10\\^12"),
        (D("1E+26"), "10\\^12"),
        (10**12, "10\\^12"),
        (-(10**12), "10\\^12"),
        pytest.param(10**5000, "5001 digits", id="int-of-5001-digits"),  # past Python's str() limit
        (D("1E-999999999"), "12 decimal places"),
        ("0.0000000000001", "12 decimal places"),
        ("1" * 65, "plain decimal"),
    ],
)
def test_inexact_lenient_or_unbounded_numbers_are_refused(raw: object, why: str) -> None:
    with pytest.raises(NotADecimal, match=why):
        to_decimal(raw)


def test_a_field_may_bound_its_values_tighter() -> None:
    assert to_decimal("1000000", maximum=CONCENTRATION_MG_L) == D(10**6)
    with pytest.raises(NotADecimal, match="at most 1000000"):
        to_decimal("1000000.5", maximum=CONCENTRATION_MG_L)


def test_every_accepted_number_is_exact_in_the_default_context_and_fits_dynamodb() -> None:
    # 12 integer digits + 12 places = 24 significant digits <= 28 (Decimal context) <= 38 (DynamoDB).
    widest = to_decimal("-999999999999.999999999999")
    assert len(widest.as_tuple().digits) == 24
    assert +widest == widest  # unary plus rounds to the context: nothing lost


def test_dates_are_calendar_dates_written_iso() -> None:
    assert to_date("2027-02-15") == date(2027, 2, 15)
    for raw, why in (
        ("2025-02-30", "calendar"),
        ("15/02/2027", "YYYY-MM-DD"),
        (20270215, "YYYY-MM-DD"),
        ("\uff12\uff10\uff12\uff17-02-15", "YYYY-MM-DD"),
        ("2027-02-15 ", "YYYY-MM-DD"),
    ):
        with pytest.raises(NotADate, match=why):
            to_date(raw)
    with pytest.raises(NotADate, match="date-time"):
        to_date(datetime(2027, 2, 15, 8, 0))


@pytest.mark.parametrize("raw", ["9999-12-01", "2200-01-01", "1899-12-31", "0001-01-01", date(9999, 12, 31)])
def test_dates_outside_1900_to_2199_are_refused_before_any_date_arithmetic(raw: object) -> None:
    with pytest.raises(NotADate, match="1900-01-01..2199-12-31"):
        to_date(raw)


def test_the_date_bounds_are_inclusive() -> None:
    assert to_date("1900-01-01") == date(1900, 1, 1)
    assert to_date("2199-12-31") == date(2199, 12, 31)


def test_month_addition_clamps_to_the_end_of_a_shorter_month() -> None:
    from common.dates import add_months

    assert add_months(date(2026, 1, 31), 1) == date(2026, 2, 28)
    assert add_months(date(2028, 1, 31), 1) == date(2028, 2, 29)
    assert add_months(date(2024, 2, 29), 24) == date(2026, 2, 28)  # PP-SEW-CAT-B-EXIT
    assert add_months(date(2026, 11, 30), 3) == date(2027, 2, 28)  # a Grafton quarter
    assert add_months(date(2025, 4, 1), -3) == date(2025, 1, 1)  # the quarter a cycle closes
