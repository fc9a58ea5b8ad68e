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
that bill's debits only; payments, the tax roll and credits on no bill oldest first, in the
tariff's order of kinds within a day (the order is tariff data). So the unpaid part of any
charge on any day is a pure function of the ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from types import MappingProxyType
from typing import Literal

ZERO = Decimal("0.00")

Kind = Literal["charge", "payment", "adjustment", "late_charge", "penalty", "credit", "tax_roll"]
KINDS: tuple[Kind, ...] = ("charge", "payment", "adjustment", "late_charge", "penalty", "credit", "tax_roll")
FUNDS = ("om", "replacement")
OM = "om"
DEFAULT_ORDER: tuple[str, ...] = ("penalty", "late_charge", "charge", "adjustment")
"""Within one day, which kinds a payment pays first (tariff ``payment_order`` overrides)."""

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


def _debit_order(
    order: Sequence[str], first: frozenset[str]
) -> Callable[[Entry], tuple[int, date, int, str]]:
    rank = {kind: i for i, kind in enumerate(order)}

    def key(e: Entry) -> tuple[int, date, int, str]:
        return (0 if e.entry_id in first else 1, e.posted_on, rank.get(e.kind, len(rank)), e.entry_id)

    return key


def allocate(
    entries: Iterable[Entry],
    *,
    paid_by: date | None = None,
    order: Sequence[str] = DEFAULT_ORDER,
    first: Mapping[str, date] = MappingProxyType({}),
) -> dict[str, Decimal]:
    """The unpaid part of every debit entry, by entry id.

    Credits dated on or before ``paid_by`` (all when None; a payment counts on its
    ``paid_on`` date, X-DUE) are applied to debits (X-ALLOCATION). A credit on a bill
    (:func:`on_bill`: a credit line, a refund, a negative adjustment) nets against that
    bill's debits only, so a bill's principal is its own charges less what was applied to
    it (PP-CWU-PENALTY); the rest (payments, the tax roll, credits on no bill, and what a
    bill's credits leave over once its debits are covered) is applied to debits oldest
    first. ``first`` names debits paid before all others by those credits dated from a day
    on (X-TAXROLL: payments go to the noticed arrears first, from the notice on; a payment
    dated before the notice stays with the debits it paid then). A credit never allocates
    more than its amount; what is left over is the credit balance. Debits posted after
    ``paid_by`` are included too (a credit balance pays them).
    """
    listed = list(entries)
    debits = [e for e in listed if e.amount > 0]
    debit_ids = {d.entry_id for d in debits}
    reversed_ = _reversals(listed, debit_ids, paid_by)
    unpaid = {d.entry_id: max(d.amount - reversed_.get(d.entry_id, ZERO), ZERO) for d in debits}
    of_bill: dict[str, list[Entry]] | None = None  # each bill's debits in order, when needed
    # The credits in groups by the day from which their ``first`` debits come first: an
    # earlier group pays before a later one (the greedy fill of one order is the same
    # whether its credits are pooled or taken one by one).
    starts = sorted(set(first.values()))
    pooled: dict[date, Decimal] = {}
    for e in listed:
        if e.amount < 0 and (paid_by is None or e.posted_on <= paid_by) and reverses(e) not in debit_ids:
            credit = -e.amount
            if on_bill(e):
                if of_bill is None:
                    of_bill = _debits_by_bill(debits, order)
                for d in of_bill.get(e.bill_id, ()):
                    applied = min(credit, unpaid[d.entry_id])
                    credit -= applied
                    unpaid[d.entry_id] -= applied
            if credit > 0:
                since = max((d for d in starts if d <= e.posted_on), default=date.min)
                pooled[since] = pooled.get(since, ZERO) + credit
    for since in sorted(pooled):
        credit = pooled[since]
        ahead = frozenset(i for i, d in first.items() if d <= since)
        for d in sorted(debits, key=_debit_order(order, ahead)):
            applied = min(credit, unpaid[d.entry_id])
            credit -= applied
            unpaid[d.entry_id] -= applied
    return unpaid


def _debits_by_bill(debits: list[Entry], order: Sequence[str]) -> dict[str, list[Entry]]:
    """Each bill's debits, oldest first and in ``order`` within a day."""
    out: dict[str, list[Entry]] = {}
    for d in sorted(debits, key=_debit_order(order, frozenset())):
        if d.bill_id:
            out.setdefault(d.bill_id, []).append(d)
    return out


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
