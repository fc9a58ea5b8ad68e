"""Classification on every finalised result: the events billing keeps."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from common.dates import add_months
from sampling.domain.classifying import FinalResult, classify_account
from sampling.domain.samples import (
    AccountInfo,
    AccountRecord,
    Decision,
    StoredResult,
    deviation_flags,
    final_results,
)
from sampling.domain.strength import PLEASANT_PRAIRIE_CATEGORY_A, SULLIVAN_NORMAL, LabResult
from sampling.events import StrengthCategoryChanged

NOW = datetime(2027, 6, 1, tzinfo=UTC)


def pp(day: date, bod: str) -> FinalResult:
    return FinalResult((f"S-{day}",), LabResult(day, bod=Decimal(bod), tss=Decimal(100)))


def classify_pp(final: list[FinalResult], as_of: date, previous: str | None = "B"):
    return classify_account(
        tenant="pleasant-prairie-sewer",
        account_id="PP-0002",
        final=final,
        as_of=as_of,
        limits=PLEASANT_PRAIRIE_CATEGORY_A,
        trigger="t",
        effective_from=as_of,
        previous_category=previous,
        billing_period_months=1,
        now=NOW,
    )


def months_of_results(first_bad: date, compliant_from: date, months: int, bad_in_month: int | None = None):
    results = [pp(first_bad, "220")]
    for n in range(months):
        results.append(pp(add_months(compliant_from, n), "300" if n == bad_in_month else "150"))
    return results


def test_24_consecutive_compliant_months_return_a_category_b_account_to_a() -> None:
    # B on 2025-01-15 (BOD 220 > 180); compliant monthly from 2025-02-15; A from the 24-month
    # anniversary 2027-02-15 (PP-SEW-CAT-B-EXIT).
    results = months_of_results(date(2025, 1, 15), date(2025, 2, 15), 24)
    event = classify_pp(results, date(2027, 2, 15))
    assert isinstance(event, StrengthCategoryChanged)
    assert (event.previous_category, event.category, event.since) == ("B", "A", date(2027, 2, 15))
    assert event.basis is None
    assert event.reassignment is not None and event.reassignment.rule_id == "PP-SEW-CAT-B-EXIT"
    # One day before the anniversary the clock is still running and the basis stays.
    before = classify_pp(results[:-1], date(2027, 2, 14))
    assert before.category == "B" and before.exit_clock is not None
    assert (before.exit_clock.started_on, before.exit_clock.returns_on) == (
        date(2025, 2, 15),
        date(2027, 2, 15),
    )
    assert before.basis is not None and before.basis.bod == Decimal("220")


def test_an_exceedance_in_month_23_restarts_the_24_months() -> None:
    # Month 23 (n = 22: 2026-12-15) BOD 300: the clock restarts with the next compliant
    # sample, 2027-01-15, so the user is B until at least 2029-01-15 and billed on BOD 300.
    results = months_of_results(date(2025, 1, 15), date(2025, 2, 15), 24, bad_in_month=22)
    event = classify_pp(results, date(2027, 6, 1))
    assert event.category == "B" and event.since == date(2025, 1, 15)
    assert event.exit_clock is not None and event.exit_clock.started_on == date(2027, 1, 15)
    assert event.exit_clock.returns_on == date(2029, 1, 15)
    assert event.basis is not None and event.basis.bod == Decimal("300")


def test_a_sullivan_bod_950_result_yields_violation_days_in_its_quarter() -> None:
    # SU-BOD900: BOD 950 on 2025-04-14 and 2025-04-30 -> 2 violation days in Q2 2025; the
    # March 950 falls in Q1 and is never carried forward into Q2.
    final = [
        FinalResult(("A",), LabResult(date(2025, 3, 20), bod=Decimal(950))),
        FinalResult(("B",), LabResult(date(2025, 4, 14), bod=Decimal(950))),
        FinalResult(("C",), LabResult(date(2025, 4, 30), bod=Decimal(950), tss=Decimal(300))),
    ]
    event = classify_account(
        tenant="sullivan-sewer",
        account_id="SU-0042",
        final=final,
        as_of=date(2025, 5, 2),
        limits=SULLIVAN_NORMAL,
        trigger="C",
        effective_from=date(2025, 4, 30),
        previous_category="above-normal",
        billing_period_months=3,
        now=NOW,
        touched=[date(2025, 4, 14), date(2025, 4, 30)],
    )
    (quarter,) = event.violation_days
    assert (quarter.period_start, quarter.period_end, quarter.days) == (date(2025, 4, 1), date(2025, 7, 1), 2)
    assert quarter.dates == (date(2025, 4, 14), date(2025, 4, 30))
    assert event.category == "above-normal" and event.basis is not None and event.basis.bod == Decimal(950)


def _record(choice: str | None) -> AccountRecord:
    def res(sample: str, kind: str, on: date, bod: str, tss: str | None = None, of: str | None = None):
        rows = [StoredResult(sample, "bod", Decimal(bod), on, kind, of)]
        if tss:
            rows.append(StoredResult(sample, "tss", Decimal(tss), on, kind, of))
        return rows

    record = AccountRecord(info=AccountInfo("pleasant-prairie-sewer", "PP-0003", "MH-1"))
    record.results = [
        *res("ORIG", "routine", date(2025, 6, 3), "900", "240"),
        *res("RE", "resample", date(2025, 6, 17), "200"),
        *res("SPLIT", "split", date(2025, 6, 3), "880", of="ORIG"),
    ]
    if choice:
        record.decisions["ORIG"] = Decision("ORIG", "RE", choice, "clerk", "why", NOW)
    return record


def test_choose_versus_average_of_a_resample() -> None:
    # Undecided: the original counts, the resample waits, the split never counts.
    assert [(f.sample_ids, f.result.bod) for f in final_results(_record(None))] == [(("ORIG",), Decimal(900))]
    assert [f.result.bod for f in final_results(_record("original"))] == [Decimal(900)]
    assert [(f.sample_ids, f.result.bod) for f in final_results(_record("resample"))] == [
        (("RE",), Decimal(200))
    ]
    # Average: BOD (900 + 200) / 2 = 550; TSS measured only in the original stays 240;
    # dated on the original sample's day.
    (averaged,) = final_results(_record("average"))
    assert averaged.sample_ids == ("ORIG", "RE")
    assert (averaged.result.bod, averaged.result.tss, averaged.result.sampled_on) == (
        Decimal(550),
        Decimal(240),
        date(2025, 6, 3),
    )


def test_a_result_far_from_the_accounts_history_is_flagged_for_resample() -> None:
    history = [pp(date(2025, m, 3), bod) for m, bod in ((1, "190"), (2, "200"), (3, "210"), (4, "205"))]
    # Median of 190, 200, 205, 210 = 202.5; 3 x 202.5 = 607.5 < 900: flagged.
    assert deviation_flags(history, LabResult(date(2025, 6, 3), bod=Decimal(900)))
    assert deviation_flags(history, LabResult(date(2025, 6, 3), bod=Decimal(600))) == []
    assert (
        deviation_flags(history[:2], LabResult(date(2025, 6, 3), bod=Decimal(900))) == []
    )  # too little history


def test_the_sullivan_industrial_user_determination_uses_the_registered_flow_and_latest_result() -> None:
    from sampling.domain.intake import industrial_user_of

    info = AccountInfo(
        "sullivan-sewer", "SU-0042", "MH-9", sic_division="D", avg_daily_flow_gal=Decimal(1500)
    )
    final = [FinalResult(("B",), LabResult(date(2025, 4, 14), bod=Decimal(950), tss=Decimal(200)))]
    # 1,500 GPD is not above 2,000, but its BOD load is: 1,500 x 950 x 8.34 / 1,000,000 =
    # 11.8845 lb/day > 6.672 (2,000 GPD at 400 mg/l). TSS: 1,500 x 200 x 8.34 / 1e6 = 2.502 < 4.17.
    determination = industrial_user_of(info, final)
    assert determination is not None and determination.is_industrial is True
    assert "11.8845" in determination.reasons[0] and "SIC Division D" in determination.reasons[0]
    # Division G (retail) is not a listed division: not industrial, and the record says why.
    retail = industrial_user_of(
        AccountInfo("sullivan-sewer", "SU-0043", "MH-9", sic_division="G", avg_daily_flow_gal=Decimal(1500)),
        final,
    )
    assert retail is not None and retail.is_industrial is False
    assert any("not a listed division" in r for r in retail.reasons)
    # Without a registered flow there is nothing to determine; other tenants never are.
    assert industrial_user_of(AccountInfo("sullivan-sewer", "SU-0044", "MH-9"), final) is None
