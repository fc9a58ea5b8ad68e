"""Stormwater's rules as pure functions: credits, reconsideration, appeal, PEF, changes."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from stormwater.domain import credits as cr
from stormwater.domain import reconsiderations as rc
from stormwater.domain.determinations import ParcelData, effective_data, project_evaluation_reason
from stormwater.domain.eru import PLEASANT_PRAIRIE_DEFAULTS
from stormwater.domain.parcels import ParcelState, TariffView, redetermine

T = "pleasant-prairie-stormwater"
NOW = datetime(2026, 10, 1, 15, 0, tzinfo=UTC)
TARIFF = TariffView(
    version_id=f"{T}@2023-01-01",
    effective_from=date(2023, 1, 1),
    settings=PLEASANT_PRAIRIE_DEFAULTS,
    eru_rate=Decimal("6.00"),
    project_evaluation_fee=Decimal("150.00"),
    credit_engineer_limit_percent=Decimal(80),
    credit_cap_percent=Decimal(30),
    credit_review_fee=Decimal("100.00"),
    appeal_fee=Decimal("50.00"),
)
COMMERCIAL = ParcelData(use="nonresidential", area_sqft=Decimal(43560), impervious_sqft=Decimal(30000))
DOCS = cr.Documentation("Pat, P.E.", "WI-PE-1", "report 7", "wet pond")


def _state(data: ParcelData = COMMERCIAL) -> ParcelState:
    return ParcelState(tenant=T, parcel_id="P-1", owner_name="Owner", gis=data, gis_digest="d")


def _approved_credit(tss: str = "92") -> cr.Credit:
    step = cr.apply_for_credit(
        _state(), DOCS, tenant=T, parcel_id="P-1", tariff=TARIFF, open_credits=[], now=NOW
    )
    review = cr.start_review(step.credit, now=NOW)
    later = NOW + timedelta(days=10)
    return cr.approve(
        review.credit, tss_removal_percent=Decimal(tss), reason="ok", tariff=TARIFF, now=later
    ).credit


# --- credits -----------------------------------------------------------------------------------
def test_credit_percent_is_removal_over_the_engineers_limit_capped_at_30() -> None:
    assert cr.credit_percent_for(Decimal(92), TARIFF) == 12  # 92 - 80
    low_limit = replace(TARIFF, credit_engineer_limit_percent=Decimal(50))
    assert cr.credit_percent_for(Decimal(95), low_limit) == 30  # 45 held to the 30% cap


def test_a_credit_is_effective_from_its_approval_never_the_application() -> None:
    credit = _approved_credit()
    assert credit.submitted_on == date(2026, 10, 1) and credit.effective_from == date(2026, 10, 11)
    assert credit.percent_on(date(2026, 10, 10)) == 0 and credit.percent_on(date(2026, 10, 11)) == 12


def test_removal_at_or_below_the_limit_earns_no_credit_and_is_not_approved() -> None:
    step = cr.apply_for_credit(
        _state(), DOCS, tenant=T, parcel_id="P-1", tariff=TARIFF, open_credits=[], now=NOW
    )
    review = cr.start_review(step.credit, now=NOW).credit
    with pytest.raises(cr.CreditRefused) as err:
        cr.approve(review, tss_removal_percent=Decimal(80), reason="", tariff=TARIFF, now=NOW)
    assert err.value.field == "tss_removal_percent"


@pytest.mark.parametrize("use", ["residential", "agricultural", "right_of_way"])
def test_only_nonresidential_parcels_may_apply(use: str) -> None:
    data = replace(COMMERCIAL, use=use, impervious_sqft=Decimal(2000))
    with pytest.raises(cr.CreditRefused) as err:
        cr.apply_for_credit(
            _state(data), DOCS, tenant=T, parcel_id="P-1", tariff=TARIFF, open_credits=[], now=NOW
        )
    assert err.value.field == "parcel.use"


def test_an_application_charges_the_review_fee() -> None:
    step = cr.apply_for_credit(
        _state(), DOCS, tenant=T, parcel_id="P-1", tariff=TARIFF, open_credits=[], now=NOW
    )
    assert step.fee is not None and (step.fee.amount, step.fee.kind) == (Decimal("100.00"), "credit_review")


@pytest.mark.parametrize(("days", "allowed"), [(29, False), (30, True), (45, True)])
def test_revocation_needs_thirty_days_written_notice(days: int, allowed: bool) -> None:
    credit = _approved_credit()
    when = NOW + timedelta(days=20)
    revocation_date = when.date() + timedelta(days=days)
    if not allowed:
        with pytest.raises(cr.CreditRefused) as err:
            cr.revoke(credit, revocation_date=revocation_date, reason="basis changed", now=when)
        assert err.value.field == "revocation_date" and f"{days} days" in err.value.message
        return
    step = cr.revoke(credit, revocation_date=revocation_date, reason="basis changed", now=when)
    assert step.notice is not None and step.notice.notice_date == when.date()
    assert step.changed.effective_from == revocation_date and step.changed.credit_percent == 0
    assert step.credit.percent_on(revocation_date - timedelta(days=1)) == 12
    assert step.credit.percent_on(revocation_date) == 0


# --- reconsideration -----------------------------------------------------------------------------
BILL = rc.BillView(
    tenant=T,
    bill_id="B-1",
    account_id="A-1",
    parcel_id="P-1",
    bill_date=date(2026, 10, 1),
    due_date=date(2026, 10, 21),
    total=Decimal("41.24"),
    period_start=date(2026, 9, 1),
    period_end=date(2026, 10, 1),
)


@pytest.mark.parametrize(
    ("paid_on", "filed_on", "late"),
    [
        (None, date(2026, 10, 21), False),  # on the due date, unpaid
        (None, date(2026, 10, 22), True),
        (date(2026, 10, 25), date(2026, 11, 24), False),  # 30 days after payment
        (date(2026, 10, 25), date(2026, 11, 25), True),  # 31 days
    ],
)
def test_the_filing_window(paid_on: date | None, filed_on: date, late: bool) -> None:
    reason = rc.filing_window_closed(replace(BILL, paid_on=paid_on), filed_on)
    assert (reason is not None) is late


def _filed(billed_eru: str = "6.54") -> rc.Reconsideration:
    return rc.file_reconsideration(
        BILL,
        tenant=T,
        parcel_id="P-1",
        bill_id="B-1",
        owner_name="O",
        billed_eru=Decimal(billed_eru),
        grounds="remeasured",
        asserted_amount=Decimal("25.00"),
        today=date(2026, 10, 5),
    )


def _decide(recon: rc.Reconsideration, impervious: str, credit: str = "0") -> rc.Decision:
    return rc.decide(
        recon,
        outcome="decide",
        reason="survey",
        found={"impervious_sqft": impervious},
        current=COMMERCIAL,
        tariff=TARIFF,
        bill=BILL,
        credit_percent=Decimal(credit),
        now=NOW,
    )


@pytest.mark.parametrize(
    ("billed", "found_at", "status"),
    [
        ("7.00", "28900", "no_change"),  # found 6.30: 0.70 off = exactly 10% of 7.00
        ("7.01", "28900", "changed"),  # 0.71 off > 0.701
        ("6.00", "30250", "no_change"),  # found 6.60: 10% up
    ],
)
def test_no_change_unless_the_difference_is_greater_than_ten_percent(
    billed: str, found_at: str, status: str
) -> None:
    decision = _decide(_filed(billed), found_at)
    assert decision.reconsideration.status == status
    assert (decision.found_data is not None) is (status == "changed")


def test_above_ten_percent_the_overbilled_months_are_refunded_less_the_credit() -> None:
    # (6.54 - 3.83) x 6.00 x 1 month x (1 - 12%) = 16.26 x 0.88 = 14.3088 -> 14.31
    decision = _decide(_filed(), "15000", credit="12")
    assert decision.reconsideration.status == "changed" and decision.found_data is not None
    assert decision.reconsideration.refund_amount == Decimal("14.31")


def test_pp_cwu_reconsider_a_change_holds_from_the_reconsidered_bills_period_start() -> None:
    # PP-CWU-RECONSIDER (interpretation): the corrected value holds from the start of the
    # reconsidered bill's period (2026-09-01), not from the decision (2026-10-01): billing
    # re-rates that bill and every later one. Billed 3.83, found 6.54 (30,000 sq ft): 71% up,
    # changed; an increase refunds nothing (the re-rating is a debit memo).
    decision = _decide(_filed("3.83"), "30000")
    assert decision.reconsideration.status == "changed"
    assert decision.reconsideration.eru_found == Decimal("6.54")
    assert decision.reconsideration.refund_amount == 0
    assert decision.found_data is not None and decision.found_data.impervious_sqft == Decimal(30000)
    assert decision.decided.decided_on == NOW.date() == date(2026, 10, 1)
    assert decision.effective_from == BILL.period_start == date(2026, 9, 1)
    no_change = _decide(_filed("7.00"), "28900")
    assert no_change.found_data is None and no_change.effective_from is None


def _hearing(
    appeal: rc.Appeal,
    reverse: int,
    uphold: int,
    found: dict[str, str] | None,
    *,
    on: date = date(2026, 11, 5),
) -> rc.Hearing:
    return rc.record_hearing(
        appeal,
        hearing_date=on,
        members_present=7,
        votes_to_reverse=reverse,
        votes_to_uphold=uphold,
        minutes_ref="minutes 2026-11-05 item 4",
        found=found,
        current=COMMERCIAL,
        tariff=TARIFF,
        now=NOW + timedelta(days=40),  # 2026-11-10: the record is made after the hearing
    )


def test_appeal_within_thirty_days_of_the_decision_and_majority_to_reverse() -> None:
    decided = _decide(_filed(), "15000").reconsideration
    appeal, fee = rc.file_appeal(decided, grounds="g", tariff=TARIFF, now=NOW + timedelta(days=30))
    assert fee.amount == Decimal("50.00")
    with pytest.raises(rc.ReconsiderationRefused):
        rc.file_appeal(decided, grounds="g", tariff=TARIFF, now=NOW + timedelta(days=31))
    tie = _hearing(appeal, 2, 2, None)
    assert tie.appeal.status == "upheld" and tie.found_data is None and tie.decided.eru_set is None
    majority = _hearing(appeal, 4, 3, {"impervious_sqft": "20000"})
    assert majority.appeal.status == "reversed" and majority.decided.outcome == "reversed"


def test_a_reversal_sets_the_eru_from_the_data_the_board_finds_from_the_hearing_date() -> None:
    # The Engineer found 15,000 sq ft (3.83); the Board, reversing 4-3, finds 20,000 sq ft.
    # 43,560 sq ft lot: CN = (20,000 x 98 + 23,560 x 74) / 43,560 = 85.0193; S = 1.7620,
    # Ia = 0.3524, Q = 1.6476^2 / 3.4096 = 0.7962 in; volume = 0.7962 / 12 x 43,560 = 2890.0
    # cu ft; / 627.0084 (the standard ERU) = 4.61 ERU.
    decided = _decide(_filed(), "15000").reconsideration
    appeal, _ = rc.file_appeal(decided, grounds="the lawn is gravel", tariff=TARIFF, now=NOW)
    hearing = _hearing(appeal, 4, 3, {"impervious_sqft": "20000"})
    assert hearing.appeal.eru_set == Decimal("4.61") and hearing.decided.eru_set == Decimal("4.61")
    assert hearing.appeal.effective_from == hearing.decided.effective_from == date(2026, 11, 5)
    assert hearing.appeal.found == {"impervious_sqft": "20000"}
    data = hearing.found_data
    assert data is not None
    assert (data.impervious_sqft, data.area_sqft, data.data_source) == (
        Decimal(20000),
        Decimal(43560),
        "appeal",
    )


@pytest.mark.parametrize(
    ("reverse", "uphold", "found", "on", "field"),
    [
        (4, 3, None, date(2026, 11, 5), "found"),  # a reversal must say what the Board found
        (3, 4, {"impervious_sqft": "20000"}, date(2026, 11, 5), "found"),  # upheld: no new data
        (4, 3, {"impervious_sqft": "50000"}, date(2026, 11, 5), "found.area_sqft"),  # above the lot
        (4, 3, {"impervious_sqft": "20000"}, date(2026, 11, 11), "hearing_date"),  # not held yet
    ],
)
def test_a_hearing_record_the_rules_do_not_allow_is_refused_naming_the_field(
    reverse: int, uphold: int, found: dict[str, str] | None, on: date, field: str
) -> None:
    decided = _decide(_filed(), "15000").reconsideration
    appeal, _ = rc.file_appeal(decided, grounds="g", tariff=TARIFF, now=NOW)
    with pytest.raises(rc.ReconsiderationRefused) as refused:
        _hearing(appeal, reverse, uphold, found, on=on)
    assert refused.value.field == field


# --- determinations, overrides, PEF --------------------------------------------------------------
def test_a_new_determination_only_when_the_result_changes() -> None:
    first = redetermine(
        _state(), tariff=TARIFF, effective_from=date(2026, 10, 1), cause="gis_extract", cause_ref="f", now=NOW
    )
    assert first.event is not None and first.event.sequence == 1
    # 29,990 sq ft impervious (6.541973 unrounded) still rounds to 6.54 ERU: kept, not published.
    again = redetermine(
        replace(first.state, gis=replace(COMMERCIAL, impervious_sqft=Decimal(29990))),
        tariff=TARIFF,
        effective_from=date(2026, 10, 2),
        cause="gis_extract",
        cause_ref="g",
        now=NOW,
    )
    assert again.event is None and again.state.current is not None and again.state.current.sequence == 1
    assert again.state.current.breakdown.impervious_sqft == Decimal(29990)


def test_an_override_replaces_only_the_fields_it_gives() -> None:
    data = effective_data(COMMERCIAL, {"impervious_sqft": Decimal(1000)})
    assert (data.area_sqft, data.impervious_sqft, data.data_source) == (
        Decimal(43560),
        Decimal(1000),
        "override",
    )


@pytest.mark.parametrize(
    ("before", "after", "parent", "reason"),
    [
        (replace(COMMERCIAL, impervious_sqft=Decimal(0)), COMMERCIAL, None, "developed"),
        (COMMERCIAL, replace(COMMERCIAL, impervious_sqft=Decimal(20000)), None, None),
        (None, COMMERCIAL, "P-0", "lot_split"),
        (None, COMMERCIAL, None, None),  # first seen, already built: no fee
        (replace(COMMERCIAL, use="agricultural"), replace(COMMERCIAL, use="residential"), None, "developed"),
    ],
)
def test_project_evaluation_fee_reasons(
    before: ParcelData | None, after: ParcelData, parent: str | None, reason: str | None
) -> None:
    assert project_evaluation_reason(before, after, parent_parcel_id=parent) == reason
