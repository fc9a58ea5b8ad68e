"""The daily assessment: late charges, penalties, overdue, delinquency, eligibility and the tax roll."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from billing.adapters.arrangements import all_arrangements
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
    due is not read at all; a tenant due is assessed in full, exactly as every day before,
    and its next day with work recorded, unless a write came in meanwhile. ``record_day``
    (the record of a day assessed in full) is called before the mark moves past the day: a
    crash between the two leaves the day due, so its redelivery records it (issue 26)."""
    counts = {"entries": 0, "events": 0, "tenants": 0}
    mark = repo.assessment_due()
    next_on = dict(mark.next_on) if mark is not None else {}
    for tenant in book.tenants:
        if mark is not None and not mark.due(tenant, today):
            continue
        counts["tenants"] += 1
        later = [v.effective_from for v in book.versions(tenant) if v.effective_from > today]
        if not in_force(book, tenant, today):  # no tariff in force: nothing to assess or read
            next_on[tenant] = next_run_on(today, later)
            continue
        entries, events, candidates = _assess_tenant(
            tenant, terms_of(book.in_force(tenant, today)), today, repo=repo, now=now
        )
        counts["entries"] += entries
        counts["events"] += events
        next_on[tenant] = next_run_on(today, [*later, *candidates])
    if counts["tenants"]:
        if record_day is not None:
            record_day()
        repo.set_assessment_due(next_on, mark)
    return counts


def _assess_tenant(
    tenant: str, terms: Terms, today: date, *, repo: BillingRepo, now: datetime
) -> tuple[int, int, list[date | None]]:
    """One tenant's full assessment for ``today``: (entries, events) written, and each
    account's next day with work as it stands after them (``next_action_on``)."""
    bills_by: dict[str, list[Bill]] = {}
    for b in repo.all_bills(tenant):
        bills_by.setdefault(b.account_id, []).append(b)
    if not bills_by:
        return 0, 0, []
    ledger_by: dict[str, list[Entry]] = {}
    for e in repo.all_entries(tenant, [b for bs in bills_by.values() for b in bs]):
        ledger_by.setdefault(e.account_id, []).append(e)
    marks = repo.marks(tenant)
    accounts = {a.account_id: a for a in repo.accounts(tenant)}
    arrangements = all_arrangements(repo, tenant)
    notices_by: dict[str, list[TaxNotice]] = {}
    years = list(range(min(b.bill_date.year for bs in bills_by.values() for b in bs), today.year + 1))
    for y in years:
        for item in repo.query(f"TAXROLL#{tenant}#{y}"):
            notices_by.setdefault(item["sk"], []).append(
                TaxNotice(
                    y,
                    date.fromisoformat(item["noticed_on"]),
                    tuple(item["entry_ids"]),
                    Decimal(item["arrears"]),
                )
            )
    new_entries: list[Entry] = []
    extra: list[dict[str, Any]] = []
    events: list[Any] = []
    candidates: list[date | None] = []
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
        candidates.append(
            next_action_on(
                bills=bills,
                entries=ledger_by.get(account_id, []) + out.entries,
                marks=marks.get(account_id, set()) | set(out.marks),
                notices=notices_by.get(account_id, []) + out.notices,
                terms=terms,
                today=today,
                arrangements=arrangements.get(account_id, ()),
            )
        )
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
    # The run's own writes do not mark the tenant pending: their effect is in the candidates.
    repo.write_entries(new_entries, extra=extra, events=events, now=now, assessing=True)
    return len(new_entries), len(events), candidates


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
