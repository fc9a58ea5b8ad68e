"""The daily assessment of one account (pure): late charges, penalties, overdue,
delinquency and the tax roll, exact to the cent and the day.

Every assessment point is computed from the bills, the ledger and ``today``, so the
assessment is idempotent and catches up: each point has a deterministic id (a ledger
entry id or a mark), a point already done is skipped, and every point that fell on or
before ``today`` is assessed, each with the payments dated up to its own cut-off (X-DUE:
payments count on their ``paid_on`` date).

- GR-LATE: 3% (minimum 0.50) once, on the bill's own charges unpaid after 20 days
  (payments dated up to day 20 count), falling on day 21. SU-LATE per the tariff: 1% on
  day 21 and on each monthly anniversary of it while unpaid.
- GR-OVERDUE: ``BillOverdue`` on day 21 if unpaid; disconnection eligible 10 days later.
- PP-CWU-DELINQUENT / PP-CWU-PENALTY: delinquent on day 30 (payments dated up to day 30
  count); 1% of the bill's unpaid charges that day and 1% more on each monthly
  anniversary of it (X-MONTHS, from the original day), simple: unpaid on day 95 -> 3%.
- X-TAXROLL: see :func:`_tax_roll`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from billing.domain.bills import Bill
from billing.domain.ledger import ZERO, Entry, allocate
from billing.domain.terms import Terms
from common.dates import add_months
from common.money import round_line

HUNDRED = Decimal(100)
MAX_MONTHS = 600  # a bound on anniversaries (50 years)


@dataclass(frozen=True, slots=True)
class Overdue:
    bill: Bill
    overdue_on: date
    amount_unpaid: Decimal
    disconnection_eligible_on: date


@dataclass(frozen=True, slots=True)
class Delinquent:
    bill: Bill
    delinquent_on: date
    amount_delinquent: Decimal
    penalty: Decimal
    percent: Decimal


@dataclass(frozen=True, slots=True)
class TaxNotice:
    """X-TAXROLL notice of one account for one year: the noticed entries and their sum."""

    year: int
    noticed_on: date
    entry_ids: tuple[str, ...]
    arrears: Decimal


@dataclass(frozen=True, slots=True)
class Certified:
    year: int
    certified_on: date
    arrears: Decimal
    penalty: Decimal

    @property
    def amount(self) -> Decimal:
        return self.arrears + self.penalty


@dataclass
class Outcome:
    """What one day's assessment adds to one account."""

    entries: list[Entry] = field(default_factory=list)
    marks: list[str] = field(default_factory=list)
    overdue: list[Overdue] = field(default_factory=list)
    delinquent: list[Delinquent] = field(default_factory=list)
    notices: list[TaxNotice] = field(default_factory=list)
    certified: list[Certified] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.entries or self.marks)


def percent_of(amount: Decimal, percent: Decimal, minimum: Decimal = ZERO) -> Decimal:
    return max(round_line(amount * percent / HUNDRED), minimum)


def assess_account(
    *,
    bills: Sequence[Bill],
    entries: Iterable[Entry],
    marks: Iterable[str],
    notices: Sequence[TaxNotice],
    terms: Terms,
    today: date,
) -> Outcome:
    """Every point of this account that fell on or before ``today`` and is not done yet."""
    ledger = list(entries)
    done = {e.entry_id for e in ledger} | set(marks)
    out = Outcome()
    first = frozenset(i for n in notices for i in n.entry_ids) | {
        f"TAXROLL-{n.year}-PENALTY" for n in notices
    }
    notices = list(notices)

    def unpaid_of_bill(bill: Bill, paid_by: date) -> Decimal:
        unpaid = allocate(ledger + out.entries, paid_by=paid_by, order=terms.payment_order, first=first)
        return sum(
            (
                unpaid.get(e.entry_id, ZERO)
                for e in ledger
                if e.bill_id == bill.bill_id and e.kind == "charge"
            ),
            ZERO,
        )

    late = terms.late
    for bill in sorted(bills, key=lambda b: (b.bill_date, b.bill_id)):
        if late is not None:
            start = bill.bill_date + timedelta(days=late.first_after_days)
            for n in range(1 if late.once else MAX_MONTHS):
                falls_on = add_months(start, n)
                if falls_on > today:
                    break
                entry_id = f"{bill.bill_id}-{late.kind.upper()}-{n:03d}"
                if entry_id in done:
                    continue
                # Payments dated before the day it falls on count (day 20 for day 21, and
                # for PP the delinquency day itself: payments dated up to day 30).
                paid_by = falls_on if late.kind == "penalty" else falls_on - timedelta(days=1)
                unpaid = unpaid_of_bill(bill, paid_by)
                if unpaid <= 0:
                    continue
                amount = percent_of(unpaid, late.percent, late.minimum)
                out.entries.append(
                    Entry(
                        entry_id=entry_id,
                        tenant=bill.tenant,
                        account_id=bill.account_id,
                        posted_on=falls_on,
                        kind=late.kind,  # type: ignore[arg-type]
                        amount=amount,
                        fund=terms.late_fund,
                        rule_id=late.rule_id,
                        bill_id=bill.bill_id,
                        description=f"{late.percent}% of {unpaid} unpaid of bill {bill.bill_number}",
                    )
                )
                if n == 0 and terms.delinquent:
                    out.delinquent.append(Delinquent(bill, falls_on, unpaid, amount, late.percent))
        if terms.overdue:
            overdue_on = bill.bill_date + timedelta(days=21)
            mark = f"OVERDUE-{bill.bill_id}"
            if overdue_on <= today and mark not in done:
                unpaid = unpaid_of_bill(bill, overdue_on - timedelta(days=1))
                if unpaid > 0:
                    out.marks.append(mark)
                    out.overdue.append(Overdue(bill, overdue_on, unpaid, overdue_on + timedelta(days=10)))
    if terms.tax_roll is not None:
        _tax_roll(terms, bills, ledger, notices, done, today, out)
    return out


def _tax_roll(
    terms: Terms,
    bills: Sequence[Bill],
    ledger: list[Entry],
    notices: list[TaxNotice],
    done: set[str],
    today: date,
    out: Outcome,
) -> None:
    """X-TAXROLL (interpretation, RULES.md): for each year up to ``today``,

    - October 15 (payments dated up to Oct 14 count): notice of the arrears: charges of
      bills for service before October 1 that are past due and unpaid, with the late
      charges and penalties assessed on those bills by then;
    - November 2, the first assessment after November 1 (a payment dated November 1
      counts): 10% of the noticed arrears still unpaid, one ``penalty`` entry; payments go
      to the noticed arrears first;
    - November 16 (payments dated up to Nov 15 count): the unpaid noticed arrears plus that
      penalty leave the account by one negative ``tax_roll`` entry.
    """
    tr = terms.tax_roll
    assert tr is not None
    if not bills:
        return
    years = range(min(b.bill_date for b in bills).year, today.year + 1)
    for year in years:
        notice_on = tr.day(year, tr.notice_on)
        if notice_on > today:
            return
        notice = next((n for n in notices if n.year == year), None)
        mark = f"TAXNOTICE-{year}"
        if notice is None and mark not in done:
            before = tr.day(year, tr.arrears_before)
            noticed_bills = {b.bill_id for b in bills if b.period_end <= before and b.due_date < notice_on}
            paid_by = notice_on - timedelta(days=1)
            unpaid = allocate(ledger + out.entries, paid_by=paid_by, order=terms.payment_order)
            ids = tuple(
                e.entry_id
                for e in ledger + out.entries
                if e.bill_id in noticed_bills
                and e.amount > 0
                and e.posted_on <= notice_on
                and unpaid.get(e.entry_id, ZERO) > 0
            )
            arrears = sum((unpaid[i] for i in ids), ZERO)
            if arrears > 0:
                notice = TaxNotice(year, notice_on, ids, arrears)
                notices.append(notice)
                out.notices.append(notice)
                out.marks.append(mark)
        if notice is None:
            continue
        first = frozenset(notice.entry_ids)
        penalty_on = tr.day(year, tr.penalty_on) + timedelta(days=1)
        penalty_id = f"TAXROLL-{year}-PENALTY"
        by_id = {e.entry_id: e for e in ledger + out.entries}
        if penalty_on <= today and penalty_id not in done:
            unpaid = allocate(
                ledger + out.entries,
                paid_by=penalty_on - timedelta(days=1),
                order=terms.payment_order,
                first=first,
            )
            still = sum((unpaid.get(i, ZERO) for i in notice.entry_ids), ZERO)
            if still > 0:
                last_bill = max((by_id[i].bill_id for i in notice.entry_ids if i in by_id), default="")
                out.entries.append(
                    Entry(
                        entry_id=penalty_id,
                        tenant=terms.tenant,
                        account_id=bills[0].account_id,
                        posted_on=penalty_on,
                        kind="penalty",
                        amount=percent_of(still, tr.penalty_percent),
                        fund=terms.late_fund,
                        rule_id=tr.rule_id,
                        bill_id=last_bill,
                        description=f"{tr.penalty_percent}% of {still} noticed arrears unpaid after {tr.day(year, tr.penalty_on)}",
                    )
                )
        certify_on = tr.day(year, tr.certify_on)
        certify_id = f"TAXROLL-{year}-CERTIFIED"
        if certify_on <= today and certify_id not in done:
            listed = frozenset(notice.entry_ids) | {penalty_id}
            unpaid = allocate(
                ledger + out.entries,
                paid_by=certify_on - timedelta(days=1),
                order=terms.payment_order,
                first=listed,
            )
            arrears = sum((unpaid.get(i, ZERO) for i in notice.entry_ids), ZERO)
            penalty = unpaid.get(penalty_id, ZERO)
            if arrears + penalty > 0:
                out.entries.append(
                    Entry(
                        entry_id=certify_id,
                        tenant=terms.tenant,
                        account_id=bills[0].account_id,
                        posted_on=certify_on,
                        kind="tax_roll",
                        amount=-(arrears + penalty),
                        fund=terms.late_fund,
                        rule_id=tr.rule_id,
                        description=f"certified to the {year} tax roll",
                    )
                )
                out.certified.append(Certified(year, certify_on, arrears, penalty))
