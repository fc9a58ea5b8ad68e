"""The village's books (issue 35): the daily journal by general-ledger account and fund,
and the month-end trial balance, from the accounts' ledgers.

The property: over random months of activity (bills with lines of both funds, payments
early, late and partial, late charges, credits, adjustments and the tax roll), every day's
journal balances in each fund, the interfund lines cancel across funds, and the trial
balance at any month end is the journal summed from the start, each fund summing to zero,
its receivable equal to the sum of the accounts' ledger balances.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.domain import books
from billing.domain.ledger import ZERO, Entry, balance

START = date(2027, 1, 1)


def entry(
    eid: str, account: str, day: int, kind: str, amount: str, fund: str = "om", bill: str = ""
) -> Entry:
    return Entry(
        entry_id=eid,
        tenant="grafton-sewer",
        account_id=account,
        posted_on=START + timedelta(days=day),
        kind=kind,  # type: ignore[arg-type]
        amount=Decimal(amount),
        fund=fund,
        bill_id=bill,
    )


def test_a_payment_recorded_in_om_pays_both_funds_and_the_interfund_says_so() -> None:
    ledger = [
        entry("c1", "GR-1", 0, "charge", "88.00", "om", "B1"),
        entry("c2", "GR-1", 0, "charge", "12.00", "replacement", "B1"),
        entry("p1", "GR-1", 5, "payment", "-50.00"),
    ]
    lines = books.journal({"GR-1": ledger}, START + timedelta(days=5), START + timedelta(days=6))
    got = {(ln.code, ln.fund): (str(ln.debit), str(ln.credit)) for ln in lines}
    assert got == {
        ("131", "om"): ("50.00", "0.00"),  # cash
        ("142", "om"): ("0.00", "44.00"),  # receivable: 88/100 of the payment
        ("142", "replacement"): ("0.00", "6.00"),
        ("146", "om"): ("0.00", "6.00"),  # om owes the replacement fund its share
        ("146", "replacement"): ("6.00", "0.00"),
    }
    first_day = books.journal({"GR-1": ledger}, START, START + timedelta(days=1))
    assert {(ln.code, ln.fund, str(ln.debit), str(ln.credit)) for ln in first_day} == {
        ("142", "om", "88.00", "0.00"),
        ("142", "replacement", "12.00", "0.00"),
        ("622", "om", "0.00", "88.00"),
        ("622", "replacement", "0.00", "12.00"),
    }


def test_the_tenants_chart_names_the_codes_and_an_unknown_account_is_refused() -> None:
    chart = books.chart_of({"cash": "1-131 Cash, treasurer's deposits"})
    assert chart["cash"] == ("1-131", "Cash, treasurer's deposits")
    assert chart["receivable"] == books.DEFAULT_CHART["receivable"]
    with pytest.raises(ValueError, match="unknown ledger account 'bank'"):
        books.chart_of({"bank": "1-100 Bank"})


KINDS = st.sampled_from(["bill", "bill", "payment", "payment", "late", "credit", "adjustment", "tax_roll"])


@st.composite
def histories(draw: st.DrawFn) -> dict[str, list[Entry]]:
    ledgers: dict[str, list[Entry]] = {}
    for a in range(draw(st.integers(1, 3))):
        account = f"GR-{a}"
        out: list[Entry] = []
        bills: list[str] = []
        for n in range(draw(st.integers(1, 14))):
            day = draw(st.integers(0, 89))
            kind = draw(KINDS)
            cents = draw(st.integers(1, 40_000))
            amount = Decimal(cents) / 100
            eid = f"{account}-{n}"
            if kind == "bill" or not bills:
                bill = f"{account}-B{n}"
                bills.append(bill)
                share = (amount * Decimal("0.12")).quantize(Decimal("0.01"))
                out.append(entry(eid + "a", account, day, "charge", str(amount - share), "om", bill))
                out.append(entry(eid + "b", account, day, "charge", str(share), "replacement", bill))
            elif kind == "payment":
                out.append(entry(eid, account, day, "payment", str(-amount)))
            elif kind == "tax_roll":
                out.append(entry(eid, account, day, "tax_roll", str(-amount)))
            elif kind == "late":
                out.append(
                    entry(
                        eid, account, day, "late_charge", str(amount / 10), "om", draw(st.sampled_from(bills))
                    )
                )
            elif kind == "credit":
                fund = draw(st.sampled_from(["om", "replacement"]))
                out.append(
                    entry(eid, account, day, "credit", str(-amount / 10), fund, draw(st.sampled_from(bills)))
                )
            else:
                sign = draw(st.sampled_from(["", "-"]))
                out.append(
                    entry(
                        eid,
                        account,
                        day,
                        "adjustment",
                        f"{sign}{amount / 20}",
                        "om",
                        draw(st.sampled_from(bills)),
                    )
                )
        ledgers[account] = [_cents(e) for e in out]
    return ledgers


def _cents(e: Entry) -> Entry:
    return Entry(
        entry_id=e.entry_id,
        tenant=e.tenant,
        account_id=e.account_id,
        posted_on=e.posted_on,
        kind=e.kind,
        amount=e.amount.quantize(Decimal("0.01")),
        fund=e.fund,
        bill_id=e.bill_id,
    )


def _by_fund(lines: Sequence[books.Line]) -> dict[tuple[date, str], Decimal]:
    sums: dict[tuple[date, str], Decimal] = {}
    for ln in lines:
        sums[(ln.day, ln.fund)] = sums.get((ln.day, ln.fund), ZERO) + ln.net
    return sums


@settings(max_examples=150, deadline=None)
@given(histories())
def test_every_days_journal_balances_by_fund_and_the_trial_balance_is_the_ledgers(
    ledgers: dict[str, list[Entry]],
) -> None:
    end = START + timedelta(days=90)
    lines = books.journal(ledgers, START, end)
    assert all(v == 0 for v in _by_fund(lines).values())
    interfund: dict[date, Decimal] = {}
    for ln in lines:
        if ln.code == books.DEFAULT_CHART[books.INTERFUND][0]:
            interfund[ln.day] = interfund.get(ln.day, ZERO) + ln.net
    assert all(v == 0 for v in interfund.values())
    for month_end in (date(2027, 1, 31), date(2027, 2, 28), date(2027, 3, 31)):
        tb = books.trial_balance(ledgers, month_end)
        funds: dict[str, Decimal] = {}
        for fund, _, _, value in tb:
            funds[fund] = funds.get(fund, ZERO) + value
        assert all(v == 0 for v in funds.values())
        receivable = sum((v for _, code, _, v in tb if code == "142"), ZERO)
        assert receivable == sum((balance(es, as_of=month_end) for es in ledgers.values()), ZERO)
        # the journal summed from the start is the trial balance
        summed: dict[tuple[str, str], Decimal] = {}
        for ln in books.journal(ledgers, START, month_end + timedelta(days=1)):
            summed[(ln.fund, ln.code)] = summed.get((ln.fund, ln.code), ZERO) + ln.net
        assert {k: v for k, v in summed.items() if v} == {(f, c): v for f, c, _, v in tb}
