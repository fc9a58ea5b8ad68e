"""X-ALLOCATION as RULES.md states it, computed by hand: a payment goes to the account's
unpaid bills oldest bill first, within a bill in the tariff's ``payment_order`` (penalties,
late charges, charges, adjustments), each part to its funds in proportion (GR-FUNDS); a
bill's principal, for its late charge or penalty, is its own charges (a debit memo on it
included) less what was applied to it (PP-CWU-PENALTY)."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from billing_support import payment
from hypothesis import given
from hypothesis import strategies as st

from billing.domain.assessment import assess_account
from billing.domain.ledger import DEFAULT_ORDER, FUNDS, ZERO, Entry, allocate, principal

GR = "grafton-sewer"


def debit(entry_id: str, on: date, kind: str, amount: str, bill_id: str, fund: str = "om") -> Entry:
    return Entry(entry_id, GR, "GR-1", on, kind, Decimal(amount), fund, bill_id=bill_id)  # type: ignore[arg-type]


# Bill A dated 01-01 (100.00), bill B dated 01-20 (80.00); A's 1.00 penalty is posted on
# 01-31, after B's date: by date alone B's charges would come before A's penalty.
OLDER_WITH_PENALTY = [
    debit("A-L00-om", date(2026, 1, 1), "charge", "100.00", "A"),
    debit("B-L00-om", date(2026, 1, 20), "charge", "80.00", "B"),
    debit("A-PENALTY-000", date(2026, 1, 31), "penalty", "1.00", "A"),
]


@pytest.mark.parametrize(
    ("paid", "expected"),
    [
        # 1.00 pays A's penalty (first within A), none of A's charges
        ("1.00", {"A-PENALTY-000": "0.00", "A-L00-om": "100.00", "B-L00-om": "80.00"}),
        # 101.50: A's penalty 1.00, A's charges 100.00, the last 0.50 to B: 80.00 - 0.50
        ("101.50", {"A-PENALTY-000": "0.00", "A-L00-om": "0.00", "B-L00-om": "79.50"}),
        # 50.00: penalty 1.00, then 49.00 of A's 100.00 charges; B untouched
        ("50.00", {"A-PENALTY-000": "0.00", "A-L00-om": "51.00", "B-L00-om": "80.00"}),
    ],
)
def test_a_partial_payment_pays_the_older_bills_penalty_then_its_charges_then_the_newer_bill(
    paid: str, expected: dict[str, str]
) -> None:
    ledger = [*OLDER_WITH_PENALTY, payment("GR-1", "P1", date(2026, 2, 5), paid)]
    unpaid = allocate(ledger, order=DEFAULT_ORDER)
    assert unpaid == {k: Decimal(v) for k, v in expected.items()}


def test_a_payment_splits_a_grafton_bills_charges_between_replacement_and_om_in_proportion(
    grafton_bill, terms
) -> None:
    """GR-FUNDS 12%: 5/8" service 45.00 (replacement 5.40, om 39.60) and 23 kgal x 6.50 =
    149.50 (replacement 17.94, om 131.56): 194.50, of it 23.34 replacement, 171.16 om.

    A payment of 33.33: replacement 33.33 x 23.34 / 194.50 = 3.9996 -> 4.00 (half-up),
    om the rest 29.33 (4.00 + 29.33 = 33.33). Within a fund the lines in order: the
    replacement 4.00 to line 0 (5.40 -> 1.40), the om 29.33 to line 0 (39.60 -> 10.27)."""
    bill = grafton_bill(date(2026, 4, 1), date(2026, 7, 1), bill_date=date(2026, 7, 1), gallons=23000)
    entries = bill.entries()
    assert [(e.fund, e.amount) for e in entries] == [
        ("om", Decimal("39.60")),
        ("replacement", Decimal("5.40")),
        ("om", Decimal("131.56")),
        ("replacement", Decimal("17.94")),
    ]
    gr = terms(GR, date(2026, 7, 1))
    unpaid = allocate([*entries, payment("GR-1", "P1", date(2026, 7, 10), "33.33")], order=gr.payment_order)
    applied = {f: sum((e.amount - unpaid[e.entry_id] for e in entries if e.fund == f), ZERO) for f in FUNDS}
    assert applied == {"replacement": Decimal("4.00"), "om": Decimal("29.33")}
    assert [unpaid[e.entry_id] for e in entries] == [
        Decimal("10.27"),
        Decimal("1.40"),
        Decimal("131.56"),
        Decimal("17.94"),
    ]


@pytest.mark.parametrize(
    ("memo", "principal_", "penalty"),
    [
        # a debit memo re-rating the bill to 4.00 ERU: 2.00 + 4 x 6.00 = 26.00, +6.00;
        # 1% of 26.00 = 0.26
        ("6.00", "26.00", "0.26"),
        # the same as a credit memo (2.00 ERU: 14.00): 1% of 14.00 = 0.14
        ("-6.00", "14.00", "0.14"),
    ],
)
def test_an_adjustment_on_a_bill_moves_its_penalty_principal_either_way(
    stormwater_bill, terms, memo: str, principal_: str, penalty: str
) -> None:
    """PP-CWU-PENALTY, X-ALLOCATION: 2.00 base + 3.00 ERU x 6.00 = 20.00 billed 10-01; an
    adjustment on the bill dated 10-15 (X-IMMUTABLE: the re-rating's difference, referring
    to the bill); delinquent on day 30 (10-31): 1% of the principal."""
    bill = stormwater_bill(date(2026, 9, 1), date(2026, 10, 1), bill_date=date(2026, 10, 1), eru="3.00")
    assert bill.total == Decimal("20.00")
    pp = terms("pleasant-prairie-stormwater", date(2026, 9, 1))
    adjustment = Entry(
        f"ADJ-{bill.bill_id}-RERATE",
        pp.tenant,
        bill.account_id,
        date(2026, 10, 15),
        "adjustment",
        Decimal(memo),
        "om",
        rule_id="X-IMMUTABLE",
        bill_id=bill.bill_id,
        reference=bill.bill_id,
    )
    ledger = [*bill.entries(), adjustment]
    assert principal(allocate(ledger, order=pp.payment_order), ledger, bill.bill_id) == Decimal(principal_)
    out = assess_account(
        bills=[bill], entries=ledger, marks=[], notices=[], terms=pp, today=date(2026, 10, 31)
    )
    assert [(e.rule_id, e.posted_on, e.amount) for e in out.entries] == [
        ("PP-CWU-PENALTY", date(2026, 10, 31), Decimal(penalty))
    ]


# --- a property over random ledgers ------------------------------------------------------------
cents = st.integers(min_value=1, max_value=300_00).map(lambda c: Decimal(c).scaleb(-2))


@st.composite
def ledgers(draw: st.DrawFn) -> tuple[list[Entry], list[str]]:
    """Bills (ids in age order) with charge lines over both funds, maybe a debit memo and a
    late charge or penalty posted any time later; and payments on no bill, dated after all."""
    out: list[Entry] = []
    bills: list[str] = []
    day = date(2026, 1, 1)
    for b in range(draw(st.integers(min_value=1, max_value=4))):
        bill_id = f"B{b}"
        bills.append(bill_id)
        day += timedelta(days=draw(st.integers(min_value=1, max_value=40)))
        for i in range(draw(st.integers(min_value=1, max_value=3))):
            for fund in draw(st.sets(st.sampled_from(FUNDS), min_size=1)):
                out.append(
                    debit(f"{bill_id}-L{i:02d}-{fund}", day, "charge", str(draw(cents)), bill_id, fund)
                )
        for kind in draw(st.lists(st.sampled_from(["adjustment", "late_charge", "penalty"]), max_size=3)):
            later = day + timedelta(days=draw(st.integers(min_value=0, max_value=120)))
            fund = draw(st.sampled_from(FUNDS))
            out.append(debit(f"{bill_id}-{kind}-{len(out)}", later, kind, str(draw(cents)), bill_id, fund))
    # the payments come after every debit, so each one meets all of them unpaid
    last = max(e.posted_on for e in out)
    for p in range(draw(st.integers(min_value=0, max_value=4))):
        on = last + timedelta(days=draw(st.integers(min_value=0, max_value=60)))
        out.append(payment("GR-1", f"P{p}", on, str(draw(cents))))
    return out, bills


@given(ledgers())
def test_payments_go_to_the_oldest_bill_first_in_order_and_in_proportion(
    drawn: tuple[list[Entry], list[str]],
) -> None:
    ledger, bills = drawn
    unpaid = allocate(ledger, order=DEFAULT_ORDER)
    debits = [e for e in ledger if e.amount > 0]
    applied = {e.entry_id: e.amount - unpaid[e.entry_id] for e in debits}
    # never more than a debit, and every payment is applied while anything is unpaid
    assert all(ZERO <= unpaid[e.entry_id] <= e.amount for e in debits)
    paid = -sum((e.amount for e in ledger if e.amount < 0), ZERO)
    assert sum(applied.values(), ZERO) == min(paid, sum((e.amount for e in debits), ZERO))
    paying_days = len({e.posted_on for e in ledger if e.amount < 0})
    rank = {kind: i for i, kind in enumerate(DEFAULT_ORDER)}
    parts = sorted({(bills.index(e.bill_id), rank[e.kind]) for e in debits})
    for n, part in enumerate(parts):
        of = [e for e in debits if (bills.index(e.bill_id), rank[e.kind]) == part]
        # a later bill, or a later kind of the same bill, gets nothing while this is unpaid
        if any(unpaid[e.entry_id] for e in of):
            later = [e for e in debits if (bills.index(e.bill_id), rank[e.kind]) in parts[n + 1 :]]
            assert all(applied[e.entry_id] == 0 for e in later)
        # each fund of a part gets its proportional share: each day's payments are split
        # by the funds' unpaid parts, half-up per fund, so within half a cent a day
        owed = sum((e.amount for e in of), ZERO)
        given_ = sum((applied[e.entry_id] for e in of), ZERO)
        for fund in {e.fund for e in of}:
            share = given_ * sum((e.amount for e in of if e.fund == fund), ZERO) / owed
            got = sum((applied[e.entry_id] for e in of if e.fund == fund), ZERO)
            assert abs(got - share) <= Decimal("0.005") * paying_days
