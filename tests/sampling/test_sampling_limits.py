"""Exceedances over strength limits (X-POUNDS: only the concentration above the limit)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any, cast

import pytest

from sampling.domain.errors import InvalidInput
from sampling.domain.strength import (
    PLEASANT_PRAIRIE_CATEGORY_A,
    LabResult,
    Parameter,
    StrengthLimits,
    add_months,
    exceedances,
    exceeds,
)

DAY = date(2025, 1, 15)


def test_exceedances_are_the_concentration_above_the_limit_only():
    result = LabResult(
        DAY, bod=Decimal("250"), tss=Decimal("200"), phosphorus=Decimal("8.5"), fog=Decimal("40")
    )
    assert exceedances(result, PLEASANT_PRAIRIE_CATEGORY_A) == {
        Parameter.BOD: Decimal("70"),
        Parameter.PHOSPHORUS: Decimal("2.5"),
    }


def test_at_limit_is_compliant():
    result = LabResult(
        DAY, bod=Decimal("180"), tss=Decimal("200"), phosphorus=Decimal("6"), fog=Decimal("100")
    )
    assert exceedances(result, PLEASANT_PRAIRIE_CATEGORY_A) == {}
    assert not exceeds(result, PLEASANT_PRAIRIE_CATEGORY_A)


def test_unmeasured_parameters_never_exceed():
    assert exceedances(LabResult(DAY, tss=Decimal("201")), PLEASANT_PRAIRIE_CATEGORY_A) == {
        Parameter.TSS: Decimal("1")
    }


def test_lab_result_needs_a_concentration():
    with pytest.raises(InvalidInput):
        LabResult(DAY)


def test_lab_result_refuses_negative_and_float_concentrations():
    with pytest.raises(InvalidInput) as err:
        LabResult(DAY, bod=Decimal("-1"))
    assert err.value.field == "bod"
    with pytest.raises(InvalidInput) as err:
        LabResult(DAY, tss=cast(Any, 1.5))
    assert err.value.field == "tss"


def test_limits_from_tariff_data():
    limits = StrengthLimits.from_mapping(
        {"bod": "180", "tss": 200, "fog": Decimal("100")}, rule_id="PP-SEW-CAT-A"
    )
    assert limits.limit(Parameter.TSS) == Decimal("200")
    assert limits.limit(Parameter.PHOSPHORUS) is None
    assert limits.rule_id == "PP-SEW-CAT-A"
    assert hash(limits) == hash(
        StrengthLimits.from_mapping({"bod": "180", "tss": 200, "fog": "100"}, "PP-SEW-CAT-A")
    )


@pytest.mark.parametrize(
    ("mapping", "field"),
    [({"colour": "1"}, "limits.colour"), ({"bod": "x"}, "limits.bod"), ({"bod": "-1"}, "limits.bod")],
)
def test_bad_limits_name_the_field(mapping, field):
    with pytest.raises(InvalidInput) as err:
        StrengthLimits.from_mapping(mapping)
    assert err.value.field == field


def test_limits_are_read_only():
    with pytest.raises(TypeError):
        limits: Any = PLEASANT_PRAIRIE_CATEGORY_A.limits_mg_l
        limits[Parameter.BOD] = Decimal(1)


@pytest.mark.parametrize(
    ("start", "months", "expected"),
    [
        ("2025-02-15", 24, "2027-02-15"),
        ("2024-02-29", 24, "2026-02-28"),
        ("2024-02-29", 48, "2028-02-29"),
        ("2025-01-31", 1, "2025-02-28"),
        ("2024-08-31", 24, "2026-08-31"),
        ("2025-11-30", 3, "2026-02-28"),
    ],
)
def test_month_anniversaries_clamp_to_month_end(start, months, expected):
    assert add_months(date.fromisoformat(start), months) == date.fromisoformat(expected)
