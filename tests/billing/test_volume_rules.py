"""X-ALLOCATION and PP-CWU-PENALTY at volume (pure): one Pleasant Prairie stormwater account
with 150 monthly bills, each carrying its PP-CWU-CREDIT line, and partial payments.

The expected penalties and principals come from a plain reading of the rules, replayed day
by day over the account (:func:`by_the_rules`): a payment goes to the unpaid bills oldest
first, within a bill penalties before charges; a bill's credit line reduces only that bill
(its principal is its charges less its own credit less what payments gave it); on the day a
bill is 30 days old, and on each monthly anniversary of that day while it is unpaid, it
bears 1% of its own unpaid principal, rounded half-up. Penalties are never principal.

No timing is asserted (tests are deterministic); the module prints how long the one
assessment over the 150 bills took, for the record."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

from billing_support import payment

from billing.domain.assessment import assess_account
from billing.domain.bills import Bill
from billing.domain.ledger import Entry, allocate, balance, principal
from common.dates import add_months

SW = "pleasant-prairie-stormwater"
BILLS = 150
PAID_IN_FULL = 135  # the first 135 bills are paid in full on day 10; the last 15 20.00 only
CENT = Decimal("0.01")


def by_the_rules(
    bills: list[Bill], payments: list[Entry], today: date
) -> tuple[dict[tuple[str, date], Decimal], dict[str, Decimal]]:
    """The penalties (by bill and day) and each bill's unpaid principal on ``today``, replayed
    day by day from the rules as stated (see the module docstring)."""
    principal_left = {b.bill_id: b.total for b in bills}  # charges less the bill's own credit
    penalty_left = {b.bill_id: Decimal("0.00") for b in bills}
    due: dict[date, list[Bill]] = {}
    for b in bills:
        first = b.bill_date + timedelta(days=30)
        n = 0
        while (on := add_months(first, n)) <= today:
            due.setdefault(on, []).append(b)
            n += 1
    paid: dict[date, Decimal] = {}
    for p in payments:
        paid[p.posted_on] = paid.get(p.posted_on, Decimal("0.00")) - p.amount
    penalties: dict[tuple[str, date], Decimal] = {}
    carry = Decimal("0.00")
    for day in sorted(set(due) | set(paid)):
        carry += paid.get(day, Decimal("0.00"))
        for b in sorted((b for b in bills if b.bill_date <= day), key=lambda b: b.bill_date):
            for left in (penalty_left, principal_left):
                take = min(carry, left[b.bill_id])
                left[b.bill_id] -= take
                carry -= take
        for b in due.get(day, ()):
            if principal_left[b.bill_id] > 0:
                amount = (principal_left[b.bill_id] / 100).quantize(CENT, rounding=ROUND_HALF_UP)
                penalties[(b.bill_id, day)] = amount
                penalty_left[b.bill_id] += amount
    assert carry == 0  # no payment here overpays the account
    return penalties, principal_left


def test_pp_cwu_penalty_and_x_allocation_hold_for_150_credited_bills_with_partial_payments(
    stormwater_bill, terms
) -> None:
    # Nonresidential, 10.00 ERU, an approved 20% credit: 2.00 + 10.00 x 6.00 = 62.00, less
    # 10.00 x 6.00 x 20% = 12.00 (PP-CWU-CREDIT, a line on the bill): 50.00 a month.
    bills = [
        stormwater_bill(
            add_months(date(2026, 1, 1), k),
            add_months(date(2026, 1, 1), k + 1),
            bill_date=add_months(date(2026, 1, 1), k + 1),
            eru="10.00",
            use="nonresidential",
            credit_percent="20",
        )
        for k in range(BILLS)
    ]
    assert {b.total for b in bills} == {Decimal("50.00")}
    assert all(any(ln.rule_id == "PP-CWU-CREDIT" and ln.amount < 0 for ln in b.lines) for b in bills)
    payments = [
        payment(
            "PPW-1",
            f"P{k:03d}",
            b.bill_date + timedelta(days=10),
            "50.00" if k < PAID_IN_FULL else "20.00",
            tenant=SW,
        )
        for k, b in enumerate(bills)
    ]
    today = bills[-1].bill_date + timedelta(days=95)  # the last bill's third penalty day
    pp = replace(terms(SW, bills[0].period_start), tax_roll=None)  # penalties alone here
    entries = [e for b in bills for e in b.entries()] + payments

    started = time.perf_counter()
    out = assess_account(bills=bills, entries=entries, marks=[], notices=[], terms=pp, today=today)
    assessed = time.perf_counter() - started
    penalties = [e for e in out.entries if e.rule_id == "PP-CWU-PENALTY"]
    started = time.perf_counter()
    ledger = entries + penalties
    unpaid = allocate(ledger, order=pp.payment_order)
    allocated = time.perf_counter() - started
    print(
        f"\n[volume] {BILLS} bills, {len(ledger)} entries, {len(penalties)} penalties: "
        f"assess_account {assessed:.2f} s, allocate {allocated:.3f} s"
    )

    expected_penalties, expected_principal = by_the_rules(bills, payments, today)
    assert {(e.bill_id, e.posted_on): e.amount for e in penalties} == expected_penalties
    assert len({e.entry_id for e in penalties}) == len(penalties)  # none twice
    # The bills paid in full bear nothing; each partly paid one bears its own 1%.
    assert {bill for bill, _ in expected_penalties} == {b.bill_id for b in bills[PAID_IN_FULL:]}
    assert {b.bill_id: principal(unpaid, ledger, b.bill_id) for b in bills} == expected_principal
    # The balance is what was billed and assessed less what was paid.
    billed = sum((b.total for b in bills), Decimal("0.00"))
    assessed_total = sum((e.amount for e in penalties), Decimal("0.00"))
    paid = -sum((p.amount for p in payments), Decimal("0.00"))
    assert balance(ledger) == billed + assessed_total - paid
    assert sum(unpaid.values(), Decimal("0.00")) == balance(ledger)
    # The same day assessed again adds nothing (each penalty is kept by its entry id).
    again = assess_account(bills=bills, entries=ledger, marks=[], notices=[], terms=pp, today=today).entries
    assert [e for e in again if e.rule_id == "PP-CWU-PENALTY"] == []
