"""GR-OVERDUE disconnection eligibility with payment arrangements, and back-dated payments
that undo late charges they would have prevented (GR-LATE, X-DUE, X-IMMUTABLE), pure and
hand-worked to the cent and the day."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from billing_support import arrangement, payment

from billing.domain.arrangements import Arrangement, ArrangementRefused
from billing.domain.assessment import Outcome, assess_account, late_charge_corrections
from billing.domain.bills import Bill
from billing.domain.ledger import Entry, allocate, balance, trial_balance
from billing.domain.terms import Terms

Q2 = (date(2026, 4, 1), date(2026, 7, 1))


def daily(
    bills: list[Bill],
    ledger: list[Entry],
    terms: Terms,
    start: date,
    end: date,
    marks: list[str],
    arrangements: list[Arrangement] | None = None,
    every: int = 1,
) -> list[Outcome]:
    """Run the assessment from start to end (every ``every`` days), keeping what it adds."""
    outs = []
    day = start
    while day <= end:
        out = assess_account(
            bills=bills,
            entries=ledger,
            marks=marks,
            notices=[],
            terms=terms,
            today=day,
            arrangements=arrangements or [],
        )
        ledger.extend(out.entries)
        marks.extend(out.marks)
        outs.append(out)
        day += timedelta(days=every)
    return outs


def eligible(outs: list[Outcome]) -> list[tuple[date, Decimal, str, str | None]]:
    return [(e.eligible_on, e.amount_unpaid, e.reason, e.arrangement_id) for o in outs for e in o.eligible]


# --- disconnection eligibility --------------------------------------------------------------


def test_unpaid_10_days_after_the_overdue_notice_is_eligible_once_on_a_saturday_month_start(
    grafton_bill, terms
) -> None:
    # Bill 2026-07-01 (45.00); overdue notice day 21 = Wed 2026-07-22; eligible 10 days
    # later = Sat 2026-08-01 (payments dated up to Fri 07-31 count). Published once.
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)
    ledger, marks = bill.entries(), []
    outs = daily(
        [bill], ledger, terms("grafton-sewer", date(2026, 7, 1)), date(2026, 7, 1), date(2026, 8, 20), marks
    )
    assert eligible(outs) == [(date(2026, 8, 1), Decimal("45.00"), "notice_period_ended", None)]
    assert f"DISCONNECT-{bill.bill_id}-2026-08-01" in marks


def test_paid_within_the_10_days_is_never_eligible_and_a_payment_on_day_31_is_too_late(
    grafton_bill, terms
) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    # 45.00 + the 1.35 late charge of day 21, paid on the last of the 10 days (07-31).
    in_time = bill.entries() + [payment("GR-1", "P1", date(2026, 7, 31), "46.35")]
    assert eligible(daily([bill], in_time, gr, date(2026, 7, 1), date(2026, 8, 20), [])) == []
    # Paid on 08-01: eligible that day (the day's payments count from the next day) ...
    late = bill.entries() + [payment("GR-1", "P1", date(2026, 8, 1), "46.35")]
    assert [e[0] for e in eligible(daily([bill], late, gr, date(2026, 7, 1), date(2026, 8, 20), []))] == [
        date(2026, 8, 1)
    ]
    # ... but a run that first comes on 08-02 finds it paid: nothing to publish.
    late = bill.entries() + [payment("GR-1", "P1", date(2026, 8, 1), "46.35")]
    marks: list[str] = []
    daily([bill], late, gr, date(2026, 7, 22), date(2026, 7, 22), marks)
    assert eligible(daily([bill], late, gr, date(2026, 8, 2), date(2026, 8, 2), marks)) == []


def test_an_arrangement_kept_holds_eligibility_off_and_a_missed_instalment_makes_it_eligible_the_next_day(
    grafton_bill, terms
) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    # Arranged on day 27 (07-28): 23.00 by Fri 08-14, 23.35 by Tue 09-15 (45.00 + 1.35 late).
    arr = arrangement(
        date(2026, 7, 28),
        (date(2026, 8, 14), "23.00"),
        (date(2026, 9, 15), "23.35"),
        end_on=date(2026, 9, 15),
    )
    ledger = bill.entries() + [payment("GR-1", "P1", date(2026, 8, 14), "23.00")]
    marks: list[str] = []
    outs = daily([bill], ledger, gr, date(2026, 7, 1), date(2026, 9, 30), marks, [arr])
    # The second instalment is missed: broken on 09-16, eligible from that day. The bill's
    # charges unpaid the day before (X-ALLOCATION: within the bill its 1.35 late charge of
    # 07-22 is paid first): 23.00 - 1.35 = 21.65 to the charges, 45.00 - 21.65 = 23.35.
    assert eligible(outs) == [(date(2026, 9, 16), Decimal("23.35"), "arrangement_broken", "ARR-1")]
    assert arr.broken_on(ledger) == date(2026, 9, 16)
    assert arr.status_on(date(2026, 9, 1), ledger) == "active"
    assert arr.status_on(date(2026, 9, 16), ledger) == "broken"


def test_an_instalment_paid_ahead_counts_and_one_short_by_a_cent_breaks_across_2028_02_29(
    grafton_bill, terms
) -> None:
    # Bill 2028-01-08 (a held account billed late): overdue 01-29, eligible Tue 02-08.
    bill = grafton_bill(date(2027, 10, 1), date(2028, 1, 1), bill_date=date(2028, 1, 8), gallons=0)
    gr = terms("grafton-sewer", date(2027, 10, 1))
    # Arranged Sat 02-05: 20.00 by Mon 02-28, 26.35 by Fri 03-31.
    arr = arrangement(
        date(2028, 2, 5), (date(2028, 2, 28), "20.00"), (date(2028, 3, 31), "26.35"), end_on=date(2028, 3, 31)
    )
    # 10.00 on 02-10 and 9.99 on 02-28: 19.99 < 20.00 due by 02-28, so broken on the leap day.
    short = bill.entries() + [
        payment("GR-1", "P1", date(2028, 2, 10), "10.00"),
        payment("GR-1", "P2", date(2028, 2, 28), "9.99"),
    ]
    outs = daily([bill], short, gr, date(2028, 1, 8), date(2028, 3, 10), [], [arr])
    # The 1.35 late charge of 01-29 is paid first (X-ALLOCATION): 45.00 - (19.99 - 1.35)
    # = 26.36 of the charges unpaid on 02-28.
    assert eligible(outs) == [(date(2028, 2, 29), Decimal("26.36"), "arrangement_broken", "ARR-1")]
    # Paid ahead: 20.00 on 02-10 keeps it; nothing published through March.
    ahead = bill.entries() + [payment("GR-1", "P1", date(2028, 2, 10), "20.00")]
    assert eligible(daily([bill], ahead, gr, date(2028, 1, 8), date(2028, 3, 31), [], [arr])) == []


def test_an_arrangement_made_after_eligibility_stops_it_and_its_cancellation_starts_it_again(
    grafton_bill, terms
) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    ledger, marks = bill.entries(), []
    first = daily([bill], ledger, gr, date(2026, 7, 1), date(2026, 8, 2), marks)
    assert [e[0] for e in eligible(first)] == [date(2026, 8, 1)]
    arr = arrangement(date(2026, 8, 3), (date(2026, 9, 30), "46.35"), end_on=date(2026, 9, 30))
    assert eligible(daily([bill], ledger, gr, date(2026, 8, 3), date(2026, 8, 19), marks, [arr])) == []
    cancelled = arr.cancel(date(2026, 8, 20), "supervisor", "customer asked to end it")
    again = daily([bill], ledger, gr, date(2026, 8, 20), date(2026, 8, 31), marks, [cancelled])
    assert eligible(again) == [(date(2026, 8, 20), Decimal("45.00"), "arrangement_cancelled", "ARR-1")]
    with pytest.raises(ArrangementRefused, match="^arrangement_id"):
        cancelled.cancel(date(2026, 8, 21), "supervisor", "twice")


def withdrawn(outs: list[Outcome]) -> list[tuple[date, date, bool, str, Decimal, str | None]]:
    return [
        (w.eligible_on, w.ended_on, w.never_held, w.reason, w.amount_unpaid, w.arrangement_id)
        for o in outs
        for w in o.withdrawn
    ]


def test_a_payment_dated_before_the_eligibility_and_posted_after_it_withdraws_it_as_never_held(
    grafton_bill, terms
) -> None:
    # Eligible Sat 2026-08-01 with 45.00 + 1.35 late charge unpaid; on Wed 08-05 the lockbox
    # brings 46.35 paid on Fri 07-31, within the 10 days: the eligibility never held.
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    ledger, marks = bill.entries(), []
    assert [e[0] for e in eligible(daily([bill], ledger, gr, date(2026, 7, 1), date(2026, 8, 4), marks))] == [
        date(2026, 8, 1)
    ]
    ledger.append(payment("GR-1", "LB-9", date(2026, 7, 31), "46.35"))
    outs = daily([bill], ledger, gr, date(2026, 8, 5), date(2026, 8, 31), marks)
    assert withdrawn(outs) == [(date(2026, 8, 1), date(2026, 8, 1), True, "paid", Decimal("0.00"), None)]
    assert f"WITHDRAWN-{bill.bill_id}-2026-08-01" in marks and eligible(outs) == []


def test_a_late_payment_or_an_arrangement_made_later_withdraws_the_eligibility_from_that_day(
    grafton_bill, terms
) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    # Paid in full on Mon 08-10: it counts from Tue 08-11, where eligibility ends (it held
    # 08-01 to 08-10: not published in error). Withdrawn by the run of 08-11, once.
    ledger, marks = bill.entries() + [payment("GR-1", "P1", date(2026, 8, 10), "46.35")], []
    outs = daily([bill], ledger, gr, date(2026, 7, 1), date(2026, 8, 31), marks)
    assert withdrawn(outs) == [(date(2026, 8, 1), date(2026, 8, 11), False, "paid", Decimal("0.00"), None)]
    # Arranged on Mon 08-03 (nothing paid): withdrawn from that day, the bill's 45.00 of
    # charges still unpaid (as DisconnectionEligible counts it: the late charge apart).
    arr = arrangement(date(2026, 8, 3), (date(2026, 9, 30), "46.35"), end_on=date(2026, 9, 30))
    ledger, marks = bill.entries(), []
    daily([bill], ledger, gr, date(2026, 7, 1), date(2026, 8, 2), marks)
    outs = daily([bill], ledger, gr, date(2026, 8, 3), date(2026, 8, 19), marks, [arr])
    assert withdrawn(outs) == [
        (date(2026, 8, 1), date(2026, 8, 3), False, "arranged", Decimal("45.00"), "ARR-1")
    ]
    # Its cancellation on 08-20 is a new eligibility (its own event), not the old one again.
    cancelled = arr.cancel(date(2026, 8, 20), "supervisor", "customer asked to end it")
    again = daily([bill], ledger, gr, date(2026, 8, 20), date(2026, 8, 31), marks, [cancelled])
    assert [e[0] for e in eligible(again)] == [date(2026, 8, 20)] and withdrawn(again) == []


def test_an_arrangement_that_ends_with_the_bill_unpaid_makes_it_eligible_the_day_after_its_end(
    grafton_bill, terms
) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    arr = arrangement(date(2026, 7, 25), (date(2026, 8, 10), "10.00"), end_on=date(2026, 8, 31))
    ledger = bill.entries() + [payment("GR-1", "P1", date(2026, 8, 10), "10.00")]
    outs = daily([bill], ledger, gr, date(2026, 7, 1), date(2026, 9, 10), [], [arr])
    # Kept (10.00 by 08-10), which pays the 1.35 late charge of 07-22 first (X-ALLOCATION)
    # and 8.65 of the charges: 45.00 - 8.65 = 36.35 still unpaid when it ends on Mon 08-31.
    assert eligible(outs) == [(date(2026, 9, 1), Decimal("36.35"), "arrangement_ended", "ARR-1")]


def test_skipped_days_are_caught_up_with_the_day_eligibility_began_and_a_rerun_adds_nothing(
    grafton_bill, terms
) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    arr = arrangement(date(2026, 7, 28), (date(2026, 8, 14), "46.35"), end_on=date(2026, 8, 31))
    ledger, marks = bill.entries(), []
    daily([bill], ledger, gr, date(2026, 7, 1), date(2026, 7, 31), marks, [arr])
    # No run from 08-01 to 08-19; the instalment of 08-14 was missed: broken on 08-15.
    once = daily([bill], ledger, gr, date(2026, 8, 20), date(2026, 8, 20), marks, [arr])
    assert eligible(once) == [(date(2026, 8, 15), Decimal("45.00"), "arrangement_broken", "ARR-1")]
    assert not daily([bill], ledger, gr, date(2026, 8, 20), date(2026, 8, 20), marks, [arr])[0]


def test_an_arrangement_covers_the_bills_issued_by_the_day_it_was_made_not_later_ones(
    grafton_bill, terms
) -> None:
    q2 = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)
    q3 = grafton_bill(date(2026, 7, 1), date(2026, 10, 1), bill_date=date(2026, 10, 1), gallons=0)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    arr = arrangement(date(2026, 7, 28), (date(2026, 12, 15), "46.35"), end_on=date(2026, 12, 31))
    ledger = q2.entries() + q3.entries()
    outs = daily([q2, q3], ledger, gr, date(2026, 7, 1), date(2026, 11, 10), [], [arr], every=1)
    # Q3 (10-01): overdue Thu 10-22, eligible Sun 11-01, the arrangement notwithstanding.
    found = [(e.bill.bill_id, e.eligible_on) for o in outs for e in o.eligible]
    assert found == [(q3.bill_id, date(2026, 11, 1))]


@pytest.mark.parametrize(
    ("instalments", "end_on", "field"),
    [
        ([], date(2026, 9, 1), "instalments"),
        ([(date(2026, 7, 27), "10.00")], date(2026, 9, 1), r"instalments\[0\].due_on"),
        (
            [(date(2026, 8, 1), "10.00"), (date(2026, 8, 1), "5.00")],
            date(2026, 9, 1),
            r"instalments\[1\].due_on",
        ),
        ([(date(2026, 8, 1), "0.00")], date(2026, 9, 1), r"instalments\[0\].amount"),
        ([(date(2026, 8, 1), "1.005")], date(2026, 9, 1), r"instalments\[0\].amount"),
        ([(date(2026, 8, 31), "10.00")], date(2026, 8, 30), "end_on"),
        ([(date(2026, 8, 31), "10.00")], date(2036, 8, 30), "end_on"),
    ],
)
def test_an_arrangement_that_cannot_be_kept_is_refused_naming_the_field(instalments, end_on, field) -> None:
    with pytest.raises(ArrangementRefused, match=f"^{field}:"):
        arrangement(date(2026, 7, 28), *instalments, end_on=end_on)


# --- back-dated payments --------------------------------------------------------------------


def test_a_backdated_payment_in_full_reverses_the_late_charge_it_would_have_prevented(
    grafton_bill, terms
) -> None:
    # 194.50 bill of Wed 2026-07-01; GR-LATE 3% = 5.84 assessed on day 21 (07-22); the
    # lockbox file posted Fri 07-24 shows 194.50 paid on day 19 (07-20).
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=23000)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    ledger: list[Entry] = bill.entries()
    daily([bill], ledger, gr, date(2026, 7, 1), date(2026, 7, 23), [])
    late = [e for e in ledger if e.kind == "late_charge"]
    assert [(e.amount, e.posted_on) for e in late] == [(Decimal("5.84"), date(2026, 7, 22))]
    paid = payment("GR-1", "LB-7", date(2026, 7, 20), "194.50")
    ledger.append(paid)
    fixes = late_charge_corrections(
        bills=[bill], entries=ledger, terms=gr, payments=[paid], today=date(2026, 7, 24)
    )
    assert [(e.kind, e.amount, e.posted_on, e.reference, e.bill_id, e.rule_id) for e in fixes] == [
        ("adjustment", Decimal("-5.84"), date(2026, 7, 24), late[0].entry_id, bill.bill_id, "GR-LATE")
    ]
    assert "LB-7 dated 2026-07-20" in fixes[0].description and "reduced to 0.00" in fixes[0].description
    ledger += fixes
    # 194.50 + 5.84 - 194.50 - 5.84 = 0, the ledger balanced, and the charge entry untouched.
    assert balance(ledger) == Decimal("0.00") and sum(trial_balance(ledger).values()) == 0
    assert late[0] in ledger
    # The same payment again reverses nothing more.
    assert (
        late_charge_corrections(
            bills=[bill], entries=ledger, terms=gr, payments=[paid], today=date(2026, 7, 25)
        )
        == []
    )


def test_a_backdated_partial_payment_leaves_the_late_charge_of_the_unpaid_rest(grafton_bill, terms) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=23000)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    ledger: list[Entry] = bill.entries()
    daily([bill], ledger, gr, date(2026, 7, 1), date(2026, 7, 31), [])
    charge = next(e for e in ledger if e.kind == "late_charge")
    # 150.00 paid on day 19, posted Mon 08-03 (after July's month end): 194.50 - 150.00 =
    # 44.50 unpaid; 3% = 1.335 -> 1.34; so 5.84 - 1.34 = 4.50 is reversed.
    paid = payment("GR-1", "LB-8", date(2026, 7, 20), "150.00")
    ledger.append(paid)
    fixes = late_charge_corrections(
        bills=[bill], entries=ledger, terms=gr, payments=[paid], today=date(2026, 8, 3)
    )
    assert [(e.amount, e.posted_on) for e in fixes] == [(Decimal("-4.50"), date(2026, 8, 3))]
    ledger += fixes
    # The reversal goes to the charge it names: 1.34 of it and 44.50 of the bill stay unpaid.
    unpaid = allocate(ledger)
    assert unpaid[charge.entry_id] == Decimal("1.34")
    assert sum(unpaid[e.entry_id] for e in bill.entries()) == Decimal("44.50")
    assert balance(ledger) == Decimal("45.84")


def test_a_backdated_partial_payment_leaving_a_few_cents_keeps_the_50_cent_minimum(
    grafton_bill, terms
) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)  # 45.00
    gr = terms("grafton-sewer", date(2026, 7, 1))
    ledger: list[Entry] = bill.entries()
    daily([bill], ledger, gr, date(2026, 7, 1), date(2026, 7, 22), [])
    # 45.00 x 3% = 1.35 assessed; 44.60 paid on day 10: 0.40 unpaid, 3% = 0.01 -> the 0.50
    # minimum; 1.35 - 0.50 = 0.85 reversed.
    paid = payment("GR-1", "LB-9", date(2026, 7, 11), "44.60")
    ledger.append(paid)
    fixes = late_charge_corrections(
        bills=[bill], entries=ledger, terms=gr, payments=[paid], today=date(2026, 7, 23)
    )
    assert [e.amount for e in fixes] == [Decimal("-0.85")]


def test_a_payment_dated_on_or_after_the_day_the_charge_fell_reverses_nothing(grafton_bill, terms) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)
    gr = terms("grafton-sewer", date(2026, 7, 1))
    ledger: list[Entry] = bill.entries()
    daily([bill], ledger, gr, date(2026, 7, 1), date(2026, 7, 22), [])
    paid = payment("GR-1", "LB-10", date(2026, 7, 22), "46.35")  # day 21: the charge stands
    ledger.append(paid)
    assert (
        late_charge_corrections(
            bills=[bill], entries=ledger, terms=gr, payments=[paid], today=date(2026, 7, 23)
        )
        == []
    )


def test_a_payment_dated_on_the_leap_day_reverses_the_late_charge_of_march_1_2028(
    grafton_bill, terms
) -> None:
    # Issued 2028-02-09: day 20 is 2028-02-29, the charge (45.00 x 3% = 1.35) falls Wed 03-01.
    bill = grafton_bill(date(2027, 10, 1), date(2028, 1, 1), bill_date=date(2028, 2, 9), gallons=0)
    gr = terms("grafton-sewer", date(2027, 10, 1))
    ledger: list[Entry] = bill.entries()
    daily([bill], ledger, gr, date(2028, 2, 9), date(2028, 3, 2), [])
    assert [(e.amount, e.posted_on) for e in ledger if e.kind == "late_charge"] == [
        (Decimal("1.35"), date(2028, 3, 1))
    ]
    paid = payment("GR-1", "LB-11", date(2028, 2, 29), "45.00")
    ledger.append(paid)
    fixes = late_charge_corrections(
        bills=[bill], entries=ledger, terms=gr, payments=[paid], today=date(2028, 3, 6)
    )
    assert [(e.amount, e.posted_on) for e in fixes] == [(Decimal("-1.35"), date(2028, 3, 6))]
    ledger += fixes
    assert balance(ledger) == Decimal("0.00")


def test_a_backdated_payment_reverses_only_the_pp_penalties_of_anniversaries_after_its_date(
    stormwater_bill, terms
) -> None:
    # 2.00 + 3.00 ERU x 6.00 = 20.00 billed 2026-10-01; PP-CWU-PENALTY 1% = 0.20 on Sat 10-31
    # (payments dated up to that day count), Mon 11-30 and Thu 12-31.
    bill = stormwater_bill(date(2026, 9, 1), date(2026, 10, 1), bill_date=date(2026, 10, 1), eru="3.00")
    pp = terms("pleasant-prairie-stormwater", date(2026, 9, 1))
    ledger: list[Entry] = bill.entries()
    daily([bill], ledger, pp, date(2026, 10, 1), date(2027, 1, 4), [])
    penalties = [e for e in ledger if e.kind == "penalty"]
    assert [(e.posted_on, e.amount) for e in penalties] == [
        (date(2026, 10, 31), Decimal("0.20")),
        (date(2026, 11, 30), Decimal("0.20")),
        (date(2026, 12, 31), Decimal("0.20")),
    ]
    # 20.00 paid Sun 11-15, posted Tue 2027-01-05: the bill was paid before the 11-30 and
    # 12-31 anniversaries (0.20 each reversed); the 10-31 penalty stands.
    paid = payment("PPW-1", "LB-12", date(2026, 11, 15), "20.00", "pleasant-prairie-stormwater")
    ledger.append(paid)
    fixes = late_charge_corrections(
        bills=[bill], entries=ledger, terms=pp, payments=[paid], today=date(2027, 1, 5)
    )
    assert [(e.reference, e.amount) for e in fixes] == [
        (penalties[1].entry_id, Decimal("-0.20")),
        (penalties[2].entry_id, Decimal("-0.20")),
    ]
    ledger += fixes
    assert balance(ledger) == Decimal("0.20")  # 20.00 + 0.60 - 20.00 - 0.40
