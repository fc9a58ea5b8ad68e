"""Properties of strength classification that hold for every tenant and any results."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from sampling.domain.strength import (
    DEFAULT_LIMITS,
    LabResult,
    Parameter,
    classify,
    exceeds,
)

NORMAL_CATEGORY = {"pleasant-prairie-sewer": "A", "grafton-sewer": "normal", "sullivan-sewer": "normal"}
tenants = st.sampled_from(sorted(NORMAL_CATEGORY))
days = st.dates(min_value=date(2020, 1, 1), max_value=date(2030, 12, 31))
concentrations = st.none() | st.decimals(
    min_value=0, max_value=1000, places=1, allow_nan=False, allow_infinity=False
)


@st.composite
def lab_results(draw, dates=days, values=concentrations):
    values_by_name = {p.value: draw(values) for p in Parameter}
    if all(v is None for v in values_by_name.values()):
        values_by_name["bod"] = Decimal("0")
    return LabResult(draw(dates), **values_by_name)


@st.composite
def compliant_results(draw, tenant):
    limits = DEFAULT_LIMITS[tenant]
    values: dict[str, Decimal | None] = {}
    for parameter in Parameter:
        limit = limits.limit(parameter)
        top = limit if limit is not None else Decimal(1000)
        values[parameter.value] = draw(st.decimals(min_value=0, max_value=top, places=2, allow_nan=False))
    return LabResult(draw(days), **values)


@given(tenants, st.lists(lab_results(), max_size=12), days, st.data())
def test_category_is_independent_of_input_order(tenant, results, as_of, data):
    shuffled = data.draw(st.permutations(results))
    assert classify(tenant, shuffled, as_of) == classify(tenant, results, as_of)


@given(tenants, st.lists(lab_results(), max_size=12), days, st.data())
def test_adding_results_after_as_of_never_changes_the_result(tenant, results, as_of, data):
    later = data.draw(
        st.lists(lab_results(dates=st.dates(as_of + timedelta(days=1), date(2031, 12, 31))), max_size=5)
    )
    with_later = classify(tenant, results + later, as_of)
    assert with_later == classify(tenant, results, as_of)
    # ... and each one is listed in notes, in the order given (CONTRACTS.md classify).
    assert with_later.ignored == tuple(r for r in results + later if r.sampled_on > as_of)
    notes = with_later.to_contract_dict()["notes"]
    assert [n["sampled_on"] for n in notes] == [r.sampled_on.isoformat() for r in with_later.ignored]  # type: ignore[union-attr]


@given(tenants.flatmap(lambda t: st.tuples(st.just(t), st.lists(compliant_results(t), max_size=12))), days)
def test_user_with_only_compliant_results_is_always_in_the_normal_category(tenant_and_results, as_of):
    tenant, results = tenant_and_results
    classification = classify(tenant, results, as_of)
    assert classification.category == NORMAL_CATEGORY[tenant]
    counted = [r.sampled_on for r in results if r.sampled_on <= as_of]
    assert classification.since == (min(counted) if counted else None)
    assert len(classification.history) == (1 if counted else 0)


@given(tenants, st.lists(lab_results(), max_size=12), days)
def test_history_is_a_sequence_of_real_changes_ending_in_the_current_category(tenant, results, as_of):
    classification = classify(tenant, results, as_of)
    history = classification.history
    for earlier, later in zip(history, history[1:], strict=False):
        assert earlier.category != later.category
        assert earlier.from_date < later.from_date
    assert all(change.from_date <= as_of for change in history)
    if history:
        assert classification.category == history[-1].category
        assert classification.since == history[-1].from_date
    else:
        assert classification.category == NORMAL_CATEGORY[tenant]
        assert classification.since is None


@given(tenants, st.lists(lab_results(), min_size=1, max_size=12), days)
def test_a_user_whose_latest_sample_day_exceeds_is_never_in_the_normal_category(tenant, results, as_of):
    counted = [r for r in results if r.sampled_on <= as_of]
    if not counted:
        return
    last_day = max(r.sampled_on for r in counted)
    if any(exceeds(r, DEFAULT_LIMITS[tenant]) for r in counted if r.sampled_on == last_day):
        assert classify(tenant, results, as_of).category != NORMAL_CATEGORY[tenant]


@given(tenants, st.lists(lab_results(), max_size=12), days)
def test_basis_is_set_exactly_in_the_above_normal_category_and_is_an_exceeding_result(tenant, results, as_of):
    classification = classify(tenant, results, as_of)
    normal = {"pleasant-prairie-sewer": "A"}.get(tenant, "normal")
    if classification.category == normal:
        assert classification.basis is None
        return
    basis = classification.basis
    assert basis is not None
    assert basis.sampled_on <= as_of
    assert exceeds(basis, DEFAULT_LIMITS[tenant])
    later = [r for r in results if basis.sampled_on < r.sampled_on <= as_of]
    assert not any(exceeds(r, DEFAULT_LIMITS[tenant]) for r in later)
