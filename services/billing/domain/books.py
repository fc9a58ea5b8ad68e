"""The village's books: a daily journal and a trial balance by fund (issue 35, GR-FUNDS,
SU-FUNDS).

The ledger (:mod:`billing.domain.ledger`) is already double entry: every entry moves its
amount between the account's receivable and one counter account (revenue of its fund,
cash, the tax roll). A village keeps its books by fund, though, and a payment is recorded
in the operation and maintenance fund while X-ALLOCATION applies it to the bill's lines of
every fund in proportion. So the journal takes each entry's counter side as it is (revenue
of the entry's fund, cash, the tax roll), and the receivable side by fund as the allocation
leaves it: the change, that day, of what is unpaid of each fund's debits. What a fund's
receivable moved by more or less than its own entries is the share another fund collected
for it, booked on the interfund account ("due to / due from other funds"), whose lines sum
to zero across funds on every day. Every day's journal therefore balances in each fund, and
a trial balance's receivable of each fund is the sum, over accounts, of what is unpaid of
that fund's charges (less the credit balances, kept in operation and maintenance, where the
ledger's remainders go).

The general-ledger codes come from the tenant's chart of accounts (tariff
``billing_terms.chart_of_accounts``), with :data:`DEFAULT_CHART` for what it leaves out.
Pure: entries in, lines out; reading them is the application layer's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from billing.domain.ledger import DEFAULT_ORDER, OM, ZERO, Entry, allocate, balance

RECEIVABLE = "receivable"
CASH = "cash"
TAX_ROLL = "tax_roll"
INTERFUND = "interfund"
REVENUE_KINDS = ("charge", "late_charge", "penalty", "adjustment", "credit")

DEFAULT_CHART: Mapping[str, tuple[str, str]] = {
    # ledger account -> (general-ledger code, name); the codes follow the PSC's uniform
    # system of accounts for Wisconsin sewer utilities in spirit; a tenant's own chart
    # (its tariff) replaces any of them.
    CASH: ("131", "Cash (deposits)"),
    RECEIVABLE: ("142", "Customer accounts receivable"),
    TAX_ROLL: ("145", "Receivable on the county tax roll"),
    INTERFUND: ("146", "Due to / due from other funds"),
    "charge": ("622", "Sewer service revenue"),
    "adjustment": ("622", "Sewer service revenue"),
    "credit": ("622", "Sewer service revenue"),
    "late_charge": ("470", "Forfeited discounts (late charges)"),
    "penalty": ("470", "Forfeited discounts (penalties)"),
}


@dataclass(frozen=True, slots=True)
class Line:
    """One journal line: a general-ledger account of one fund, debited or credited."""

    day: date
    code: str
    name: str
    fund: str
    debit: Decimal
    credit: Decimal
    entries: int

    @property
    def net(self) -> Decimal:
        return self.debit - self.credit


def chart_of(overrides: Mapping[str, str] | None) -> dict[str, tuple[str, str]]:
    """The chart with the tenant's codes (``{"cash": "1-131 Cash", ...}``: code, then name)."""
    chart = dict(DEFAULT_CHART)
    for account, text in (overrides or {}).items():
        if account not in DEFAULT_CHART:
            raise ValueError(
                f"chart_of_accounts: unknown ledger account {account!r} (one of {sorted(DEFAULT_CHART)})"
            )
        code, _, name = text.strip().partition(" ")
        if not code:
            raise ValueError(f"chart_of_accounts.{account}: needs a code")
        chart[account] = (code, name.strip() or DEFAULT_CHART[account][1])
    return chart


def _counter(e: Entry) -> str:
    if e.kind == "payment":
        return CASH
    if e.kind == "tax_roll":
        return TAX_ROLL
    return e.kind


def receivable_by_fund(
    entries: Sequence[Entry], as_of: date, order: Sequence[str] = DEFAULT_ORDER
) -> dict[str, Decimal]:
    """One account's receivable by fund at the end of ``as_of``: what is unpaid of each
    fund's debits (X-ALLOCATION), less the credit balance in operation and maintenance.
    The funds always sum to the account's ledger balance."""
    posted = [e for e in entries if e.posted_on <= as_of]
    if not posted:
        return {}
    unpaid = allocate(posted, paid_by=as_of, order=order)
    out: dict[str, Decimal] = {}
    for e in posted:
        if e.entry_id in unpaid:
            out[e.fund] = out.get(e.fund, ZERO) + unpaid[e.entry_id]
    unapplied = sum(out.values(), ZERO) - balance(posted, as_of=as_of)
    if unapplied:
        out[OM] = out.get(OM, ZERO) - unapplied
    return {f: v for f, v in out.items() if v}


def journal(
    ledgers: Mapping[str, Sequence[Entry]],
    start: date,
    end: date,
    chart: Mapping[str, tuple[str, str]] = DEFAULT_CHART,
    order: Sequence[str] = DEFAULT_ORDER,
) -> list[Line]:
    """The journal of the days in [start, end), summed by day, general-ledger account and
    fund. ``ledgers`` is every account's entries (by account id)."""
    sums: dict[tuple[date, str, str], list[Decimal | int]] = {}

    def book(day: date, account: str, fund: str, amount: Decimal, count: int = 1) -> None:
        if not amount:
            return
        row = sums.setdefault((day, account, fund), [ZERO, ZERO, 0])
        if amount > 0:
            row[0] += amount
        else:
            row[1] -= amount
        row[2] += count

    for entries in ledgers.values():
        days = sorted({e.posted_on for e in entries if start <= e.posted_on < end})
        # The receivable moves only with the entries: the day before an active day holds
        # what the previous active day left, so each day's figure is computed once.
        after: dict[str, Decimal] | None = None
        for day in days:
            today = [e for e in entries if e.posted_on == day]
            own: dict[str, Decimal] = {}
            for e in today:
                # the counter side, as the entry has it (revenue credited, cash debited)
                book(day, _counter(e), e.fund, -e.amount)
                own[e.fund] = own.get(e.fund, ZERO) + e.amount
            before = (
                after if after is not None else receivable_by_fund(entries, day - timedelta(days=1), order)
            )
            after = receivable_by_fund(entries, day, order)
            for fund in sorted(set(before) | set(after) | set(own)):
                moved = after.get(fund, ZERO) - before.get(fund, ZERO)
                book(day, RECEIVABLE, fund, moved, 0)
                # what the fund's receivable moved beyond its own entries: another fund's
                # collection for it (or its collection for another)
                book(day, INTERFUND, fund, own.get(fund, ZERO) - moved, 0)
    lines = []
    for (day, account, fund), (debit, credit, count) in sorted(sums.items()):
        code, name = chart[account]
        lines.append(Line(day, code, name, fund, Decimal(debit), Decimal(credit), int(count)))
    return _merged(lines)


def _merged(lines: Iterable[Line]) -> list[Line]:
    """Lines of ledger accounts that share a general-ledger code, summed into one."""
    out: dict[tuple[date, str, str], Line] = {}
    for ln in lines:
        key = (ln.day, ln.code, ln.fund)
        was = out.get(key)
        out[key] = (
            ln
            if was is None
            else Line(
                ln.day,
                ln.code,
                was.name,
                ln.fund,
                was.debit + ln.debit,
                was.credit + ln.credit,
                was.entries + ln.entries,
            )
        )
    return [out[k] for k in sorted(out)]


def trial_balance(
    ledgers: Mapping[str, Sequence[Entry]],
    as_of: date,
    chart: Mapping[str, tuple[str, str]] = DEFAULT_CHART,
    order: Sequence[str] = DEFAULT_ORDER,
) -> list[tuple[str, str, str, Decimal]]:
    """Every general-ledger account's balance by fund at the end of ``as_of`` (debit
    positive), from the beginning: (fund, code, name, balance). Each fund sums to zero."""
    sums: dict[tuple[str, str], Decimal] = {}

    def add(account: str, fund: str, amount: Decimal) -> None:
        if amount:
            code = chart[account][0]
            sums[(fund, code)] = sums.get((fund, code), ZERO) + amount

    names = {code: name for code, name in chart.values()}
    for entries in ledgers.values():
        own: dict[str, Decimal] = {}
        for e in entries:
            if e.posted_on <= as_of:
                add(_counter(e), e.fund, -e.amount)
                own[e.fund] = own.get(e.fund, ZERO) + e.amount
        held = receivable_by_fund(entries, as_of, order)
        for fund in set(held) | set(own):
            add(RECEIVABLE, fund, held.get(fund, ZERO))
            add(INTERFUND, fund, own.get(fund, ZERO) - held.get(fund, ZERO))
    return [(f, c, names[c], v) for (f, c), v in sorted(sums.items()) if v]
