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
- GR-OVERDUE: ``BillOverdue`` on day 21 if unpaid; disconnection eligible 10 days later
  (day 31: payments dated up to day 30 count) unless paid or an active payment arrangement
  covers the bill (``billing.domain.arrangements``). Eligibility is published once per
  stretch of days it holds (:class:`Eligible`), on the day it starts: day 31, or the day a
  covering arrangement broke, was cancelled or ended with the bill still unpaid.
- PP-CWU-DELINQUENT / PP-CWU-PENALTY: delinquent on day 30 (payments dated up to day 30
  count); 1% of the bill's unpaid charges that day and 1% more on each monthly
  anniversary of it (X-MONTHS, from the original day), simple: unpaid on day 95 -> 3%.
- X-TAXROLL: see :func:`_tax_roll`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from billing.domain.arrangements import Arrangement
from billing.domain.bills import Bill
from billing.domain.ledger import REVERSAL_PREFIX, ZERO, Entry, allocate, principal, reverses
from billing.domain.terms import Terms
from common.dates import add_months
from common.money import round_line

HUNDRED = Decimal(100)
OVERDUE_AFTER = timedelta(days=21)  # GR-OVERDUE: the overdue notice, 21 days after the bill date
NOTICE_PERIOD = timedelta(days=10)  # GR-OVERDUE: eligible for disconnection 10 days after that notice


def disconnectable_from(bill: Bill, overdue_on: date) -> date:
    """GR-OVERDUE: the first day service may be disconnected for ``bill`` after its overdue
    notice of ``overdue_on``: the notice's 10 days ran out, and never before the bill's due
    date (RULES.md: the notice's disconnection date is never before the due date)."""
    return max(overdue_on + NOTICE_PERIOD, bill.due_date)


def announced_by_overdue_notice(bill: Bill, eligible_on: date) -> bool:
    """An eligibility that began the day the overdue notice's 10 days ran out was announced
    by that notice; one that began later (an arrangement broken, a payment reversed) had a
    disconnection notice of its own."""
    return eligible_on == disconnectable_from(bill, bill.bill_date + OVERDUE_AFTER)


MAX_MONTHS = 600  # a bound on anniversaries (50 years)


@dataclass(frozen=True, slots=True)
class Overdue:
    bill: Bill
    overdue_on: date
    amount_unpaid: Decimal
    disconnection_eligible_on: date


@dataclass(frozen=True, slots=True)
class Eligible:
    """GR-OVERDUE: from ``eligible_on`` service may be disconnected for ``bill``; ``reason``
    says why it starts that day; ``amount_unpaid`` is the bill's unpaid charges the day
    before."""

    bill: Bill
    overdue_on: date
    eligible_on: date
    amount_unpaid: Decimal
    reason: str  # notice_period_ended | arrangement_broken | arrangement_cancelled | arrangement_ended | payment_reversed
    arrangement_id: str | None = None


@dataclass(frozen=True, slots=True)
class Withdrawn:
    """GR-OVERDUE: an eligibility published for ``bill`` from ``eligible_on`` no longer holds
    from ``ended_on``: the bill is paid (payments dated up to the day before count) or an
    arrangement covering it is active (``arranged``, with ``arrangement_id``).
    ``ended_on == eligible_on`` means it never held (a payment dated before it, posted
    later; or an arrangement made the day it began)."""

    bill: Bill
    eligible_on: date
    ended_on: date
    reason: str  # paid | arranged
    amount_unpaid: Decimal  # the bill's charges unpaid with the payments dated before ended_on
    arrangement_id: str | None = None

    @property
    def never_held(self) -> bool:
        return self.ended_on == self.eligible_on


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
    eligible: list[Eligible] = field(default_factory=list)
    withdrawn: list[Withdrawn] = field(default_factory=list)
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
    arrangements: Sequence[Arrangement] = (),
) -> Outcome:
    """Every point of this account that fell on or before ``today`` and is not done yet."""
    ledger = list(entries)
    done = {e.entry_id for e in ledger} | set(marks)
    out = Outcome()
    unpaid_of_bill = _unpaid_of_bill(ledger, out.entries, terms, notices)
    notices = list(notices)

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
            overdue_on = bill.bill_date + OVERDUE_AFTER
            mark = f"OVERDUE-{bill.bill_id}"
            if overdue_on <= today and mark not in done:
                unpaid = unpaid_of_bill(bill, overdue_on - timedelta(days=1))
                if unpaid > 0:
                    out.marks.append(mark)
                    out.overdue.append(
                        Overdue(bill, overdue_on, unpaid, disconnectable_from(bill, overdue_on))
                    )
            if mark in done or mark in out.marks:
                eligible = _eligibility(
                    bill, overdue_on, ledger + out.entries, arrangements, today, unpaid_of_bill
                )
                if eligible is not None:
                    eligible_mark = f"{ELIGIBLE_MARK}{bill.bill_id}-{eligible.eligible_on.isoformat()}"
                    if eligible_mark not in done:
                        out.marks.append(eligible_mark)
                        out.eligible.append(eligible)
    if terms.overdue:
        for w in withdrawals(bills, ledger + out.entries, done, arrangements, today, unpaid_of_bill):
            out.marks.append(withdrawn_mark(w.bill.bill_id, w.eligible_on))
            out.withdrawn.append(w)
    if terms.tax_roll is not None:
        _tax_roll(terms, bills, ledger, notices, done, today, out)
    return out


def _unpaid_of_bill(
    ledger: list[Entry], added: list[Entry], terms: Terms, notices: Sequence[TaxNotice]
) -> Callable[[Bill, date], Decimal]:
    """A bill's principal unpaid with the payments dated up to a day (``ledger.principal``:
    its charges and debit memos less what was applied to them; ``ledger`` and what the
    assessment ``added`` so far; X-TAXROLL: payments go to the noticed arrears first)."""
    first = noticed_first(notices)
    allocated: dict[tuple[date, int], dict[str, Decimal]] = {}
    # ``allocate`` counts only the credits (and reversals) dated by ``paid_by``; every debit
    # is in. So two days with no credit between them allocate alike: the allocation is kept
    # by the last credit's day on or before ``paid_by``, and a paid bill's every monthly
    # anniversary, checked again each day, costs no new allocation (an account with years
    # of bills was otherwise allocated once per bill and month: quadratic).
    credit_days = sorted({e.posted_on for e in ledger if e.amount < 0})

    def unpaid_of_bill(bill: Bill, paid_by: date) -> Decimal:
        days = credit_days
        if any(e.amount < 0 for e in added):
            days = sorted(set(credit_days) | {e.posted_on for e in added if e.amount < 0})
        at = bisect_right(days, paid_by)
        key = (days[at - 1] if at else date.min, len(added))
        if key not in allocated:
            allocated[key] = allocate(ledger + added, paid_by=paid_by, order=terms.payment_order, first=first)
        return principal(allocated[key], ledger, bill.bill_id)

    return unpaid_of_bill


def noticed_first(notices: Iterable[TaxNotice]) -> dict[str, date]:
    """X-TAXROLL: each noticed debit (and each year's tax-roll penalty) with the day from
    which payments go to it first: its first notice (a debit still unpaid is noticed again
    the next year; that never moves it behind the credits its first notice put it ahead of)."""
    out: dict[str, date] = {}
    for n in notices:
        for i in (*n.entry_ids, f"TAXROLL-{n.year}-PENALTY"):
            out[i] = min(out.get(i, n.noticed_on), n.noticed_on)
    return out


def withdrawn_between_assessments(
    *,
    bills: Sequence[Bill],
    entries: Iterable[Entry],
    marks: Iterable[str],
    notices: Sequence[TaxNotice],
    terms: Terms,
    today: date,
    arrangements: Sequence[Arrangement] = (),
) -> list[Withdrawn]:
    """The withdrawals the assessment would find today (``withdrawals``), for a payment or
    an arrangement just recorded: nothing else of the assessment is done."""
    if not terms.overdue:
        return []
    ledger = list(entries)
    done = {e.entry_id for e in ledger} | set(marks)
    return withdrawals(bills, ledger, done, arrangements, today, _unpaid_of_bill(ledger, [], terms, notices))


ELIGIBLE_MARK = "DISCONNECT-"
WITHDRAWN_MARK = "WITHDRAWN-"


def withdrawn_mark(bill_id: str, eligible_on: date) -> str:
    return f"{WITHDRAWN_MARK}{bill_id}-{eligible_on.isoformat()}"


def withdrawals(
    bills: Sequence[Bill],
    ledger: list[Entry],
    done: set[str],
    arrangements: Sequence[Arrangement],
    today: date,
    unpaid_of_bill: Callable[[Bill, date], Decimal],
) -> list[Withdrawn]:
    """GR-OVERDUE ("unless paid or arranged"): each eligibility published (its mark
    ``DISCONNECT-<bill>-<day>``) and not yet withdrawn that no longer holds on some day from
    its first to ``today``, with the ledger as it stands now: a payment dated before that day
    (however late it was posted), a credit, or an arrangement covering the bill made since.
    The first such day is where it ended. An eligibility still holding is left alone; one
    that ends is withdrawn once (its mark ``WITHDRAWN-<bill>-<day>``)."""
    by_id = {b.bill_id: b for b in bills}
    out: list[Withdrawn] = []
    for mark in sorted(done):
        if not mark.startswith(ELIGIBLE_MARK):
            continue
        bill_id, day = mark[len(ELIGIBLE_MARK) : -11], mark[-10:]
        bill = by_id.get(bill_id)
        if bill is None:
            continue
        eligible_on = date.fromisoformat(day)
        if withdrawn_mark(bill_id, eligible_on) in done or eligible_on > today:
            continue
        holds = _holds(bill, ledger, arrangements, unpaid_of_bill)
        covering = [a for a in arrangements if a.covers(bill.bill_date)]
        # It can end only the day after a payment or credit, or on an arrangement's day.
        turns = {eligible_on, today} | {e.posted_on + timedelta(days=1) for e in ledger if e.amount < 0}
        for a in covering:
            turns |= a.turning_days(ledger)
        ended = next((d for d in sorted(turns) if eligible_on <= d <= today and not holds(d)), None)
        if ended is None:
            continue
        unpaid = max(unpaid_of_bill(bill, ended - timedelta(days=1)), ZERO)
        arranged = None if unpaid == 0 else next((a for a in covering if a.active_on(ended, ledger)), None)
        out.append(
            Withdrawn(
                bill,
                eligible_on,
                ended,
                "arranged" if arranged is not None else "paid",
                unpaid,
                arranged.arrangement_id if arranged is not None else None,
            )
        )
    return out


def _holds(
    bill: Bill,
    ledger: list[Entry],
    arrangements: Sequence[Arrangement],
    unpaid_of_bill: Callable[[Bill, date], Decimal],
) -> Callable[[date], bool]:
    """Is ``bill`` eligible for disconnection on a day: its charges unpaid with the payments
    dated up to the day before, and no arrangement covering it active that day."""
    covering = [a for a in arrangements if a.covers(bill.bill_date)]

    def holds(day: date) -> bool:
        if unpaid_of_bill(bill, day - timedelta(days=1)) <= 0:
            return False
        return not any(a.active_on(day, ledger) for a in covering)

    return holds


def _eligibility(
    bill: Bill,
    overdue_on: date,
    ledger: list[Entry],
    arrangements: Sequence[Arrangement],
    today: date,
    unpaid_of_bill: Callable[[Bill, date], Decimal],
) -> Eligible | None:
    """GR-OVERDUE: is ``bill`` eligible for disconnection ``today``, and since which day?

    Eligible on day ``d`` (from the overdue day + 10): the bill's charges are unpaid with the
    payments dated up to ``d - 1``, and no arrangement covering the bill is active on ``d``.
    That can change only on the first day, the day after an entry's date, or a day an
    arrangement starts, breaks, is cancelled or ends; so those days are walked back from
    ``today`` to find where the current stretch began."""
    first_day = disconnectable_from(bill, overdue_on)
    if first_day > today:
        return None
    covering = [a for a in arrangements if a.covers(bill.bill_date)]
    holds = _holds(bill, ledger, arrangements, unpaid_of_bill)
    if not holds(today):
        return None
    turns = {first_day} | {e.posted_on + timedelta(days=1) for e in ledger}
    for a in covering:
        turns |= a.turning_days(ledger)
    since = first_day
    for day in sorted((d for d in turns if first_day < d <= today), reverse=True):
        if not holds(day - timedelta(days=1)):
            since = day
            break
    reason, arrangement_id = "notice_period_ended", None
    if since != first_day:
        reason = "payment_reversed"
        for a in covering:
            for why, on in (
                ("arrangement_broken", a.broken_on(ledger)),
                ("arrangement_cancelled", a.cancelled_on),
                ("arrangement_ended", a.end_on + timedelta(days=1)),
            ):
                if on == since:
                    reason, arrangement_id = why, a.arrangement_id
                    break
            if arrangement_id is not None:
                break
    return Eligible(
        bill, overdue_on, since, unpaid_of_bill(bill, since - timedelta(days=1)), reason, arrangement_id
    )


def late_charge_corrections(
    *,
    bills: Sequence[Bill],
    entries: Iterable[Entry],
    terms: Terms,
    payments: Sequence[Entry],
    today: date,
) -> list[Entry]:
    """X-DUE, X-IMMUTABLE: ``payments`` (just posted) dated before a late charge or penalty
    already assessed would have reduced or prevented it, so each such charge is reassessed
    with every payment dated up to its cut-off (as the assessment would have on its day) and
    the excess reversed by one adjustment referring to the charge (``reference`` = the
    charge's entry id, ``REV-`` id: ``ledger.allocate`` nets it against that charge), with
    a reason naming the payment. Never an increase; a charge reversed already is reversed
    only by what is still in excess, so posting the same payment twice reverses once."""
    late = terms.late
    if late is None or not payments:
        return []
    ledger = list(entries)
    by_bill = {b.bill_id: b for b in bills}
    out: list[Entry] = []
    charges = sorted(
        (
            e
            for e in ledger
            if e.kind == late.kind and e.rule_id == late.rule_id and e.bill_id in by_bill and e.amount > 0
        ),
        key=lambda e: (e.posted_on, e.entry_id),
    )
    for charge in charges:
        paid_by = charge.posted_on if late.kind == "penalty" else charge.posted_on - timedelta(days=1)
        backdated = sorted((p for p in payments if p.posted_on <= paid_by), key=lambda p: p.reference)
        if not backdated:
            continue
        unpaid_by_entry = allocate(ledger + out, paid_by=paid_by, order=terms.payment_order)
        unpaid = principal(unpaid_by_entry, ledger, charge.bill_id)
        due = percent_of(unpaid, late.percent, late.minimum) if unpaid > 0 else ZERO
        standing = charge.amount + sum(
            (r.amount for r in ledger + out if reverses(r) == charge.entry_id), ZERO
        )
        if due >= standing:
            continue
        named = ", ".join(f"{p.reference} dated {p.posted_on}" for p in backdated)
        basis = (
            f"{late.percent}% of {unpaid} unpaid by {paid_by}" if unpaid > 0 else f"bill paid by {paid_by}"
        )
        out.append(
            Entry(
                entry_id=f"{REVERSAL_PREFIX}{charge.entry_id}-{backdated[0].reference}",
                tenant=charge.tenant,
                account_id=charge.account_id,
                posted_on=max(today, charge.posted_on),
                kind="adjustment",
                amount=due - standing,
                fund=charge.fund,
                rule_id=charge.rule_id,
                bill_id=charge.bill_id,
                reference=charge.entry_id,
                description=(
                    f"{late.rule_id} {charge.entry_id} of {standing} reduced to {due} ({basis}): "
                    f"payment {named} was posted after it was assessed (X-DUE; X-IMMUTABLE)"
                ),
            )
        )
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
            # the earlier years' notices still put their debits first (X-TAXROLL)
            earlier = noticed_first(n for n in notices if n.year < year)
            unpaid = allocate(ledger + out.entries, paid_by=paid_by, order=terms.payment_order, first=earlier)
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
        first = dict.fromkeys(notice.entry_ids, notice.noticed_on)
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
            listed = dict.fromkeys((*notice.entry_ids, penalty_id), notice.noticed_on)
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


def next_action_on(
    *,
    bills: Sequence[Bill],
    entries: Iterable[Entry],
    marks: Iterable[str],
    notices: Sequence[TaxNotice],
    terms: Terms,
    today: date,
    arrangements: Sequence[Arrangement] = (),
) -> date | None:
    """The first day after ``today`` on which :func:`assess_account` can find work for this
    account as it stands after today's run (pass what the run added), or None: nothing can
    fall due until something is written (a bill, an entry, an arrangement, a mark; each such
    write makes the next run a full one, ``billing.domain.assessment_due``).

    Never later than the first day with work; it may name a day with none (a full run that
    finds nothing). With the bills, entries, marks and arrangements fixed, the assessment's
    answer changes only on these days:

    - a bill still unpaid today (payments dated up to today; a bill paid stays paid as
      later payments only add, ``ledger.allocate``): its next late charge or penalty day,
      its overdue day and its first day of disconnection eligibility;
    - the day after any entry's date (eligibility and its withdrawal read the payments
      dated up to the day before) and each arrangement's turning days (made, broken,
      cancelled, ended): where an eligibility can start or end;
    - X-TAXROLL: the notice, penalty and certification days of this year and the next.
    """
    ledger = list(entries)
    later = today + timedelta(days=1)
    days = {e.posted_on + timedelta(days=1) for e in ledger}
    for a in arrangements:
        days |= a.turning_days(ledger)
    days |= {date.fromisoformat(m[-10:]) for m in marks if m.startswith(ELIGIBLE_MARK)}
    unpaid_of_bill = _unpaid_of_bill(ledger, [], terms, notices)
    late = terms.late
    for bill in bills:
        if unpaid_of_bill(bill, today) <= 0:
            continue
        if late is not None:
            start = bill.bill_date + timedelta(days=late.first_after_days)
            for n in range(1 if late.once else MAX_MONTHS):
                falls_on = add_months(start, n)
                if falls_on > today:
                    days.add(falls_on)
                    break
        if terms.overdue:
            overdue_on = bill.bill_date + OVERDUE_AFTER
            days |= {overdue_on, disconnectable_from(bill, overdue_on)}
    tr = terms.tax_roll
    if tr is not None and bills:
        for year in (today.year, today.year + 1):
            days |= {
                tr.day(year, tr.notice_on),
                tr.day(year, tr.penalty_on) + timedelta(days=1),
                tr.day(year, tr.certify_on),
            }
    return min((d for d in days if d >= later), default=None)
