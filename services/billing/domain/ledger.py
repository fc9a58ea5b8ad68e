"""The double-entry ledger of an account (GR-FUNDS, SU-FUNDS, CONTRACTS.md "Staff read routes").

Every entry moves ``amount`` between the account's receivable and one counter account:
a charge, late charge or penalty debits the receivable and credits revenue of its fund; a
payment credits the receivable and debits cash (or suspense); a ``tax_roll`` entry moves
certified arrears to the county's tax roll. So each entry is balanced by construction and
``trial_balance`` of any set of entries sums to zero. ``amount`` is signed as the
receivable sees it: a payment is negative.

Balances and what is still unpaid are derived from the entries, never stored:
``allocate`` applies every credit to the debits (X-ALLOCATION): a credit on a bill (a
negative line such as PP-CWU-CREDIT, a refund, a negative adjustment naming the bill) to
that bill's debits only; payments, the tax roll and credits on no bill to the account's
bills oldest bill first, within a bill in the tariff's order of kinds (the order is tariff
data), each part to its funds in proportion. So the unpaid part of any charge on any day,
and a bill's principal (``principal``), is a pure function of the ledger.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from types import MappingProxyType
from typing import Literal

ZERO = Decimal("0.00")
CENT = Decimal("0.01")

Kind = Literal["charge", "payment", "adjustment", "late_charge", "penalty", "credit", "tax_roll"]
KINDS: tuple[Kind, ...] = ("charge", "payment", "adjustment", "late_charge", "penalty", "credit", "tax_roll")
FUNDS = ("om", "replacement")
OM = "om"
PRINCIPAL_KINDS: frozenset[str] = frozenset({"charge", "adjustment"})
"""The kinds of a bill's debits that are its principal (:func:`principal`)."""
DEFAULT_ORDER: tuple[str, ...] = ("penalty", "late_charge", "charge", "adjustment")
"""Within one bill, which kinds a payment pays first (X-ALLOCATION; tariff ``payment_order`` overrides)."""

RECEIVABLE = "receivable"
REVERSAL_PREFIX = "REV-"
"""An adjustment whose id starts so and whose ``reference`` is a debit's entry id reverses
(part of) that debit: ``allocate`` nets it against that debit, not the oldest one."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One ledger entry. ``entry_id`` is the business key (deterministic, so a rerun
    writes the same entry again instead of a second one)."""

    entry_id: str
    tenant: str
    account_id: str
    posted_on: date
    kind: Kind
    amount: Decimal
    fund: str
    rule_id: str = ""
    bill_id: str = ""
    reference: str = ""
    description: str = ""

    @property
    def counter_account(self) -> str:
        """Where the other side of the entry goes (double entry)."""
        if self.kind == "payment":
            return "cash"
        if self.kind == "tax_roll":
            return "tax_roll"
        return f"revenue:{self.fund}"

    @property
    def is_debit(self) -> bool:
        return self.amount > 0


def balance(entries: Iterable[Entry], as_of: date | None = None) -> Decimal:
    """The receivable balance (positive: owed; negative: a credit balance)."""
    total = ZERO
    for e in entries:
        if as_of is None or e.posted_on <= as_of:
            total += e.amount
    return total


def trial_balance(entries: Iterable[Entry]) -> dict[str, Decimal]:
    """Every account touched, with its balance; the values always sum to zero."""
    sums: dict[str, Decimal] = {}
    for e in entries:
        sums[RECEIVABLE] = sums.get(RECEIVABLE, ZERO) + e.amount
        sums[e.counter_account] = sums.get(e.counter_account, ZERO) - e.amount
    return sums


def _parts(debits: Sequence[Entry], order: Sequence[str], ahead: frozenset[str]) -> list[list[Entry]]:
    """``debits`` in the order credits pay them (X-ALLOCATION), cut into parts.

    Oldest bill first (a bill's age is the date of its first debit: its bill date); within
    a bill, by kind in ``order`` (a later penalty of an older bill before a newer bill's
    charges). One part is one bill's debits of one kind: a credit pays a part's funds in
    proportion (:func:`_pay`). Debits on no bill (``bill_id`` ""), each a part of its own,
    come in date order and ``order`` within a day. The debits named ``ahead`` (X-TAXROLL:
    the noticed arrears) come before all others, in the same order among themselves."""
    rank = {kind: i for i, kind in enumerate(order)}
    born: dict[str, date] = {}
    for d in debits:
        if d.bill_id and (d.bill_id not in born or d.posted_on < born[d.bill_id]):
            born[d.bill_id] = d.posted_on

    def part(e: Entry) -> tuple[bool, date, str, int, str]:
        on = born[e.bill_id] if e.bill_id else e.posted_on
        return (
            e.entry_id not in ahead,
            on,
            e.bill_id,
            rank.get(e.kind, len(rank)),
            "" if e.bill_id else e.entry_id,
        )

    out: dict[tuple[bool, date, str, int, str], list[Entry]] = {}
    for d in sorted(debits, key=lambda e: (part(e), e.posted_on, e.entry_id)):
        out.setdefault(part(d), []).append(d)
    return [out[k] for k in sorted(out)]


def _pay(credit: Decimal, part: Sequence[Entry], unpaid: dict[str, Decimal]) -> Decimal:
    """Apply up to ``credit`` to one part; returns what is left of it.

    GR-FUNDS, X-ALLOCATION: "each part to its funds in proportion". A credit smaller than
    the part's unpaid total goes to each fund in proportion to that fund's unpaid share,
    rounded half-up to the cent; the operation and maintenance fund (``om``, else the last
    fund by name) takes the remainder, so the shares sum exactly to what is applied and none
    exceeds its fund's unpaid part. Within a fund the entries are paid oldest first."""
    by_fund: dict[str, list[Entry]] = {}
    for d in part:
        if unpaid[d.entry_id] > 0:
            by_fund.setdefault(d.fund, []).append(d)
    owed = {f: sum((unpaid[d.entry_id] for d in ds), ZERO) for f, ds in by_fund.items()}
    total = sum(owed.values(), ZERO)
    applied = min(credit, total)
    if applied <= 0:
        return credit
    funds = sorted(owed, key=lambda f: (f == OM, f))
    share: dict[str, Decimal] = {}
    left = applied
    for f in funds[:-1]:
        share[f] = min((applied * owed[f] / total).quantize(CENT, rounding=ROUND_HALF_UP), owed[f], left)
        left -= share[f]
    share[funds[-1]] = left
    for f in funds:
        give = share[f]
        for d in by_fund[f]:
            step = min(give, unpaid[d.entry_id])
            unpaid[d.entry_id] -= step
            give -= step
    return credit - applied


def _apply(credit: Decimal, parts: Iterable[Sequence[Entry]], unpaid: dict[str, Decimal]) -> Decimal:
    """Apply ``credit`` to ``parts`` in turn (:func:`_pay`); returns what is left over."""
    for part in parts:
        if credit <= 0:
            break
        credit = _pay(credit, part, unpaid)
    return credit


def allocate(
    entries: Iterable[Entry],
    *,
    paid_by: date | None = None,
    order: Sequence[str] = DEFAULT_ORDER,
    first: Mapping[str, date] = MappingProxyType({}),
) -> dict[str, Decimal]:
    """The unpaid part of every debit entry, by entry id: X-ALLOCATION, in this one place.

    Credits dated on or before ``paid_by`` (all when None; a payment counts on its
    ``paid_on`` date, X-DUE) are applied on their day to the debits posted by then, in the
    rule's order (:func:`_parts`): the account's unpaid bills oldest bill first, within a
    bill in the tariff's ``order`` of kinds (penalties, late charges, charges,
    adjustments), each part to its funds in proportion (:func:`_pay`: half-up per fund,
    the remainder to ``om``). What is left is a credit balance: it pays the debits posted
    later, on their day (so a penalty assessed after a payment never takes that payment
    back from the charges it paid, and a bill's principal never grows by its penalties,
    PP-CWU-PENALTY). A credit on a bill (:func:`on_bill`: a credit line, a refund, a
    negative adjustment) is applied to that bill's debits posted by its day only, in the
    same order (so a bill's credit line pays its charges, never the penalties the bill bears
    later); what it leaves over joins the account's credits of its day. A reversal
    (:data:`REVERSAL_PREFIX`) nets against the debit it names. ``first`` names debits paid
    before all others by those credits dated from a day on (X-TAXROLL: payments go to the
    noticed arrears first, from the notice on; a payment dated before the notice stays
    with the debits it paid then). A credit never allocates more than its amount. Debits
    posted after ``paid_by`` are included too (the credit balance pays them). A bill's
    principal is read from the result by :func:`principal`.
    """
    listed = list(entries)
    debits = [e for e in listed if e.amount > 0]
    debit_ids = {d.entry_id for d in debits}
    reversed_ = _reversals(listed, debit_ids, paid_by)
    unpaid = {d.entry_id: max(d.amount - reversed_.get(d.entry_id, ZERO), ZERO) for d in debits}
    # A bill's credits of a day, pooled, pay that bill's debits posted by then, then its
    # charges posted later, then its later penalties; what they leave over, and every
    # other credit, pays the account's debits as of the credit's day, in
    # groups by the day from which their ``first`` debits come first (an earlier group pays
    # before a later one). What is left of a day's credits is the credit balance: it pays
    # the debits posted later, on their day. Credits of one day are pooled, so the split
    # of a part depends on their sum, never on the order they are read in.
    starts = sorted(set(first.values()))

    def group(on: date) -> date:
        return max((d for d in starts if d <= on), default=date.min)

    of_bill: dict[str, list[Entry]] = {}
    new: dict[date, dict[date, Decimal]] = {}  # credits by day, by group

    def add(on: date, amount: Decimal) -> None:
        by_group = new.setdefault(on, {})
        by_group[group(on)] = by_group.get(group(on), ZERO) + amount

    for e in listed:
        if e.amount < 0 and (paid_by is None or e.posted_on <= paid_by) and reverses(e) not in debit_ids:
            if on_bill(e):
                of_bill.setdefault(e.bill_id, []).append(e)
            else:
                add(e.posted_on, -e.amount)
    if of_bill:
        parts_of: dict[str, list[list[Entry]]] = {}
        for part in _parts([d for d in debits if d.bill_id in of_bill], order, frozenset()):
            parts_of.setdefault(part[0].bill_id, []).append(part)
        for bill_id, credits in sorted(of_bill.items()):
            # A bill's credits of one day, pooled, pay that bill's debits posted by that day
            # (a PP-CWU-CREDIT line pays its own bill's charges, never the penalties posted
            # on the bill later: a principal never grows by its penalties, PP-CWU-PENALTY);
            # what a day's credits leave over joins the account's credits of that day.
            days: dict[date, Decimal] = {}
            for c in credits:
                days[c.posted_on] = days.get(c.posted_on, ZERO) - c.amount
            for on, total in sorted(days.items()):
                by_then = [[d for d in part if d.posted_on <= on] for part in parts_of.get(bill_id, ())]
                left = _apply(total, [part for part in by_then if part], unpaid)
                # Left over: it still belongs to its bill (X-ALLOCATION): the bill's charges
                # posted later (a debit memo re-rating it) first, then its later late
                # charges and penalties, before it goes to the account.
                for principal_kinds in (True, False):
                    later = [
                        [
                            d
                            for d in part
                            if d.posted_on > on and (d.kind in PRINCIPAL_KINDS) == principal_kinds
                        ]
                        for part in parts_of.get(bill_id, ())
                    ]
                    left = _apply(left, [part for part in later if part], unpaid)
                if left > 0:
                    add(on, left)
    if not new:
        return unpaid
    posted: dict[date, list[Entry]] = {}
    for d in debits:
        posted.setdefault(d.posted_on, []).append(d)
    # The order of every debit is fixed (a bill's age is its first debit's day, which is
    # posted before its others), so it is sorted once per ``ahead`` set; each day's
    # credits then walk it, taking the debits posted by that day, oldest bill first, and
    # stop where they run out: no sort per day (an account with years of bills stays
    # linear in its days, not quadratic).
    ordered: dict[frozenset[str], list[list[Entry]]] = {}

    def parts_by(day: date, ahead: frozenset[str]) -> Iterator[list[Entry]]:
        if ahead not in ordered:
            ordered[ahead] = _parts(debits, order, ahead)
        for part in ordered[ahead]:
            if part[0].posted_on > day and all(d.posted_on > day for d in part):
                continue
            yield [d for d in part if d.posted_on <= day]

    balance_: dict[date, Decimal] = {}  # the credit balance, by group
    for day in sorted(set(posted) | set(new)):
        for since, amount in new.get(day, {}).items():
            balance_[since] = balance_.get(since, ZERO) + amount
        for since in sorted(balance_):
            if balance_[since] > 0:
                ahead = frozenset(i for i, d in first.items() if d <= since)
                balance_[since] = _apply(balance_[since], parts_by(day, ahead), unpaid)
    return unpaid


def principal(unpaid: Mapping[str, Decimal], entries: Iterable[Entry], bill_id: str) -> Decimal:
    """A bill's principal for its late charge or penalty (X-ALLOCATION, PP-CWU-PENALTY,
    GR-LATE): "its own charges less what was applied to it", from :func:`allocate`'s
    ``unpaid``. Its own charges are its ``charge`` entries and the positive adjustments on
    it: a debit memo that re-rates the bill (X-IMMUTABLE) or adds a charge to it (GR-TOXIC)
    is part of what is charged on the bill, as a credit memo on it is part of what is
    applied to it. Late charges and penalties are never principal."""
    return sum(
        (
            unpaid.get(e.entry_id, ZERO)
            for e in entries
            if e.bill_id == bill_id and e.amount > 0 and e.kind in PRINCIPAL_KINDS
        ),
        ZERO,
    )


def on_bill(e: Entry) -> bool:
    """Does credit ``e`` belong to one bill (X-ALLOCATION: "an adjustment or credit line
    applies to the bill it is on or refers to, never to another bill")? Every credit with
    a ``bill_id`` but a payment or the tax roll, which are the account's."""
    return bool(e.bill_id) and e.kind not in ("payment", "tax_roll")


def reverses(e: Entry) -> str:
    """The entry id of the debit ``e`` reverses (part of), or "" (see REVERSAL_PREFIX)."""
    if e.kind == "adjustment" and e.amount < 0 and e.entry_id.startswith(REVERSAL_PREFIX):
        return e.reference
    return ""


def _reversals(listed: list[Entry], debit_ids: set[str], paid_by: date | None) -> dict[str, Decimal]:
    """What reversals dated by ``paid_by`` took off each debit they name."""
    out: dict[str, Decimal] = {}
    for e in listed:
        target = reverses(e)
        if target in debit_ids and (paid_by is None or e.posted_on <= paid_by):
            out[target] = out.get(target, ZERO) - e.amount
    return out


def unpaid_of(unpaid: dict[str, Decimal], entries: Iterable[Entry]) -> Decimal:
    return sum((unpaid.get(e.entry_id, ZERO) for e in entries), ZERO)
