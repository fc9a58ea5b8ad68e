"""GR-NORMAL, GR-HIGH, GR-REASSIGN (and the same reading for Sullivan: SU-NORMAL, SU-SURCHARGE)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from common.errors import PermanentError
from sampling.domain.errors import SamplingError, UnknownTenant
from sampling.domain.strength import (
    GRAFTON_NORMAL,
    SULLIVAN_NORMAL,
    LabResult,
    StrengthLimits,
    classify,
    classify_grafton,
    classify_sullivan,
)


def d(iso: str) -> date:
    return date.fromisoformat(iso)


def bod(iso: str, value: str) -> LabResult:
    return LabResult(d(iso), bod=Decimal(value))


def history(classification) -> list[tuple[str, str]]:
    return [(c.from_date.isoformat(), c.category) for c in classification.history]


def test_grafton_no_results_is_normal_with_null_since():
    assert classify_grafton([], d("2026-01-01")).to_contract_dict() == {
        "category": "normal",
        "since": None,
        "history": [],
        "basis": None,
        "notes": [],
    }


def test_grafton_result_over_a_limit_is_high_strength():
    result = classify_grafton([bod("2025-03-01", "250")], d("2025-12-31"))
    assert result.category == "high"
    assert result.since == d("2025-03-01")
    assert result.history[0].rule_id == "GR-HIGH"


@pytest.mark.parametrize(
    ("field", "at_limit"), [("bod", "200"), ("tss", "250"), ("phosphorus", "6"), ("tkn", "20")]
)
def test_grafton_result_at_the_limit_is_normal_and_just_above_is_high(field, at_limit):
    at = LabResult(d("2025-03-01"), **{field: Decimal(at_limit)})
    above = LabResult(d("2025-03-01"), **{field: Decimal(at_limit) + Decimal("0.01")})
    assert classify_grafton([at], d("2025-12-31")).category == "normal"
    assert classify_grafton([above], d("2025-12-31")).category == "high"


def test_grafton_user_is_reassigned_to_normal_after_a_compliant_result():
    results = [
        bod("2025-01-10", "150"),
        bod("2025-04-10", "300"),
        bod("2025-07-10", "180"),
        bod("2025-10-10", "190"),
    ]
    result = classify_grafton(results, d("2025-12-31"))
    assert result.category == "normal"
    assert result.since == d("2025-07-10")
    assert history(result) == [("2025-01-10", "normal"), ("2025-04-10", "high"), ("2025-07-10", "normal")]
    assert result.history[-1].rule_id == "GR-REASSIGN"
    assert result.history[-1].basis_sampled_on == d("2025-07-10")


def test_grafton_consecutive_high_results_keep_the_first_date_as_since():
    results = [bod("2025-04-10", "300"), bod("2025-07-10", "260")]
    result = classify_grafton(results, d("2025-12-31"))
    assert result.since == d("2025-04-10")
    assert history(result) == [("2025-04-10", "high")]


def test_grafton_fog_has_no_limit():
    assert (
        classify_grafton([LabResult(d("2025-01-01"), fog=Decimal(999))], d("2025-12-31")).category == "normal"
    )


def test_sullivan_categories_are_normal_and_above_normal():
    results = [bod("2025-01-10", "450"), bod("2025-04-10", "400"), bod("2025-07-10", "401")]
    assert classify_sullivan(results, d("2025-03-31")).category == "above-normal"
    assert classify_sullivan(results, d("2025-06-30")).category == "normal"
    result = classify_sullivan(results, d("2025-12-31"))
    assert result.category == "above-normal"
    assert result.since == d("2025-07-10")
    assert history(result) == [
        ("2025-01-10", "above-normal"),
        ("2025-04-10", "normal"),
        ("2025-07-10", "above-normal"),
    ]


def test_sullivan_phosphorus_limit_is_12():
    assert (
        classify_sullivan([LabResult(d("2025-01-01"), phosphorus=Decimal(12))], d("2025-12-31")).category
        == "normal"
    )
    assert (
        classify_sullivan([LabResult(d("2025-01-01"), phosphorus=Decimal("12.1"))], d("2025-12-31")).category
        == "above-normal"
    )


def test_reassignment_ignores_results_after_as_of():
    results = [bod("2025-01-10", "150"), bod("2025-04-10", "300")]
    assert classify_grafton(results, d("2025-04-09")).category == "normal"


def test_dispatcher_uses_each_tenants_ordinance_limits():
    result = [bod("2025-01-10", "300")]
    assert classify("pleasant-prairie-sewer", result, d("2025-12-31")).category == "B"
    assert classify("grafton-sewer", result, d("2025-12-31")).category == "high"
    assert classify("sullivan-sewer", result, d("2025-12-31")).category == "normal"


def test_dispatcher_accepts_tariff_limits():
    limits = StrengthLimits.from_mapping({"bod": 350}, rule_id="GR-NORMAL")
    assert classify("grafton-sewer", [bod("2025-01-10", "300")], d("2025-12-31"), limits).category == "normal"


@pytest.mark.parametrize("tenant", ["pleasant-prairie-stormwater", "nowhere-sewer", "", None])
def test_unknown_tenant_is_an_error_naming_tenant(tenant):
    with pytest.raises(UnknownTenant) as err:
        classify(tenant, [], d("2025-12-31"))
    assert err.value.field == "tenant"
    assert isinstance(err.value, SamplingError)
    assert isinstance(err.value, ValueError)
    assert isinstance(err.value, PermanentError)


def test_ordinance_limit_constants():
    assert {p.value: str(v) for p, v in GRAFTON_NORMAL.limits_mg_l.items()} == {
        "bod": "200",
        "tss": "250",
        "phosphorus": "6",
        "tkn": "20",
    }
    assert {p.value: str(v) for p, v in SULLIVAN_NORMAL.limits_mg_l.items()} == {
        "bod": "400",
        "tss": "250",
        "phosphorus": "12",
    }
