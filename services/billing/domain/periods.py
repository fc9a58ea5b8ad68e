"""Which billing periods of an account a cycle bills (pure, X-PERIOD).

An account's first period is the one holding its ``opened_on``, or at go-live the period
its accounts line names in ``bills_from``, and never one starting before the tenant's first
tariff version. A cycle bills every period from that first one up to the period that ended
at its run that is not yet billed: an account loaded late is billed for its back periods
by the next run, or held with the reason. Periods follow the tenant's cycle, aligned to
January (one month for the Pleasant Prairie tenants, three for Grafton and Sullivan).

The back periods one run looks at are bounded: at most ``MAX_BACK_PERIODS`` per account,
oldest first (a held one counts), so a run's work stays bounded however far back an
account was opened; the next run goes on from where the backlog stands.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from datetime import date

from billing.domain.accounts import AccountRecord, period_start_of
from common.dates import add_months

MAX_BACK_PERIODS = 24


def months_of(start: date, end: date) -> int:
    """Months in the period ``[start, end)`` (periods start on the first of a month)."""
    return (end.year - start.year) * 12 + end.month - start.month


def first_period_start(account: AccountRecord, months: int, first_tariff: date) -> date:
    """The start of the account's first period in the system (X-PERIOD)."""
    start = account.bills_from or period_start_of(account.opened_on, months)
    floor = period_start_of(first_tariff, months)
    if floor < first_tariff:  # a tariff starting inside a period: its first whole period
        floor = add_months(floor, months)
    return max(start, floor)


def account_periods(
    account: AccountRecord, months: int, first_tariff: date, until: date
) -> Iterator[tuple[date, date]]:
    """Every period ``[start, end)`` of the account from its first one, ending by ``until``,
    in which it was open."""
    start = first_period_start(account, months, first_tariff)
    while True:
        end = add_months(start, months)
        if end > until:
            return
        if account.active_in(start, end):
            yield start, end
        elif account.closed_on is not None and account.closed_on <= start:
            return
        start = end


def back_periods(
    account: AccountRecord,
    months: int,
    first_tariff: date,
    current_start: date,
    billed: Collection[date],
    limit: int = MAX_BACK_PERIODS,
) -> list[tuple[date, date]]:
    """The account's periods before ``current_start`` not yet billed (by start), oldest
    first, at most ``limit``."""
    out: list[tuple[date, date]] = []
    if first_period_start(account, months, first_tariff) >= current_start:
        return out  # the common case: nothing before the cycle's own period
    for start, end in account_periods(account, months, first_tariff, current_start):
        if start not in billed:
            out.append((start, end))
            if len(out) >= limit:
                break
    return out
