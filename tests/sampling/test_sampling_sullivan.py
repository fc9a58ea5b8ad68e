"""SU-BOD900 violation days and penalty; SU-INDUSTRIAL determination."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from sampling.domain.errors import InvalidInput
from sampling.domain.strength import LabResult
from sampling.domain.sullivan import (
    INDUSTRIAL_BOD_LB_PER_DAY,
    INDUSTRIAL_SS_LB_PER_DAY,
    IndustrialUserDetermination,
    bod900_penalty,
    bod900_violation_dates,
    bod900_violation_days,
    is_industrial_user,
    sanitary_equivalent_lb_per_day,
)


def bod(iso: str, value: str) -> LabResult:
    return LabResult(date.fromisoformat(iso), bod=Decimal(value))


def test_bod_of_900_or_more_is_a_violation_and_899_is_not():
    assert bod900_violation_days([bod("2025-01-01", "900")]) == 1
    assert bod900_violation_days([bod("2025-01-01", "899.99")]) == 0


def test_each_day_is_a_separate_violation_counted_once():
    results = [
        bod("2025-01-01", "950"),
        bod("2025-01-01", "1200"),
        bod("2025-01-02", "901"),
        bod("2025-01-03", "100"),
        LabResult(date(2025, 1, 4), tss=Decimal("5000")),
        bod("2025-01-05", "900"),
    ]
    assert bod900_violation_days(results) == 3
    assert bod900_violation_dates(results) == (date(2025, 1, 1), date(2025, 1, 2), date(2025, 1, 5))


def test_violation_days_in_a_half_open_period():
    results = [
        bod("2025-03-31", "950"),
        bod("2025-04-01", "950"),
        bod("2025-06-30", "950"),
        bod("2025-07-01", "950"),
    ]
    assert bod900_violation_days(results, date(2025, 4, 1), date(2025, 7, 1)) == 2


def test_penalty_is_per_violation_day():
    assert bod900_penalty(3, Decimal("1000.00")) == Decimal("3000.00")
    assert bod900_penalty(0, Decimal("1000.00")) == Decimal("0")


@pytest.mark.parametrize(
    ("days", "per_day"), [(-1, Decimal("1000")), (True, Decimal("1000")), (1, Decimal("-5"))]
)
def test_penalty_refuses_bad_inputs(days, per_day):
    with pytest.raises(InvalidInput):
        bod900_penalty(days, per_day)


def test_sanitary_equivalent_of_2000_gpd_uses_normal_strength_and_factor_8_34():
    assert INDUSTRIAL_BOD_LB_PER_DAY == Decimal("6.672")
    assert INDUSTRIAL_SS_LB_PER_DAY == Decimal("4.17")
    assert sanitary_equivalent_lb_per_day(Decimal("400")) == Decimal("6.672")


def user(**overrides: Any) -> IndustrialUserDetermination:
    args: dict[str, Any] = {
        "nongovernmental": True,
        "nonresidential": True,
        "sic_division": "D",
        "avg_daily_flow_gal": Decimal("1000"),
        "bod_lb_per_day": None,
        "ss_lb_per_day": None,
        "discharges_toxic": False,
    }
    args.update(overrides)
    return is_industrial_user(**args)


def test_listed_division_discharging_more_than_2000_gpd_is_industrial():
    result = user(avg_daily_flow_gal=Decimal("2000.1"))
    assert result.is_industrial
    assert result.rule_id == "SU-INDUSTRIAL"
    assert "SIC Division D" in result.reasons[0]


def test_exactly_2000_gpd_is_not_industrial():
    assert not user(avg_daily_flow_gal=Decimal("2000")).is_industrial


@pytest.mark.parametrize("division", ["A", "B", "D", "E", "I", "e"])
def test_every_listed_sic_division_qualifies(division):
    assert user(sic_division=division, avg_daily_flow_gal=Decimal("5000")).is_industrial


@pytest.mark.parametrize("division", ["C", "F", "G", "H", "J", "K", None])
def test_unlisted_sic_divisions_do_not_qualify_by_volume(division):
    result = user(sic_division=division, avg_daily_flow_gal=Decimal("5000"))
    assert not result.is_industrial
    assert result.reasons


def test_bod_weight_above_the_2000_gpd_equivalent_is_industrial():
    assert user(bod_lb_per_day=Decimal("6.673")).is_industrial
    assert not user(bod_lb_per_day=Decimal("6.672")).is_industrial


def test_ss_weight_above_the_2000_gpd_equivalent_is_industrial():
    assert user(ss_lb_per_day=Decimal("4.18")).is_industrial
    assert not user(ss_lb_per_day=Decimal("4.17")).is_industrial


def test_governmental_and_residential_users_are_not_industrial_by_volume():
    assert not user(nongovernmental=False, avg_daily_flow_gal=Decimal("9000")).is_industrial
    assert not user(nonresidential=False, avg_daily_flow_gal=Decimal("9000")).is_industrial


def test_toxic_discharge_makes_any_nongovernmental_user_industrial():
    result = user(
        nonresidential=False, sic_division="G", avg_daily_flow_gal=Decimal("10"), discharges_toxic=True
    )
    assert result.is_industrial
    assert any("toxic" in reason for reason in result.reasons)
    assert not user(nongovernmental=False, discharges_toxic=True).is_industrial


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"avg_daily_flow_gal": Decimal("-1")}, "avg_daily_flow_gal"),
        ({"bod_lb_per_day": Decimal("-1")}, "bod_lb_per_day"),
        ({"ss_lb_per_day": Decimal("-1")}, "ss_lb_per_day"),
        ({"sic_division": "Z"}, "sic_division"),
    ],
)
def test_bad_industrial_inputs_name_the_field(overrides, field):
    with pytest.raises(InvalidInput) as err:
        user(**overrides)
    assert err.value.field == field
