"""The daily assessment as the ordinances read (RULES.md GR-LATE, GR-OVERDUE, SU-LATE,
PP-CWU-DELINQUENT, PP-CWU-PENALTY, X-TAXROLL), exact to the cent and the day (pure)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from decimal import Decimal

from billing_support import payment

from billing.domain.assessment import Outcome, TaxNotice, assess_account
from billing.domain.bills import Bill
from billing.domain.ledger import Entry, balance
from billing.domain.terms import Terms

Q2 = (date(2026, 4, 1), date(2026, 7, 1))


def run(
    bill: Bill | list[Bill], ledger: list[Entry], terms: Terms, today: date, marks: list[str] | None = None
) -> Outcome:
    bills = bill if isinstance(bill, list) else [bill]
    return assess_account(
        bills=bills, entries=ledger, marks=marks or [], notices=[], terms=terms, today=today
    )


def assess_every_day(
    bills: list[Bill],
    ledger: list[Entry],
    terms: Terms,
    start: date,
    end: date,
    arriving: dict[date, Entry] | None = None,
    marks: list[str] | None = None,
) -> list[TaxNotice]:
    """Run the assessment every day from start to end, an entry of ``arriving`` joining the
    ledger on its day, keeping what the runs add (ledger extended in place, and ``marks`` if
    given); the notices."""
    notices: list[TaxNotice] = []
    marks = [] if marks is None else marks
    day = start
    while day <= end:
        if arriving and day in arriving:
            ledger.append(arriving[day])
        out = assess_account(
            bills=bills, entries=ledger, marks=marks, notices=notices, terms=terms, today=day
        )
        ledger += out.entries
        marks += out.marks
        notices += out.notices
        day += timedelta(days=1)
    return notices


def test_grafton_bill_unpaid_on_day_21_gets_exactly_one_3_percent_late_charge(grafton_bill, terms) -> None:
    # 5/8" service 45.00 + 23 kgal x 6.50 = 149.50 -> 194.50; 3% = 5.835 -> 5.84 (half-up).
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=23000)
    assert bill.total == Decimal("194.50")
    ledger = bill.entries()
    gr = terms("grafton-sewer", date(2026, 7, 1))
    assert run(bill, ledger, gr, date(2026, 7, 21)).entries == []  # day 20: not yet
    assess_every_day([bill], ledger, gr, date(2026, 7, 1), date(2026, 9, 30))
    late = [e for e in ledger if e.kind == "late_charge"]
    assert [(e.rule_id, e.amount, e.posted_on) for e in late] == [
        ("GR-LATE", Decimal("5.84"), date(2026, 7, 22))
    ]
    assert late[0].fund == "om" and late[0].bill_id == bill.bill_id


def test_grafton_partial_payment_before_day_20_leaves_the_charge_on_the_rest_only(
    grafton_bill, terms
) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=23000)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    # 194.50 - 150.00 paid on day 19 = 44.50 unpaid; 3% = 1.335 -> 1.34.
    ledger = bill.entries() + [payment("GR-1", "P1", date(2026, 7, 20), "150.00")]
    out = run(bill, ledger, gr, date(2026, 7, 22))
    assert [e.amount for e in out.entries] == [Decimal("1.34")]


def test_grafton_small_unpaid_rest_pays_the_50_cent_minimum(grafton_bill, terms) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)  # 45.00
    gr = terms("grafton-sewer", date(2026, 7, 1))
    # 45.00 - 40.00 = 5.00 unpaid; 3% = 0.15, below the 0.50 minimum.
    ledger = bill.entries() + [payment("GR-1", "P1", date(2026, 7, 10), "40.00")]
    assert [e.amount for e in run(bill, ledger, gr, date(2026, 7, 22)).entries] == [Decimal("0.50")]


def test_grafton_payment_dated_day_20_counts_and_day_21_does_not_across_2028_02_29(
    grafton_bill, terms
) -> None:
    # Issued 2028-02-09 (a held account billed late): day 20 is the leap day, day 21 March 1.
    bill = grafton_bill(date(2027, 10, 1), date(2028, 1, 1), bill_date=date(2028, 2, 9), gallons=0)
    gr = terms("grafton-sewer", date(2027, 10, 1))
    on_time = bill.entries() + [payment("GR-1", "P1", date(2028, 2, 29), "45.00")]
    assert run(bill, on_time, gr, date(2028, 3, 1)).entries == []
    late = bill.entries() + [payment("GR-1", "P1", date(2028, 3, 1), "45.00")]
    # 45.00 x 3% = 1.35, on March 1 2028.
    assert [(e.amount, e.posted_on) for e in run(bill, late, gr, date(2028, 3, 1)).entries] == [
        (Decimal("1.35"), date(2028, 3, 1))
    ]


def test_grafton_overdue_notice_on_day_21_and_disconnection_eligible_10_days_later(
    grafton_bill, terms
) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)
    out = run(bill, bill.entries(), terms("grafton-sewer", date(2026, 7, 1)), date(2026, 7, 25))
    assert [(o.overdue_on, o.amount_unpaid, o.disconnection_eligible_on) for o in out.overdue] == [
        (date(2026, 7, 22), Decimal("45.00"), date(2026, 8, 1))
    ]
    again = run(
        bill,
        bill.entries() + out.entries,
        terms("grafton-sewer", date(2026, 7, 1)),
        date(2026, 7, 26),
        out.marks,
    )
    assert not again and again.overdue == []


def test_assessing_twice_on_one_day_changes_nothing_and_a_skipped_day_is_caught_up(
    grafton_bill, terms
) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=23000)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    ledger = bill.entries()
    # The runs of days 21-29 were skipped; the run of day 30 assesses day 21's charge,
    # with the payments dated up to day 20 (a payment dated day 25 does not count).
    ledger.append(payment("GR-1", "P1", date(2026, 7, 26), "100.00"))
    first = run(bill, ledger, gr, date(2026, 7, 31))
    assert [(e.amount, e.posted_on) for e in first.entries] == [(Decimal("5.84"), date(2026, 7, 22))]
    ledger += first.entries
    assert not run(bill, ledger, gr, date(2026, 7, 31), first.marks)


def test_pp_stormwater_bill_unpaid_95_days_after_its_date_carries_3_percent(stormwater_bill, terms) -> None:
    # 2.00 base + 3.00 ERU x 6.00 = 20.00, billed 2026-10-01. Delinquent on day 30
    # (2026-10-31): 1% = 0.20; anniversaries from the 31st: 2026-11-30, 2026-12-31 (X-MONTHS).
    bill = stormwater_bill(date(2026, 9, 1), date(2026, 10, 1), bill_date=date(2026, 10, 1), eru="3.00")
    assert bill.total == Decimal("20.00")
    ledger = bill.entries()
    pp = terms("pleasant-prairie-stormwater", date(2026, 9, 1))
    day_95 = date(2026, 10, 1) + timedelta(days=95)  # 2027-01-04
    marks: list[str] = []
    assess_every_day([bill], ledger, pp, date(2026, 10, 1), day_95, marks=marks)
    penalties = [(e.posted_on, e.amount, e.rule_id) for e in ledger if e.kind == "penalty"]
    assert penalties == [
        (date(2026, 10, 31), Decimal("0.20"), "PP-CWU-PENALTY"),
        (date(2026, 11, 30), Decimal("0.20"), "PP-CWU-PENALTY"),
        (date(2026, 12, 31), Decimal("0.20"), "PP-CWU-PENALTY"),
    ]
    assert sum(p[1] for p in penalties) == Decimal("0.60")  # 3% of 20.00
    assert balance(ledger) == Decimal("20.60")
    assert marks == []


def test_pp_stormwater_delinquency_is_announced_once_and_a_payment_on_day_30_avoids_it(
    stormwater_bill, terms
) -> None:
    bill = stormwater_bill(date(2026, 9, 1), date(2026, 10, 1), bill_date=date(2026, 10, 1))
    pp = terms("pleasant-prairie-stormwater", date(2026, 9, 1))
    out = run(bill, bill.entries(), pp, date(2026, 11, 1))
    assert [(d.delinquent_on, d.amount_delinquent, d.penalty) for d in out.delinquent] == [
        (date(2026, 10, 31), Decimal("8.00"), Decimal("0.08"))
    ]
    paid = bill.entries() + [payment("PPW-1", "P", date(2026, 10, 31), "8.00", "pleasant-prairie-stormwater")]
    assert not run(bill, paid, pp, date(2026, 11, 1))


def test_pp_cwu_penalty_on_a_credited_bill_is_one_percent_of_its_own_principal(
    stormwater_bill, terms
) -> None:
    """PP-CWU-PENALTY, X-ALLOCATION: a credit line reduces only the bill it is on.

    A nonresidential parcel of 10.00 ERU. Bill A, February 2026, dated 03-01, no credit:
    base 2.00 + 10.00 ERU x 6.00 = 62.00. Bill B, March, dated 04-01, with the approved
    30% PP-CWU-CREDIT: 2.00 + 60.00 - 18.00 = 44.00. One payment of 20.00 dated 03-20,
    nothing else paid. The payment goes to the oldest bill: A's principal is
    62.00 - 20.00 = 42.00. B's credit line is B's: B's principal is 44.00.

    - A, delinquent on day 30 (03-31): 1% of 42.00 = 0.42; again on its anniversaries
      04-30 and 05-31 (X-MONTHS): 0.42 each.
    - B, delinquent on 05-01: 1% of 44.00 = 0.44.

    Applied like a payment to the oldest bill, B's 18.00 took A to 24.00 from 04-01
    (0.24 on 04-30 and 05-31) and left B at 62.00 (0.62).
    """
    a = stormwater_bill(
        date(2026, 2, 1), date(2026, 3, 1), bill_date=date(2026, 3, 1), eru="10.00", use="nonresidential"
    )
    b = stormwater_bill(
        date(2026, 3, 1),
        date(2026, 4, 1),
        bill_date=date(2026, 4, 1),
        eru="10.00",
        use="nonresidential",
        credit_percent="30",
    )
    assert (a.total, b.total) == (Decimal("62.00"), Decimal("44.00"))
    assert [(ln.rule_id, ln.amount) for ln in b.lines if ln.amount < 0] == [
        ("PP-CWU-CREDIT", Decimal("-18.00"))
    ]
    pp = terms("pleasant-prairie-stormwater", date(2026, 2, 1))
    ledger = a.entries() + b.entries() + [payment("PPW-1", "P", date(2026, 3, 20), "20.00", pp.tenant)]
    assess_every_day([a, b], ledger, pp, date(2026, 3, 1), date(2026, 5, 31))
    penalties = [(e.bill_id, e.posted_on, e.amount) for e in ledger if e.rule_id == "PP-CWU-PENALTY"]
    assert sorted(penalties) == sorted(
        [
            (a.bill_id, date(2026, 3, 31), Decimal("0.42")),
            (a.bill_id, date(2026, 4, 30), Decimal("0.42")),
            (a.bill_id, date(2026, 5, 31), Decimal("0.42")),
            (b.bill_id, date(2026, 5, 1), Decimal("0.44")),
        ]
    )
    # 62.00 + 44.00 - 20.00 + 3 x 0.42 + 0.44
    assert balance(ledger) == Decimal("87.70")


def test_sullivan_late_charge_is_1_percent_a_month_on_the_unpaid_bill(sullivan_bill, book, terms) -> None:
    bill = sullivan_bill
    su = terms("sullivan-sewer", date(2026, 1, 1))
    ledger = bill.entries()
    assess_every_day([bill], ledger, su, date(2026, 4, 1), date(2026, 6, 30))
    late = [(e.posted_on, e.amount) for e in ledger if e.kind == "late_charge"]
    # 20 kgal x 7.25 = 145.00 + one REC x 180,000 / 1,200 / 4 = 37.50 -> 182.50;
    # 1% = 1.825 -> 1.83 (half-up).
    assert bill.total == Decimal("182.50")
    one = Decimal("1.83")
    # Day 21 (2026-04-22) and its monthly anniversaries while unpaid.
    assert late == [(date(2026, 4, 22), one), (date(2026, 5, 22), one), (date(2026, 6, 22), one)]
    assert all(e.rule_id == "SU-LATE" for e in ledger if e.kind == "late_charge")


def test_tax_roll_timeline_notice_penalty_and_certification(grafton_bill, terms) -> None:
    gr = terms("grafton-sewer", date(2026, 7, 1))
    q2 = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=23000)  # 194.50, due 07-01
    q3 = grafton_bill(date(2026, 7, 1), date(2026, 10, 1), bill_date=date(2026, 10, 1), gallons=23000)
    ledger = q2.entries() + q3.entries()
    nov1 = payment("GR-1", "NOV1", date(2026, 11, 1), "100.00")  # dated Nov 1: counts
    notices = assess_every_day(
        [q2, q3], ledger, gr, date(2026, 7, 1), date(2026, 11, 30), {nov1.posted_on: nov1}
    )
    # Noticed Oct 15: Q2 194.50 + its late charge 5.84 + Q3 194.50 (service before Oct 1,
    # due Oct 1) = 394.84. Q3's late charge (Oct 22) is after the notice: it stays.
    assert [(n.noticed_on, n.arrears) for n in notices] == [(date(2026, 10, 15), Decimal("394.84"))]
    penalty = [e for e in ledger if e.rule_id == "GR-TAXROLL" and e.kind == "penalty"]
    # 394.84 - 100.00 (paid Nov 1, to the noticed arrears first) = 294.84; 10% = 29.484 -> 29.48.
    assert [(e.posted_on, e.amount) for e in penalty] == [(date(2026, 11, 2), Decimal("29.48"))]
    roll = [e for e in ledger if e.kind == "tax_roll"]
    assert [(e.posted_on, e.amount) for e in roll] == [(date(2026, 11, 16), Decimal("-324.32"))]
    # What stays on the account: Q3's late charge of Oct 22 (3% of 194.50 = 5.84).
    assert balance(ledger) == Decimal("5.84")


def test_tax_roll_payments_before_the_notice_stay_with_the_bills_they_paid(grafton_bill, terms) -> None:
    # Q2 (194.50, due 07-01) paid in full on 07-20 (day 19: no late charge); Q3 (194.50, billed and due 10-01) unpaid.
    # X-TAXROLL sends payments to the noticed arrears first only from the notice on: the
    # July payment stays with Q2, so Q3 is noticed on Oct 15 and stays unpaid.
    gr = terms("grafton-sewer", date(2026, 7, 1))
    q2 = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=23000)
    q3 = grafton_bill(date(2026, 7, 1), date(2026, 10, 1), bill_date=date(2026, 10, 1), gallons=23000)
    ledger = q2.entries() + q3.entries() + [payment("GR-1", "JUL", date(2026, 7, 20), "194.50")]
    notices = assess_every_day([q2, q3], ledger, gr, date(2026, 7, 1), date(2026, 11, 30))
    assert [(n.noticed_on, n.arrears) for n in notices] == [(date(2026, 10, 15), Decimal("194.50"))]
    # Q3 unpaid on day 21 (Oct 22): 3% of 194.50 = 5.835 -> 5.84, after the notice: it stays.
    late = [(e.posted_on, e.amount, e.bill_id) for e in ledger if e.kind == "late_charge"]
    assert late == [(date(2026, 10, 22), Decimal("5.84"), q3.bill_id)]
    # Nov 2: 10% of the 194.50 noticed and still unpaid = 19.45; certified Nov 16: 213.95.
    penalty = [(e.posted_on, e.amount) for e in ledger if e.rule_id == "GR-TAXROLL" and e.kind == "penalty"]
    assert penalty == [(date(2026, 11, 2), Decimal("19.45"))]
    roll = [(e.posted_on, e.amount) for e in ledger if e.kind == "tax_roll"]
    assert roll == [(date(2026, 11, 16), Decimal("-213.95"))]
    assert balance(ledger) == Decimal("5.84")


def test_gr_overdue_disconnection_is_never_eligible_before_the_bills_due_date(grafton_bill, terms) -> None:
    """GR-OVERDUE: the overdue notice goes on day 21 and names a disconnection date 10 days
    later, but never one before the bill's due date. A bill dated 2026-07-01 whose due date is
    2026-08-15 (set here by hand: a tenant whose due date falls later than the notice period)
    is overdue on 07-22 and disconnectable only from 08-15, not from 08-01."""
    bill = replace(grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0), due_date=date(2026, 8, 15))
    gr = terms("grafton-sewer", date(2026, 7, 1))
    out = run(bill, bill.entries(), gr, date(2026, 7, 25))
    assert [(o.overdue_on, o.disconnection_eligible_on) for o in out.overdue] == [
        (date(2026, 7, 22), date(2026, 8, 15))
    ]
    ledger = bill.entries() + out.entries
    assert run(bill, ledger, gr, date(2026, 8, 14), out.marks).eligible == []
    eligible = run(bill, ledger, gr, date(2026, 8, 15), out.marks).eligible
    assert [e.eligible_on for e in eligible] == [date(2026, 8, 15)]
