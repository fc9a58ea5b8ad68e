"""Hypothesis properties of the ledger: it balances after any sequence of bills, payments
and adjustments; payments never allocate more than was paid; a bill's total is the sum of
its lines."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from billing.domain.bills import issue
from billing.domain.ledger import DEFAULT_ORDER, ZERO, Entry, allocate, balance, trial_balance
from billing.domain.rating import Account, RatingEngine, RatingInput
from common.tariff_files import default_tariffs_dir, load_tariff_book

ENGINE = RatingEngine(load_tariff_book(default_tariffs_dir()))
cents = st.integers(min_value=1, max_value=500_00).map(lambda c: Decimal(c).scaleb(-2))
days = st.integers(min_value=0, max_value=400).map(lambda d: date(2026, 1, 1) + timedelta(days=d))


@st.composite
def entries(draw: st.DrawFn) -> list[Entry]:
    out: list[Entry] = []
    for i in range(draw(st.integers(min_value=0, max_value=25))):
        kind = draw(st.sampled_from(["charge", "payment", "adjustment", "late_charge", "penalty", "credit"]))
        amount = draw(cents)
        if kind in ("payment", "credit") or (kind == "adjustment" and draw(st.booleans())):
            amount = -amount
        fund = draw(st.sampled_from(["om", "replacement"]))
        out.append(Entry(f"E{i}", "grafton-sewer", "GR-1", draw(days), kind, amount, fund))  # type: ignore[arg-type]
    return out


@given(entries())
def test_the_ledger_balances_after_any_sequence(ledger: list[Entry]) -> None:
    sums = trial_balance(ledger)
    assert sum(sums.values(), ZERO) == 0
    assert sums.get("receivable", ZERO) == balance(ledger)


@given(entries(), days)
def test_payments_never_allocate_more_than_was_paid(ledger: list[Entry], paid_by: date) -> None:
    unpaid = allocate(ledger, paid_by=paid_by)
    debits = {e.entry_id: e.amount for e in ledger if e.amount > 0}
    applied = sum((debits[i] - unpaid[i] for i in debits), ZERO)
    paid = -sum((e.amount for e in ledger if e.amount < 0 and e.posted_on <= paid_by), ZERO)
    assert all(ZERO <= unpaid[i] <= debits[i] for i in debits)
    assert applied == min(paid, sum(debits.values(), ZERO))


@given(entries(), days, st.data())
def test_noticed_debits_come_first_only_for_credits_dated_from_the_notice(
    ledger: list[Entry], noticed_on: date, data: st.DataObject
) -> None:
    # X-TAXROLL: the credits dated before the notice allocate as if there were no notice;
    # the credits from the notice on pay the noticed debits before any other.
    debits = [e for e in ledger if e.amount > 0]
    noticed = data.draw(st.sets(st.sampled_from([e.entry_id for e in debits]))) if debits else set()
    unpaid = allocate(ledger, first=dict.fromkeys(noticed, noticed_on))
    before = [e for e in ledger if e.amount > 0 or e.posted_on < noticed_on]
    then = allocate(before)
    later = -sum((e.amount for e in ledger if e.amount < 0 and e.posted_on >= noticed_on), ZERO)
    expected = dict(then)
    rank = {kind: i for i, kind in enumerate(DEFAULT_ORDER)}
    oldest_first = sorted(debits, key=lambda e: (e.posted_on, rank.get(e.kind, len(rank)), e.entry_id))
    for e in sorted(oldest_first, key=lambda e: e.entry_id not in noticed):
        applied = min(later, expected[e.entry_id])
        later -= applied
        expected[e.entry_id] -= applied
    assert unpaid == expected
    assert allocate(ledger, first=dict.fromkeys(noticed, date.min)) == allocate(
        ledger, first=dict.fromkeys(noticed, date(2000, 1, 1))
    )


@settings(max_examples=60)
@given(
    st.integers(min_value=0, max_value=2_000_000),
    st.sampled_from(["5/8", "1", "2", "6"]),
    st.sampled_from(["residential", "nonresidential"]),
)
def test_a_bills_total_is_the_sum_of_its_lines_and_of_its_ledger_entries(
    gallons: int, meter: str, klass: str
) -> None:
    rated = ENGINE.rate(
        RatingInput(
            "grafton-sewer",
            date(2026, 1, 1),
            date(2026, 4, 1),
            account=Account(klass, meter_size=meter),  # type: ignore[arg-type]
            water_gallons=Decimal(gallons),
        )
    )
    bill = issue(
        rated, account_id="GR-1", bill_date=date(2026, 4, 1), due_days=None, history=(), last_bill_date=None
    )
    assert bill.total == sum((ln.amount for ln in bill.lines), ZERO)
    assert bill.total == balance(bill.entries())
    assert bill.due_date == date(2026, 4, 1)  # GR-BILLING: the first of the month after the quarter
