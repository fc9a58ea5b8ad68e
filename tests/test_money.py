"""X-MONEY: one half-up rounding per line, on the magnitude."""

from decimal import Decimal as D

import pytest

from common.money import fmt, round_half_up, round_line


@pytest.mark.parametrize(
    ("amount", "rounded"),
    [
        (D("110.005"), D("110.01")),  # 24.5 kgal x 4.49
        (D("24.0192"), D("24.02")),
        (D("0.004999"), D("0.00")),
        (D("-0.005"), D("-0.01")),  # a credit: rounded as 0.005 -> 0.01, then negated
        (D("-14.8080"), D("-14.81")),
        (D("45"), D("45.00")),
    ],
)
def test_round_line_is_half_up_on_the_magnitude(amount: D, rounded: D) -> None:
    assert round_line(amount) == rounded
    assert str(round_line(amount)) == str(rounded)


def test_eru_rounding_and_formatting() -> None:
    assert round_half_up(D("6.544196"), 2) == D("6.54")
    assert round_half_up(D("0.865"), 2) == D("0.87")
    assert fmt(D("162")) == "162.00"
