"""PP-SEW-CAT-A, PP-SEW-CAT-B and PP-SEW-CAT-B-EXIT as rules."""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal

import pytest

from sampling.domain.errors import InvalidInput
from sampling.domain.parsing import parse_classify_request
from sampling.domain.strength import (
    PLEASANT_PRAIRIE_CATEGORY_A,
    ExitWindow,
    LabResult,
    Parameter,
    StrengthLimits,
    classify,
    classify_pleasant_prairie,
)


def d(iso: str) -> date:
    return date.fromisoformat(iso)


def high(iso: str) -> LabResult:
    """A result over the BOD threshold of Category A."""
    return LabResult(
        d(iso), bod=Decimal("220"), tss=Decimal("150"), phosphorus=Decimal("4"), fog=Decimal("40")
    )


def ok(iso: str) -> LabResult:
    """A result at or below every Category A threshold."""
    return LabResult(
        d(iso), bod=Decimal("150"), tss=Decimal("150"), phosphorus=Decimal("4"), fog=Decimal("40")
    )


def history(classification) -> list[tuple[str, str]]:
    return [(c.from_date.isoformat(), c.category) for c in classification.history]


def test_contracts_example_exactly():
    raw = json.loads(
        '{"tenant": "pleasant-prairie-sewer", "as_of": "2027-06-30", "results":'
        ' [{"sampled_on": "2025-01-15", "bod": 220, "tss": 150, "phosphorus": 4, "fog": 40}]}',
        parse_float=Decimal,
    )
    request = parse_classify_request(raw)
    out = classify(request.tenant, request.results, request.as_of).to_contract_dict()
    assert out == {
        "category": "B",
        "since": "2025-01-15",
        "history": [{"from": "2025-01-15", "category": "B"}],
        "basis": {"sampled_on": "2025-01-15", "bod": "220", "tss": "150", "phosphorus": "4", "fog": "40"},
        "notes": [],
    }
    assert json.dumps(out) == (
        '{"category": "B", "since": "2025-01-15", "history": [{"from": "2025-01-15", "category": "B"}],'
        ' "basis": {"sampled_on": "2025-01-15", "bod": "220", "tss": "150", "phosphorus": "4", "fog": "40"},'
        ' "notes": []}'
    )


def test_no_results_is_category_a_with_null_since():
    result = classify_pleasant_prairie([], d("2026-01-01"))
    assert result.category == "A"
    assert result.since is None
    assert result.to_contract_dict() == {
        "category": "A",
        "since": None,
        "history": [],
        "basis": None,
        "notes": [],
    }


def test_first_compliant_result_sets_since():
    result = classify_pleasant_prairie([ok("2025-03-10"), ok("2025-04-10")], d("2025-12-31"))
    assert result.category == "A"
    assert result.since == d("2025-03-10")
    assert history(result) == [("2025-03-10", "A")]


def test_first_result_over_a_threshold_enters_category_b():
    result = classify_pleasant_prairie([ok("2024-06-01"), high("2025-01-15")], d("2025-01-15"))
    assert result.category == "B"
    assert result.since == d("2025-01-15")
    assert history(result) == [("2024-06-01", "A"), ("2025-01-15", "B")]
    assert result.history[-1].rule_id == "PP-SEW-CAT-B"


@pytest.mark.parametrize("parameter", ["bod", "tss", "phosphorus", "fog"])
def test_any_one_parameter_over_its_limit_is_category_b(parameter):
    limit = PLEASANT_PRAIRIE_CATEGORY_A.limits_mg_l[Parameter(parameter)]
    over = LabResult(d("2025-01-15"), **{parameter: limit + Decimal("0.1")})
    assert classify_pleasant_prairie([over], d("2025-12-31")).category == "B"


def test_result_at_every_limit_is_compliant():
    at_limit = LabResult(
        d("2025-01-15"), bod=Decimal(180), tss=Decimal(200), phosphorus=Decimal(6), fog=Decimal(100)
    )
    assert classify_pleasant_prairie([at_limit], d("2025-12-31")).category == "A"


def test_tkn_has_no_category_a_limit_and_does_not_make_category_b():
    assert (
        classify_pleasant_prairie([LabResult(d("2025-01-15"), tkn=Decimal(500))], d("2025-12-31")).category
        == "A"
    )


def test_b_user_without_a_compliant_sample_after_the_exceedance_stays_b():
    result = classify_pleasant_prairie([ok("2020-01-01"), high("2021-01-15")], d("2030-01-01"))
    assert result.category == "B"
    assert result.since == d("2021-01-15")
    assert result.exit_window is None


def test_category_b_lasts_24_months_after_first_compliant_sample():
    results = [high("2025-01-15"), ok("2025-02-15"), ok("2025-08-15"), ok("2026-02-15"), ok("2026-08-15")]
    before = classify_pleasant_prairie(results, d("2027-02-14"))
    assert before.category == "B"
    assert before.since == d("2025-01-15")
    assert before.exit_window == ExitWindow(d("2025-02-15"), d("2027-02-15"))

    on = classify_pleasant_prairie(results, d("2027-02-15"))
    assert on.category == "A"
    assert on.since == d("2027-02-15")
    assert history(on) == [("2025-01-15", "B"), ("2027-02-15", "A")]
    assert on.history[-1].rule_id == "PP-SEW-CAT-B-EXIT"
    assert on.history[-1].basis_sampled_on == d("2025-02-15")
    assert on.exit_window is None


def test_return_to_a_is_dated_on_the_anniversary_even_when_later_samples_exist():
    results = [high("2025-01-15"), ok("2025-02-15"), ok("2026-02-15"), ok("2027-03-01"), ok("2027-04-01")]
    result = classify_pleasant_prairie(results, d("2027-06-30"))
    assert result.category == "A"
    assert result.to_contract_dict()["history"] == [
        {"from": "2025-01-15", "category": "B"},
        {"from": "2027-02-15", "category": "A"},
    ]


def test_anniversary_after_as_of_is_not_in_history():
    results = [high("2025-01-15"), ok("2025-02-15")]
    result = classify_pleasant_prairie(results, d("2026-12-31"))
    assert result.category == "B"
    assert history(result) == [("2025-01-15", "B")]


def test_exceedance_during_exit_window_restarts_24_months_but_keeps_since():
    results = [high("2025-01-15"), ok("2025-02-15"), high("2026-06-15"), ok("2026-07-15"), ok("2027-03-01")]
    at_old_anniversary = classify_pleasant_prairie(results, d("2027-02-15"))
    assert at_old_anniversary.category == "B"
    assert at_old_anniversary.since == d("2025-01-15")
    assert history(at_old_anniversary) == [("2025-01-15", "B")]
    assert at_old_anniversary.exit_window == ExitWindow(d("2026-07-15"), d("2028-07-15"))

    later = classify_pleasant_prairie(results, d("2028-07-15"))
    assert later.category == "A"
    assert history(later) == [("2025-01-15", "B"), ("2028-07-15", "A")]


def test_exceeding_sample_on_the_anniversary_keeps_the_user_in_b():
    results = [high("2025-01-15"), ok("2025-02-15"), high("2027-02-15")]
    result = classify_pleasant_prairie(results, d("2027-12-31"))
    assert result.category == "B"
    assert history(result) == [("2025-01-15", "B")]


def test_compliant_sample_on_the_anniversary_completes_the_window():
    results = [high("2025-01-15"), ok("2025-02-15"), ok("2027-02-15")]
    result = classify_pleasant_prairie(results, d("2027-02-15"))
    assert history(result) == [("2025-01-15", "B"), ("2027-02-15", "A")]


def test_exceedance_after_returning_to_a_starts_a_new_run_of_b():
    results = [high("2025-01-15"), ok("2025-02-15"), high("2027-05-01")]
    result = classify_pleasant_prairie(results, d("2027-06-30"))
    assert result.category == "B"
    assert result.since == d("2027-05-01")
    assert history(result) == [("2025-01-15", "B"), ("2027-02-15", "A"), ("2027-05-01", "B")]


def test_leap_day_anniversary_falls_on_february_28():
    results = [high("2024-01-10"), ok("2024-02-29")]
    assert classify_pleasant_prairie(results, d("2026-02-27")).category == "B"
    result = classify_pleasant_prairie(results, d("2026-02-28"))
    assert history(result) == [("2024-01-10", "B"), ("2026-02-28", "A")]


def test_results_after_as_of_are_ignored():
    results = [ok("2025-01-01"), high("2025-07-01")]
    result = classify_pleasant_prairie(results, d("2025-06-30"))
    assert result.category == "A"
    assert history(result) == [("2025-01-01", "A")]


def test_result_on_as_of_counts():
    assert classify_pleasant_prairie([high("2025-06-30")], d("2025-06-30")).category == "B"


def test_input_order_does_not_matter():
    results = [high("2025-01-15"), ok("2025-02-15"), high("2026-06-15"), ok("2026-07-15")]
    forward = classify_pleasant_prairie(results, d("2029-01-01"))
    backward = classify_pleasant_prairie(list(reversed(results)), d("2029-01-01"))
    assert forward == backward
    assert history(forward) == [("2025-01-15", "B"), ("2028-07-15", "A")]


def test_same_day_results_exceed_when_any_of_them_exceeds():
    result = classify_pleasant_prairie([ok("2025-01-15"), high("2025-01-15")], d("2025-12-31"))
    assert result.category == "B"
    assert history(result) == [("2025-01-15", "B")]


def test_exit_months_and_limits_are_parameters():
    limits = StrengthLimits.from_mapping({"bod": "250"}, rule_id="PP-SEW-CAT-A")
    results = [high("2025-01-15")]
    assert classify_pleasant_prairie(results, d("2025-12-31"), limits).category == "A"
    short = classify_pleasant_prairie([high("2025-01-15"), ok("2025-02-15")], d("2025-08-15"), exit_months=6)
    assert history(short)[-1] == ("2025-08-15", "A")


def test_exit_months_must_be_positive():
    with pytest.raises(InvalidInput) as err:
        classify_pleasant_prairie([], d("2025-01-01"), exit_months=0)
    assert err.value.field == "exit_months"


def test_as_of_must_be_a_date():
    with pytest.raises(InvalidInput) as err:
        classify_pleasant_prairie([], datetime(2025, 1, 1))
    assert err.value.field == "as_of"
