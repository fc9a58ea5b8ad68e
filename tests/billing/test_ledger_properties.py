"""Hypothesis properties of the ledger: it balances after any sequence of bills, payments
and adjustments; payments never allocate more than was paid; a bill's credits go to that
bill only (X-ALLOCATION); a bill's total is the sum of its lines."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from billing.domain.bills import issue
from billing.domain.ledger import DEFAULT_ORDER, FUNDS, ZERO, Entry, allocate, balance, trial_balance
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
    # the credits from the notice on pay the noticed debits before any other. A notice
    # names debits posted by its day (X-ALLOCATION: a credit pays the debits posted by its
    # day, what is left of it those posted later).
    debits = [e for e in ledger if e.amount > 0]
    by_then = [e.entry_id for e in debits if e.posted_on <= noticed_on]
    noticed = data.draw(st.sets(st.sampled_from(by_then))) if by_then else set()
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


@st.composite
def billed_ledgers(draw: st.DrawFn) -> list[Entry]:
    """Bills in date order, each with charge lines, maybe a penalty, and credits on the bill
    (a negative line, a refund, a negative adjustment) that do not exceed its debits; and
    payments and tax-roll entries on no bill."""
    out: list[Entry] = []

    def add(kind: str, on: date, amount: Decimal, bill_id: str = "", fund: str = "om") -> None:
        out.append(Entry(f"E{len(out)}", "ppw", "PPW-1", on, kind, amount, fund, bill_id=bill_id))  # type: ignore[arg-type]

    day = date(2026, 1, 1)
    for b in range(draw(st.integers(min_value=1, max_value=4))):
        bill_id = f"B{b}"
        day += timedelta(days=draw(st.integers(min_value=0, max_value=40)))
        room = ZERO
        for _ in range(draw(st.integers(min_value=1, max_value=3))):
            amount = draw(cents)
            room += amount
            add("charge", day, amount, bill_id, draw(st.sampled_from(FUNDS)))
        if draw(st.booleans()):
            amount = draw(cents)
            room += amount
            add("penalty", day + timedelta(days=30), amount, bill_id)
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            amount = min(draw(cents), room)
            if amount <= 0:
                break
            room -= amount
            kind = draw(st.sampled_from(["charge", "credit", "adjustment"]))
            later = 0 if kind == "charge" else draw(st.integers(min_value=0, max_value=90))
            add(kind, day + timedelta(days=later), -amount, bill_id)
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        add(draw(st.sampled_from(["payment", "payment", "tax_roll"])), draw(days), -draw(cents))
    return out


@given(billed_ledgers(), days)
def test_a_bills_credit_lines_never_reduce_another_bills_unpaid_principal(
    ledger: list[Entry], paid_by: date
) -> None:
    # X-ALLOCATION: every bill gets the whole of its own credits (dated by ``paid_by``); all
    # any bill gets beyond them comes from the payments and the tax roll, which are on no
    # bill, up to their sum or to what is left unpaid.
    unpaid = allocate(ledger, paid_by=paid_by)
    counted = [e for e in ledger if e.posted_on <= paid_by]
    beyond = ZERO
    for bill in sorted({e.bill_id for e in ledger if e.bill_id}):
        debits = [e for e in ledger if e.bill_id == bill and e.amount > 0]
        own = -sum((e.amount for e in counted if e.bill_id == bill and e.amount < 0), ZERO)
        applied = sum((e.amount - unpaid[e.entry_id] for e in debits), ZERO)
        assert applied >= own
        beyond += applied - own
    pool = -sum((e.amount for e in counted if not e.bill_id), ZERO)
    assert beyond == min(pool, beyond + sum(unpaid.values(), ZERO))
