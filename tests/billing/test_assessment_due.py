"""The assessment runs in full only on the days its mark names (issue 7), and that changes
nothing: every charge, penalty, notice, eligibility and withdrawal comes on the same day as
with a full run every day (pure; ``assessment.next_action_on``, ``assessment_due``).

Each scenario is a list of writes (a bill issued, a payment posted, perhaps back-dated, an
arrangement made or cancelled), each landing on a day before that day's run. It is played
twice: assessing every day, and assessing only when the mark says so (a write since the last
full run, or the day that run computed). The two logs of what was found, day by day, must
be equal, and the marked run must skip most days."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import Decimal

from billing_support import arrangement, payment

from billing.domain.arrangements import Arrangement
from billing.domain.assessment import Outcome, assess_account, next_action_on
from billing.domain.assessment_due import FULL_RUN_AT_LEAST_EVERY, DueMark, next_run_on
from billing.domain.bills import Bill
from billing.domain.ledger import Entry
from billing.domain.terms import Terms

Q2 = (date(2026, 4, 1), date(2026, 7, 1))


@dataclass(frozen=True)
class Write:
    on: date  # the day it is written, before that day's run
    bill: Bill | None = None
    entry: Entry | None = None
    arrangement: Arrangement | None = None  # replaces the one with the same id


def play(
    writes: Sequence[Write], terms: Terms, start: date, end: date, *, marked: bool
) -> tuple[list[tuple[date, Outcome]], int]:
    """(what each run found, by day; how many full runs)."""
    bills: list[Bill] = []
    ledger: list[Entry] = []
    marks: set[str] = set()
    notices: list = []
    arrangements: dict[str, Arrangement] = {}
    log: list[tuple[date, Outcome]] = []
    runs, next_on, pending = 0, None, True
    day = start
    while day <= end:
        for w in (w for w in writes if w.on == day):
            pending = True
            if w.bill is not None:
                bills.append(w.bill)
                ledger += w.bill.entries()
            if w.entry is not None:
                ledger.append(w.entry)
            if w.arrangement is not None:
                arrangements[w.arrangement.arrangement_id] = w.arrangement
        if not marked or pending or next_on is None or next_on <= day:
            runs += 1
            # the account as the run reads it; the run's additions extend these in place,
            # so the next-day question is asked of the account as it stands after the run
            account = dict(
                bills=bills,
                entries=ledger,
                marks=marks,
                notices=notices,
                terms=terms,
                today=day,
                arrangements=list(arrangements.values()),
            )
            out = assess_account(**account)
            ledger += out.entries
            marks |= set(out.marks)
            notices += out.notices
            if out:
                log.append((day, out))
            after = next_action_on(**account)
            next_on, pending = next_run_on(day, [after]), False
        day += timedelta(days=1)
    return log, runs


def same_days_fewer_runs(
    writes: Sequence[Write], terms: Terms, start: date, end: date
) -> tuple[list[tuple[date, Outcome]], int]:
    every_day, days = play(writes, terms, start, end, marked=False)
    by_mark, runs = play(writes, terms, start, end, marked=True)
    assert by_mark == every_day
    assert days == (end - start).days + 1
    return by_mark, runs


def found(log: list[tuple[date, Outcome]]) -> list[tuple[date, str]]:
    """A readable digest: each day with the entries and marks it added."""
    return [(d, e.entry_id) for d, o in log for e in o.entries] + [(d, m) for d, o in log for m in o.marks]


def test_grafton_late_charge_overdue_eligibility_and_a_withdrawal_come_on_their_days(
    grafton_bill: Callable[..., Bill], terms: Callable[[str, date], Terms]
) -> None:
    q2 = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=23000)  # 194.50
    q4 = grafton_bill(date(2026, 10, 1), date(2027, 1, 1), bill_date=date(2027, 1, 1), gallons=0)  # 45.00
    writes = [
        Write(date(2026, 7, 1), bill=q2),
        # Paid in full on 08-20 (after eligibility began 08-01): withdrawn from 08-21.
        Write(date(2026, 8, 20), entry=payment("GR-1", "P1", date(2026, 8, 20), "200.34")),
        Write(date(2027, 1, 1), bill=q4),
        # Q4 paid on 01-30, before its eligibility (02-01), but posted only on 02-05.
        Write(date(2027, 2, 5), entry=payment("GR-1", "P2", date(2027, 1, 30), "46.35")),
    ]
    gr = terms("grafton-sewer", date(2026, 7, 1))
    log, runs = same_days_fewer_runs(writes, gr, date(2026, 7, 1), date(2027, 6, 30))
    digest = found(log)
    # 194.50 x 3% = 5.835 -> 5.84 on day 21 (07-22); overdue the same day, eligible 08-01.
    assert (date(2026, 7, 22), f"{q2.bill_id}-LATE_CHARGE-000") in digest
    assert (date(2026, 8, 1), f"DISCONNECT-{q2.bill_id}-2026-08-01") in digest
    assert (date(2026, 8, 21), f"WITHDRAWN-{q2.bill_id}-2026-08-01") in digest
    # Q4: 45.00 x 3% = 1.35 on 01-22; eligible 02-01, withdrawn as never held when the
    # payment dated before it is posted.
    assert (date(2027, 1, 22), f"{q4.bill_id}-LATE_CHARGE-000") in digest
    assert (date(2027, 2, 1), f"DISCONNECT-{q4.bill_id}-2027-02-01") in digest
    assert [(d, w.never_held) for d, o in log for w in o.withdrawn if w.bill == q4] == [
        (date(2027, 2, 5), True)
    ]
    assert runs < 40  # of 365 days


def test_an_arrangement_broken_or_cancelled_makes_the_bill_eligible_again_on_its_day(
    grafton_bill: Callable[..., Bill], terms: Callable[[str, date], Terms]
) -> None:
    bill = grafton_bill(*Q2, bill_date=date(2026, 7, 1), gallons=0)  # 45.00 (+1.35 late)
    kept_then_missed = arrangement(
        date(2026, 7, 28),
        (date(2026, 8, 14), "23.00"),
        (date(2026, 9, 15), "23.35"),
        end_on=date(2026, 9, 15),
    )
    writes = [
        Write(date(2026, 7, 1), bill=bill),
        Write(date(2026, 7, 28), arrangement=kept_then_missed),
        Write(date(2026, 8, 14), entry=payment("GR-1", "P1", date(2026, 8, 14), "23.00")),
    ]
    log, runs = same_days_fewer_runs(
        writes, terms("grafton-sewer", date(2026, 7, 1)), date(2026, 7, 1), date(2026, 12, 31)
    )
    # The second instalment is missed: broken on 09-16, eligible from that day.
    assert [d for d, o in log if o.eligible] == [date(2026, 9, 16)]
    assert runs < 30

    # Made after eligibility began (withdrawn the day it is made), then cancelled 09-01.
    made = arrangement(date(2026, 8, 5), (date(2026, 10, 1), "46.35"), end_on=date(2026, 10, 1), aid="ARR-2")
    cancelled = made.cancel(date(2026, 9, 1), "clerk", "customer asked")
    writes = [
        Write(date(2026, 7, 1), bill=bill),
        Write(date(2026, 8, 5), arrangement=made),
        Write(date(2026, 9, 1), arrangement=cancelled),
    ]
    log, _ = same_days_fewer_runs(
        writes, terms("grafton-sewer", date(2026, 7, 1)), date(2026, 7, 1), date(2026, 12, 31)
    )
    assert [(d, e.eligible_on, e.reason) for d, o in log for e in o.eligible] == [
        (date(2026, 8, 1), date(2026, 8, 1), "notice_period_ended"),
        (date(2026, 9, 1), date(2026, 9, 1), "arrangement_cancelled"),
    ]
    # Withdrawn the day it is made; the X-TAXROLL certification of 11-16 takes the arrears
    # off the account, so the second eligibility ends the next day ("paid").
    assert [(d, w.reason) for d, o in log for w in o.withdrawn] == [
        (date(2026, 8, 5), "arranged"),
        (date(2026, 11, 17), "paid"),
    ]


def test_sullivan_monthly_late_charges_stop_being_due_once_the_bill_is_paid(
    sullivan_bill: Bill, terms: Callable[[str, date], Terms]
) -> None:
    bill = sullivan_bill
    writes = [
        Write(date(2026, 4, 1), bill=bill),
        Write(date(2026, 7, 10), entry=payment("SU-1", "P1", date(2026, 7, 10), "300.00", "sullivan-sewer")),
    ]
    su = terms("sullivan-sewer", date(2026, 1, 1))
    log, runs = same_days_fewer_runs(writes, su, date(2026, 4, 1), date(2027, 3, 31))
    # 182.50 x 1% = 1.825 -> 1.83 on day 21 and each monthly anniversary while unpaid.
    assert [(d, e.amount) for d, o in log for e in o.entries] == [
        (date(2026, 4, 22), Decimal("1.83")),
        (date(2026, 5, 22), Decimal("1.83")),
        (date(2026, 6, 22), Decimal("1.83")),
    ]
    # Full runs: the bill day, each charge day and the 28-day bound between two of them
    # (30 or 31 days apart), the payment's day and the day after it, then one every 28 days
    # (the bound) for a paid bill: about 21 of 365 days.
    assert runs <= 10 + 365 // FULL_RUN_AT_LEAST_EVERY.days


def test_pleasant_prairie_penalties_delinquency_and_the_tax_roll_come_on_their_days(
    stormwater_bill: Callable[..., Bill], terms: Callable[[str, date], Terms]
) -> None:
    q2 = stormwater_bill(*Q2, bill_date=date(2026, 7, 1))
    q3 = stormwater_bill(date(2026, 7, 1), date(2026, 10, 1), bill_date=date(2026, 10, 1))
    writes = [
        Write(date(2026, 7, 1), bill=q2),
        Write(date(2026, 10, 1), bill=q3),
        # Part of it paid on Nov 1 (counts for the tax roll penalty, X-TAXROLL).
        Write(
            date(2026, 11, 1),
            entry=payment("PPW-1", "P1", date(2026, 11, 1), "5.00", "pleasant-prairie-stormwater"),
        ),
    ]
    pp = terms("pleasant-prairie-stormwater", date(2026, 7, 1))
    log, runs = same_days_fewer_runs(writes, pp, date(2026, 7, 1), date(2027, 12, 31))
    digest = found(log)
    assert (date(2026, 7, 31), f"{q2.bill_id}-PENALTY-000") in digest  # day 30: delinquent
    assert [d for d, o in log if o.delinquent] == [date(2026, 7, 31), date(2026, 10, 31)]
    assert [d for d, o in log if o.notices] == [date(2026, 10, 15), date(2027, 10, 15)]
    assert (date(2026, 11, 2), "TAXROLL-2026-PENALTY") in digest
    assert (date(2026, 11, 16), "TAXROLL-2026-CERTIFIED") in digest
    assert runs < 120  # of 549 days: the monthly penalty days and the tax roll's


def test_a_bill_issued_late_and_a_payment_dated_before_eligibility_posted_after_it(
    grafton_bill: Callable[..., Bill], terms: Callable[[str, date], Terms]
) -> None:
    # A held account billed on 2028-02-09 (its bill date): day 21 is 2028-03-01 (leap year).
    bill = grafton_bill(date(2027, 10, 1), date(2028, 1, 1), bill_date=date(2028, 2, 9), gallons=0)
    writes = [
        Write(date(2028, 2, 9), bill=bill),
        # Dated 03-10 (before eligibility on 03-11), posted 03-20: withdrawn as never held.
        Write(date(2028, 3, 20), entry=payment("GR-1", "P1", date(2028, 3, 10), "46.35")),
    ]
    log, _ = same_days_fewer_runs(
        writes, terms("grafton-sewer", date(2027, 10, 1)), date(2028, 1, 1), date(2028, 6, 30)
    )
    assert [(d, w.eligible_on, w.never_held) for d, o in log for w in o.withdrawn] == [
        (date(2028, 3, 20), date(2028, 3, 11), True)
    ]


def test_the_mark_says_due_for_a_tenant_pending_never_assessed_or_reached() -> None:
    mark = DueMark(
        next_on={"a": date(2026, 3, 10), "b": date(2026, 3, 10)}, pending=frozenset({"b"}), writes=3
    )
    assert not mark.due("a", date(2026, 3, 9)) and mark.due("a", date(2026, 3, 10))
    assert mark.due("b", date(2026, 3, 1))  # written since the last full run
    assert mark.due("c", date(2026, 3, 1))  # never assessed in full
    # The next full run: the earliest candidate after today, at the latest 28 days on.
    assert next_run_on(date(2026, 3, 1), [None, date(2026, 2, 1)]) == date(2026, 3, 2)
    assert next_run_on(date(2026, 3, 1), [date(2026, 5, 1)]) == date(2026, 3, 29)
    assert replace(mark, pending=frozenset()).due("b", date(2026, 3, 9)) is False
