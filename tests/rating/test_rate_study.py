"""The board's rate study (issue 35) on the demo utility's year, through the use case with
in-memory fakes of its ports: re-rating the year on the proposed version recovers each fund's
budget to within what one unit of the rates' published precision moves, and the impact
report says what changes for whom."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from billing.app.ratestudy import StudyOutcome, run_rate_study
from billing.domain.ratestudy import (
    Budget,
    RateStudyError,
    Usage,
    parse_budget,
    pro_forma_book,
    publish,
)
from billing.domain.rating import RatingEngine
from billing.domain.rating.scenario import parse_scenario
from common.tariffs import Tariff, TariffBook
from sewerbill.cli.compose import eru_of
from sewerbill.demo.determinants import demo_determinants

ROOT = Path(__file__).resolve().parents[2]
BUDGETS = ROOT / "docs" / "rate-study"
TENANTS = ("pleasant-prairie-stormwater", "pleasant-prairie-sewer", "grafton-sewer", "sullivan-sewer")
D = Decimal


class FakeDeterminants:
    """The Determinants port in memory: the usages of each tenant."""

    def __init__(self, usages: dict[str, list[Usage]]) -> None:
        self._usages = usages

    def usages(self, tenant: str) -> list[Usage]:
        return list(self._usages.get(tenant, []))


class FakeOutput:
    """The StudyOutput port in memory: what was written."""

    def __init__(self) -> None:
        self.proposed: list[Tariff] = []
        self.reports: dict[str, dict[str, Any]] = {}

    def write_proposed(self, tariff: Tariff) -> str:
        self.proposed.append(tariff)
        return f"memory:{tariff.version_id}"

    def write_report(self, tenant: str, report: dict[str, Any]) -> str:
        self.reports[tenant] = report
        return f"memory:impact-{tenant}"


@pytest.fixture(scope="module")
def demo_year(book: TariffBook) -> dict[str, list[Usage]]:
    """Twelve months of the demo utility (300 accounts, seed 1) from 2025-01-01."""
    out: dict[str, list[Usage]] = {}
    for tenant in TENANTS:
        rows = demo_determinants(tenant, book, start=date(2025, 1, 1))
        out[tenant] = [
            Usage(r["account_id"], r["class"], parse_scenario(r["scenario"], book, eru_of)) for r in rows
        ]
    return out


def _budget(tenant: str, **changes: Any) -> Budget:
    raw = yaml.safe_load((BUDGETS / f"budget-{tenant}.yaml").read_text(encoding="utf-8"))
    raw.update(changes)
    return parse_budget(raw)


def _study(book: TariffBook, demo_year: dict[str, list[Usage]], budget: Budget) -> StudyOutcome:
    return run_rate_study(budget, book, FakeDeterminants(demo_year), FakeOutput())


@pytest.fixture(scope="module")
def outcomes(book: TariffBook, demo_year: dict[str, list[Usage]]) -> dict[str, StudyOutcome]:
    return {t: _study(book, demo_year, _budget(t)) for t in TENANTS}


def _recovered_by_fund(proposed: Tariff, usages: list[Usage]) -> dict[str, Decimal]:
    """Re-rate the year on the proposed version, independently of the study's own report."""
    engine = RatingEngine(pro_forma_book(proposed, usages))
    funds: dict[str, Decimal] = defaultdict(Decimal)
    for u in usages:
        for bl in engine.rate(u.rating).lines:
            if bl.rule_id in ("SU-BOD900", "PP-SEW-SAMPLE-COST"):  # a penalty, a pass-through
                continue
            # Pleasant Prairie sewer: each district's (zone's) own budget
            district = u.rating.account.zone if u.rating.account is not None else None
            for fund, amount in (bl.details.get("funds") or {district or "om": bl.amount}).items():
                funds[fund] += amount
    return funds


@pytest.mark.parametrize("tenant", TENANTS)
def test_rerating_the_year_on_the_proposed_rates_recovers_each_fund_within_one_unit_of_precision(
    tenant: str, outcomes: dict[str, StudyOutcome], demo_year: dict[str, list[Usage]]
) -> None:
    outcome = outcomes[tenant]
    budget = _budget(tenant)
    recovered = _recovered_by_fund(outcome.proposed, demo_year[tenant])
    assert set(outcome.report["funds"]) == set(budget.funds)
    for fund, line in outcome.report["funds"].items():
        residual = recovered[fund] - budget.requirement(fund)
        assert line["recovered"] == recovered[fund]
        assert line["residual"] == residual
        assert abs(residual) <= line["tolerance"], (fund, residual, line["tolerance"])
        assert line["within_tolerance"] is True


def test_the_eru_rate_is_budget_less_base_revenue_over_billable_erus_rounded_as_published(
    outcomes: dict[str, StudyOutcome],
) -> None:
    """PP-CWU-ERU: (54,000.00 - base charge x parcel-months) / billable ERU-months, to the cent."""
    outcome = outcomes["pleasant-prairie-stormwater"]
    d = outcome.study.determinants
    expected = publish(
        (D("54000.00") - D("2.00") * d["parcel_months_charged"]) / d["billable_eru_months"], D("6.00")
    )
    assert outcome.proposed.eru_rate.value == expected  # type: ignore[union-attr]
    assert outcome.proposed.eru_rate.value != D("6.00")  # type: ignore[union-attr]
    # one unit of the rate's precision (0.01) over the year's billable ERUs
    assert outcome.study.tolerance["om"] == D("0.01") * d["billable_eru_months"]


def test_moving_a_rate_one_unit_moves_recovery_by_about_the_tolerance(
    outcomes: dict[str, StudyOutcome], demo_year: dict[str, list[Usage]]
) -> None:
    outcome = outcomes["pleasant-prairie-stormwater"]
    proposed = outcome.proposed
    up = proposed.model_copy(
        update={
            "eru_rate": proposed.eru_rate.model_copy(update={"value": proposed.eru_rate.value + D("0.01")})
        }  # type: ignore[union-attr]
    )
    usages = demo_year["pleasant-prairie-stormwater"]
    moved = _recovered_by_fund(up, usages)["om"] - _recovered_by_fund(proposed, usages)["om"]
    assert abs(moved - outcome.study.tolerance["om"]) < D("1.00") + D("0.005") * len(usages)


def test_grafton_fund_shares_are_an_output_of_the_per_fund_budgets(
    book: TariffBook, demo_year: dict[str, list[Usage]], outcomes: dict[str, StudyOutcome]
) -> None:
    """GR-FUNDS: the replacement share is the replacement budget over the service and volume
    revenue, not the tariff's 12%; a bigger replacement budget gives a bigger share."""
    base = outcomes["grafton-sewer"].proposed
    bigger = _study(
        book, demo_year, _budget("grafton-sewer", funds={"replacement": "15000.00", "om": "45500.00"})
    )
    share = base.replacement_fund_share.value  # type: ignore[union-attr]
    assert bigger.proposed.replacement_fund_share.value > share  # type: ignore[union-attr]
    # the same total: the same rates, only the split moves
    assert bigger.proposed.volume_rate_per_kgal.value == base.volume_rate_per_kgal.value  # type: ignore[union-attr]
    assert bigger.report["funds"]["replacement"]["within_tolerance"]
    assert bigger.report["funds"]["om"]["within_tolerance"]


def test_grafton_meter_charges_keep_their_ratios_and_the_flat_charge_its_definition(
    outcomes: dict[str, StudyOutcome],
) -> None:
    proposed = outcomes["grafton-sewer"].proposed
    service = proposed.service_charge.value  # type: ignore[union-attr]
    small = service["5/8"]
    assert service["3/4"] == small
    # each size keeps its ratio to the 5/8" charge (meter equivalents), each rounded on its own
    for size, before in (("1", 75), ("2", 190), ("6", 1050)):
        ratio = D(before) / 45
        assert abs(service[size] - small * ratio) <= D("0.005") * (ratio + 1), size
    volume = proposed.volume_rate_per_kgal.value  # type: ignore[union-attr]
    assert proposed.unmetered_flat_charge.value == publish(small + 18 * volume, D("162.00"))  # type: ignore[union-attr]
    # GR-HIGH's rates are not part of the study: kept
    assert proposed.high_strength_rates_per_lb.value == {  # type: ignore[union-attr]
        "bod": D("0.45"), "tss": D("0.38"), "phosphorus": D("5.50"), "tkn": D("1.10")
    }  # fmt: skip


def test_sullivan_classes_pay_in_proportion_to_their_flow_and_loadings(
    outcomes: dict[str, StudyOutcome], demo_year: dict[str, list[Usage]]
) -> None:
    """NR 128.13: each class's OM&R revenue (use charge and surcharge) is its flow's share of
    the flow cost plus its pounds' share of each loading's cost."""
    outcome = outcomes["sullivan-sewer"]
    d = outcome.study.determinants
    budget = _budget("sullivan-sewer")
    omr = budget.requirement("replacement") + budget.requirement("om")
    engine = RatingEngine(pro_forma_book(outcome.proposed, demo_year["sullivan-sewer"]))
    paid: dict[str, Decimal] = defaultdict(Decimal)
    for u in demo_year["sullivan-sewer"]:
        for bl in engine.rate(u.rating).lines:
            if bl.rule_id in ("SU-USE", "SU-SURCHARGE"):
                paid[u.user_class] += bl.amount
    total_lbs = {
        p: d["normal_strength_lbs"][p] + d["excess_lbs"].get(p, 0) for p in ("bod", "tss", "phosphorus")
    }
    for name, loads in d["class_flow_and_loadings"].items():
        cost = omr * budget.cost_allocation["flow"] * loads["kgal"] / d["kgal"] + sum(
            omr * budget.cost_allocation[p] * loads[f"{p}_lbs"] / total_lbs[p] for p in total_lbs
        )
        # within the rounding of the published rates (half a cent a kgal, a pound, a line)
        rounding = D("0.005") * (loads["kgal"] + sum(loads[f"{p}_lbs"] for p in total_lbs))
        assert abs(paid[name] - cost) <= rounding + D("0.005") * len(demo_year["sullivan-sewer"]), name
    assert set(d["class_flow_and_loadings"]) == {"residential", "commercial", "industrial"}
    # the report shows each class's OM&R cost of service beside what it pays (SU-FUNDS)
    for name, c in outcome.report["classes"].items():
        assert c["omr_revenue_after"] == paid[name]
        assert abs(c["omr_cost_of_service"] - c["omr_revenue_after"]) < D("0.02") * c["omr_cost_of_service"]
    # the industrial user's BOD over normal is surcharged at the cost of a pound of BOD
    assert outcome.proposed.surcharge_rates_per_lb.value["bod"] == publish(d["cost_per_lb"]["bod"], D("0.30"))  # type: ignore[union-attr]
    # SU-REC recovers the debt budget: the annual debt retirement is the budget's
    assert outcome.proposed.annual_debt_retirement.value == D("185000.00")  # type: ignore[union-attr]


def test_the_impact_report_gives_revenue_by_class_a_typical_bill_and_the_largest_changes(
    book: TariffBook, outcomes: dict[str, StudyOutcome], demo_year: dict[str, list[Usage]]
) -> None:
    outcome = outcomes["grafton-sewer"]
    report = outcome.report
    usages = demo_year["grafton-sewer"]
    assert report["tariff_before"] == "grafton-sewer@2025-01-01"
    assert report["tariff_after"] == "grafton-sewer@2026-01-01 (proposed)"
    assert report["test_year"] == {
        "start": date(2025, 1, 1),
        "end": date(2026, 1, 1),
        "account_periods": len(usages),
        "accounts": len({u.account_id for u in usages}),
    }
    # revenue before: the year rated on the tariff in force, by class
    engine = RatingEngine(book)
    before: dict[str, Decimal] = defaultdict(Decimal)
    per_account: dict[str, Decimal] = defaultdict(Decimal)
    for u in usages:
        total = engine.rate(u.rating).total
        before[u.user_class] += total
        per_account[u.account_id] += total
    assert set(report["classes"]) == {"residential", "commercial", "industrial"}
    for name, c in report["classes"].items():
        assert c["revenue_before"] == before[name]
        assert c["change"] == c["revenue_after"] - c["revenue_before"]
        typical = c["typical_customer"]
        assert typical["use_unit"] == "kgal"
        assert typical["bill_before"] > 0 and typical["bill_after"] > 0
    residential = report["classes"]["residential"]["typical_customer"]
    assert D("5") < residential["use_per_period"] < D("40")  # a household's quarter
    changes = report["largest_changes"]
    assert len(changes) == 10
    sizes = [abs(c["change"]) for c in changes]
    assert sizes == sorted(sizes, reverse=True)
    assert all(c["before"] == per_account[c["account_id"]] for c in changes)
    assert changes[0]["account_id"] == "GR-0004"  # the high-strength dairy uses the most
    settings = {r["setting"]: r for r in report["rates"]}
    assert settings["volume_rate_per_kgal"]["before"] == D("6.50")
    assert settings["volume_rate_per_kgal"]["after"] == outcome.proposed.volume_rate_per_kgal.value  # type: ignore[union-attr]


def test_the_proposed_version_is_the_next_effective_dated_version_marked_proposed(
    outcomes: dict[str, StudyOutcome],
) -> None:
    for tenant, outcome in outcomes.items():
        proposed = outcome.proposed
        assert proposed.status == "proposed"
        assert proposed.effective_from == date(2026, 1, 1)
        assert proposed.effective_until is None
        assert proposed.tenant == tenant
        # every rate is published with the places of the version in force
        for change in outcome.study.rates:
            assert change.after == change.after.quantize(change.unit)


def test_a_budget_dated_before_the_version_in_force_is_refused(
    book: TariffBook, demo_year: dict[str, list[Usage]]
) -> None:
    with pytest.raises(RateStudyError) as caught:
        _study(book, demo_year, _budget("grafton-sewer", effective_from="2024-07-01"))
    assert caught.value.field == "effective_from"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"funds": {"om": "1.00"}}, "funds.replacement"),
        ({"funds": {"replacement": "1", "om": "1", "capital": "1"}}, "funds.capital"),
        ({"funds": {"replacement": 1.5, "om": "1"}}, "funds.replacement"),
        ({"cost_allocation": {"flow": "0.5", "bod": "0.4"}}, "cost_allocation"),
        ({"cost_allocation": {"bod": "1"}}, "cost_allocation.flow"),
        ({"tenant": "pleasant-prairie-water"}, "tenant"),
        ({"rates": {}}, "rates"),
    ],
)
def test_a_bad_budget_is_refused_naming_the_field(changes: dict[str, Any], field: str) -> None:
    tenant = "sullivan-sewer" if "cost_allocation" in changes else "grafton-sewer"
    raw = yaml.safe_load((BUDGETS / f"budget-{tenant}.yaml").read_text(encoding="utf-8"))
    raw.update(changes)
    with pytest.raises(RateStudyError) as caught:
        parse_budget(raw)
    assert caught.value.field == field


def test_no_determinants_no_rates(book: TariffBook) -> None:
    with pytest.raises(RateStudyError) as caught:
        run_rate_study(_budget("sullivan-sewer"), book, FakeDeterminants({}), FakeOutput())
    assert caught.value.field == "determinants"


def test_the_demo_determinants_are_the_account_periods_the_demo_year_bills(book: TariffBook) -> None:
    """The determinants source is faithful to the generator: one usage per account and period
    it expects a bill for (``expected.json``'s ``bills_per_period``)."""
    from sewerbill.demo.generator import generate

    demo = generate(300, 1, date(2025, 1, 1), 12, book)
    for tenant in TENANTS:
        rows = list(demo_determinants(tenant, book, start=date(2025, 1, 1)))
        per_period: dict[str, int] = defaultdict(int)
        for row in rows:
            per_period[row["scenario"]["period"]["start"]] += 1
        assert per_period == demo.expected["bills_per_period"][tenant], tenant


def test_pleasant_prairie_districts_each_recover_their_own_budget_on_winter_billed_volume(
    outcomes: dict[str, StudyOutcome], book: TariffBook, demo_year: dict[str, list[Usage]]
) -> None:
    """Each rate zone (district) has its own budget; the volume rate divides by the kgal the
    tariff bills (PP-SEW-WINTER's lesser of metered use and winter average), and an LM
    meter size the tariff does not publish stays unpublished."""
    outcome = outcomes["pleasant-prairie-sewer"]
    proposed = outcome.proposed
    assert set(proposed.service_charge.value["LM"]) == {"5/8"}  # type: ignore[union-attr]
    usages = demo_year["pleasant-prairie-sewer"]
    engine = RatingEngine(book)
    billed = sum(
        (bl.quantity for u in usages if u.rating.account.zone == "PP" for bl in engine.rate(u.rating).lines  # type: ignore[union-attr]
         if bl.rule_id == "PP-SEW-VOL"),
        D(0),
    )  # fmt: skip
    metered = sum((u.rating.water_gallons.scaleb(-3) for u in usages if u.rating.account.zone == "PP"), D(0))  # type: ignore[union-attr]
    assert (
        outcome.study.determinants["billed_kgal"]["PP"] == billed < metered
    )  # the winter average bills less
    # sampling costs are passed through: reported apart, not counted towards a budget
    assert outcome.report["penalties_not_rate_revenue"] > 0
    assert set(outcome.report["classes"]) == {"residential", "nonresidential", "industrial", "satellite"}


def test_a_shorter_test_year_is_annualised(book: TariffBook, demo_year: dict[str, list[Usage]]) -> None:
    """Budgets are annual: six months of determinants recover half of it, reported per year."""
    half = [u for u in demo_year["sullivan-sewer"] if u.rating.period_start < date(2025, 7, 1)]
    outcome = run_rate_study(
        _budget("sullivan-sewer"), book, FakeDeterminants({"sullivan-sewer": half}), FakeOutput()
    )
    for fund, line in outcome.report["funds"].items():
        assert abs(line["residual"]) <= line["tolerance"], fund
    recovered = _recovered_by_fund(outcome.proposed, half)
    assert outcome.report["funds"]["debt_retirement"]["recovered"] == recovered["debt_retirement"] * 2
