"""The daily assessment: late charges, penalties, overdue, delinquency, eligibility and the tax roll."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from billing.adapters.arrangements import all_arrangements, arrangements_of
from billing.adapters.items import event_id_for
from billing.adapters.repository import BillingRepo
from billing.app.common import in_force, local_today
from billing.app.eligibility import withdrawal_event
from billing.app.taxroll import notice_item
from billing.domain.accounts import AccountRecord
from billing.domain.assessment import (
    TaxNotice,
    assess_account,
    next_action_on,
)
from billing.domain.assessment_due import next_run_on
from billing.domain.bills import Bill
from billing.domain.ledger import Entry
from billing.domain.terms import Terms, terms_of
from billing.events import (
    BillDelinquent,
    BillOverdue,
    DisconnectionEligible,
    Party,
    TaxRollCertified,
    TaxRollNoticed,
)
from common.tariffs import TariffBook


def run_assessment(
    today: date,
    *,
    repo: BillingRepo,
    book: TariffBook,
    now: datetime,
    record_day: Callable[[], object] | None = None,
) -> dict[str, int]:
    """Assess every account of every tenant due for ``today`` (idempotent; catches up).

    One read of the mark first (``billing.domain.assessment_due``): a tenant with nothing
    due is not read at all. A tenant due is assessed in full the first time, on a day a
    tariff version or a tax-roll day falls since its last run, and after a write that did
    not name its accounts; otherwise only the accounts with an ``ASSESSDUE#`` entry on a
    day from its last assessed day to today (issue 31: a day's cost follows that day's
    work, not the tenant's history). Either way each account assessed gets an entry on its
    next day with work, and the tenant its next run day, unless a write came in meanwhile.
    ``record_day`` (the record of a day assessed) is called before the mark moves past the
    day: a crash between the two leaves the day due, so its redelivery records it (issue 26)."""
    counts = {"entries": 0, "events": 0, "tenants": 0}
    mark = repo.assessment_due()
    next_on = dict(mark.next_on) if mark is not None else {}
    assessed_on = dict(mark.assessed_on) if mark is not None else {}
    days = {t: set(ds) for t, ds in mark.days.items()} if mark is not None else {}
    for tenant in book.tenants:
        if mark is not None and not mark.due(tenant, today):
            continue
        counts["tenants"] += 1
        later = [v.effective_from for v in book.versions(tenant) if v.effective_from > today]
        if not in_force(book, tenant, today):  # no tariff in force: nothing to assess or read
            next_on[tenant] = next_run_on(today, later)
            continue
        terms = terms_of(book.in_force(tenant, today))
        since = assessed_on.get(tenant)
        only: set[str] | None = None
        if since is not None and tenant not in (mark.full if mark is not None else ()):
            if not _full_run_between(book, tenant, terms, since, today):
                span = [since + timedelta(days=n) for n in range((today - since).days + 1)]
                only = repo.accounts_due(tenant, span)
        entries, events, accounts = _assess_tenant(tenant, terms, today, repo=repo, now=now, only=only)
        counts["entries"] += entries
        counts["events"] += events
        ahead = {d for d in accounts.values() if d > today}
        if only is not None:
            ahead |= {d for d in days.get(tenant, ()) if d > today}
        days[tenant] = ahead
        assessed_on[tenant] = today
        next_on[tenant] = next_run_on(today, [*later, *ahead])
    if counts["tenants"]:
        if record_day is not None:
            record_day()
        repo.set_assessment_due(next_on, mark, assessed_on=assessed_on, days=days)
    return counts


def _full_run_between(book: TariffBook, tenant: str, terms: Terms, since: date, today: date) -> bool:
    """Whether a day after ``since`` up to ``today`` needs the tenant assessed in full: a
    tariff version taking effect (the terms of every account change) or a tax-roll day
    (the notice and the certification are of every account with arrears, in one event)."""
    if any(since < v.effective_from <= today for v in book.versions(tenant)):
        return True
    tr = terms.tax_roll
    if tr is None:
        return False
    return any(
        since < tr.day(y, md) <= today
        for y in range(since.year, today.year + 1)
        for md in (tr.notice_on, tr.penalty_on, tr.certify_on)
    )


def _inputs(
    tenant: str, repo: BillingRepo, only: set[str] | None
) -> tuple[dict[str, list[Bill]], dict[str, list[Entry]], dict[str, set[str]], dict[str, Any]]:
    """The assessment's inputs: of every account of the tenant (``only`` None), else of
    those accounts only, each read by its own keys (bills, ledger, marks, arrangements and
    tax-roll notices of its account: Queries on its prefix, never the tenant's partitions)."""
    bills_by: dict[str, list[Bill]] = {}
    ledger_by: dict[str, list[Entry]] = {}
    if only is None:
        for b in repo.all_bills(tenant):
            bills_by.setdefault(b.account_id, []).append(b)
        for e in repo.all_entries(tenant, [b for bs in bills_by.values() for b in bs]):
            ledger_by.setdefault(e.account_id, []).append(e)
        return bills_by, ledger_by, repo.marks(tenant), all_arrangements(repo, tenant)
    marks: dict[str, set[str]] = {}
    arrangements: dict[str, Any] = {}
    for account_id in sorted(only):
        bills = repo.bills_of(tenant, account_id)
        if not bills:
            continue
        bills_by[account_id] = bills
        ledger_by[account_id] = repo.entries_of(tenant, account_id, bills)
        marks[account_id] = repo.marks_of(tenant, account_id)
        arrangements[account_id] = arrangements_of(repo, tenant, account_id)
    return bills_by, ledger_by, marks, arrangements


def _assess_tenant(
    tenant: str,
    terms: Terms,
    today: date,
    *,
    repo: BillingRepo,
    now: datetime,
    only: set[str] | None = None,
) -> tuple[int, int, dict[str, date]]:
    """One tenant's assessment for ``today`` (of every account, or of ``only`` those):
    (entries, events) written, and each assessed account's next day with work as it stands
    after them (``next_action_on``), written as its ``ASSESSDUE#`` entry of that day."""
    bills_by, ledger_by, marks, arrangements = _inputs(tenant, repo, only)
    if not bills_by:
        return 0, 0, {}
    accounts = (
        {a.account_id: a for a in repo.accounts(tenant)}
        if only is None
        else repo.accounts_of(tenant, bills_by)
    )
    notices_by: dict[str, list[TaxNotice]] = {}
    years = list(range(min(b.bill_date.year for bs in bills_by.values() for b in bs), today.year + 1))
    if only is None:
        items = [item for y in years for item in repo.query(f"TAXROLL#{tenant}#{y}")]
    else:
        items = list(
            repo.get_many([(f"TAXROLL#{tenant}#{y}", a) for y in years for a in sorted(bills_by)]).values()
        )
    for item in items:
        notices_by.setdefault(item["sk"], []).append(
            TaxNotice(
                int(item["pk"].rsplit("#", 1)[1]),
                date.fromisoformat(item["noticed_on"]),
                tuple(item["entry_ids"]),
                Decimal(item["arrears"]),
            )
        )
    for notices in notices_by.values():
        notices.sort(key=lambda n: n.year)
    new_entries: list[Entry] = []
    extra: list[dict[str, Any]] = []
    events: list[Any] = []
    next_days: dict[str, date] = {}
    for account_id, bills in sorted(bills_by.items()):
        out = assess_account(
            bills=bills,
            entries=ledger_by.get(account_id, []),
            marks=marks.get(account_id, set()),
            notices=notices_by.get(account_id, []),
            terms=terms,
            today=today,
            arrangements=arrangements.get(account_id, ()),
        )
        upcoming = next_action_on(
            bills=bills,
            entries=ledger_by.get(account_id, []) + out.entries,
            marks=marks.get(account_id, set()) | set(out.marks),
            notices=notices_by.get(account_id, []) + out.notices,
            terms=terms,
            today=today,
            arrangements=arrangements.get(account_id, ()),
        )
        if upcoming is not None:
            next_days[account_id] = upcoming
        if not out:
            continue
        new_entries += out.entries
        extra += [repo.mark_item(tenant, account_id, m, now) for m in out.marks]
        account = accounts.get(account_id)
        events += _assessment_events(tenant, account_id, account, out, terms, now)
        for n in out.notices:
            extra.append(notice_item(tenant, account_id, account, n, now))
        for c in out.certified:
            extra.append(
                {
                    **notice_item(
                        tenant,
                        account_id,
                        account,
                        next(x for x in notices_by.get(account_id, []) + out.notices if x.year == c.year),
                        now,
                    ),
                    "certified_on": c.certified_on.isoformat(),
                    "certified_arrears": str(c.arrears),
                    "certified_penalty": str(c.penalty),
                }
            )
    certified = [c for c in extra if "certified_on" in c]
    if certified and terms.tax_roll is not None:
        year = int(certified[0]["year"])
        events.append(
            TaxRollCertified(
                event_id=event_id_for("TaxRollCertified", tenant, str(year)),
                occurred_at=now,
                tenant=tenant,
                year=year,
                certified_on=date.fromisoformat(certified[0]["certified_on"]),
                parcels=len(certified),
                total=sum(
                    (Decimal(c["certified_arrears"]) + Decimal(c["certified_penalty"]) for c in certified),
                    Decimal("0.00"),
                ),
                rule_id=terms.tax_roll.rule_id,
            )
        )
    # The run's own writes do not mark the tenant pending: their effect is in the next days.
    # Each account's entry of its next day is written with them (before: a crash leaves it).
    extra = repo.due_items(tenant, next_days) + extra
    repo.write_entries(new_entries, extra=extra, events=events, now=now, assessing=True)
    return len(new_entries), len(events), next_days


def _assessment_events(
    tenant: str, account_id: str, account: AccountRecord | None, out: Any, terms: Terms, now: datetime
) -> list[Any]:
    events: list[Any] = []
    for o in out.overdue:
        events.append(
            BillOverdue(
                event_id=event_id_for("BillOverdue", tenant, o.bill.bill_id),
                occurred_at=now,
                tenant=tenant,
                account_id=account_id,
                bill_id=o.bill.bill_id,
                bill_date=o.bill.bill_date,
                due_date=o.bill.due_date,
                overdue_on=o.overdue_on,
                amount_unpaid=o.amount_unpaid,
                disconnection_eligible_on=o.disconnection_eligible_on,
            )
        )
    for el in out.eligible:
        events.append(
            DisconnectionEligible(
                event_id=event_id_for(
                    "DisconnectionEligible", tenant, el.bill.bill_id, el.eligible_on.isoformat()
                ),
                occurred_at=now,
                tenant=tenant,
                account_id=account_id,
                bill_id=el.bill.bill_id,
                bill_date=el.bill.bill_date,
                due_date=el.bill.due_date,
                overdue_on=el.overdue_on,
                eligible_on=el.eligible_on,
                amount_unpaid=el.amount_unpaid,
                reason=el.reason,
                arrangement_id=el.arrangement_id,
            )
        )
    events += [withdrawal_event(tenant, account_id, w, local_today(now), now) for w in out.withdrawn]
    for d in out.delinquent:
        events.append(
            BillDelinquent(
                event_id=event_id_for("BillDelinquent", tenant, d.bill.bill_id),
                occurred_at=now,
                tenant=tenant,
                account_id=account_id,
                bill_id=d.bill.bill_id,
                bill_date=d.bill.bill_date,
                delinquent_on=d.delinquent_on,
                amount_delinquent=d.amount_delinquent,
                penalty=d.penalty,
                penalty_percent_per_month=d.percent,
            )
        )
    if terms.tax_roll is not None and account is not None:
        tr = terms.tax_roll
        for n in out.notices:
            owner = account.owner
            events.append(
                TaxRollNoticed(
                    event_id=event_id_for("TaxRollNoticed", tenant, str(n.year), account_id),
                    occurred_at=now,
                    tenant=tenant,
                    year=n.year,
                    account_id=account_id,
                    parcel_id=account.parcel_id or "",
                    noticed_on=n.noticed_on,
                    arrears=n.arrears,
                    penalty_percent=tr.penalty_percent,
                    pay_by=tr.day(n.year, tr.penalty_on),
                    certify_on=tr.day(n.year, tr.certify_on),
                    owner=Party(name=owner[0], address=owner[1]),
                    occupant=Party(name=account.name, address=account.service_address),
                    rule_id=tr.rule_id,
                )
            )
    return events
