"""Disconnection eligibility withdrawn (GR-OVERDUE "unless paid or arranged")."""

from __future__ import annotations

from collections.abc import Collection
from datetime import date, datetime
from typing import Any

from billing.adapters.arrangements import arrangements_of
from billing.adapters.items import event_id_for
from billing.adapters.repository import BillingRepo
from billing.app.common import FEW_ACCOUNTS, in_force, local_today
from billing.app.taxroll import tax_notices
from billing.domain.assessment import (
    ELIGIBLE_MARK,
    Withdrawn,
    announced_by_overdue_notice,
    withdrawn_between_assessments,
    withdrawn_mark,
)
from billing.domain.terms import terms_of
from billing.events import (
    DisconnectionEligibilityWithdrawn,
)
from common.tariffs import TariffBook


def withdrawal_event(
    tenant: str, account_id: str, w: Withdrawn, today: date, now: datetime
) -> DisconnectionEligibilityWithdrawn:
    return DisconnectionEligibilityWithdrawn(
        event_id=event_id_for(
            "DisconnectionEligibilityWithdrawn", tenant, w.bill.bill_id, w.eligible_on.isoformat()
        ),
        occurred_at=now,
        tenant=tenant,
        account_id=account_id,
        bill_id=w.bill.bill_id,
        bill_date=w.bill.bill_date,
        due_date=w.bill.due_date,
        eligible_on=w.eligible_on,
        ended_on=w.ended_on,
        never_held=w.never_held,
        after_overdue_notice=announced_by_overdue_notice(w.bill, w.eligible_on),
        reason=w.reason,
        arrangement_id=w.arrangement_id,
        amount_unpaid=w.amount_unpaid,
        withdrawn_on=today,
    )


def withdraw_eligibilities(
    tenant: str, account_ids: Collection[str], *, repo: BillingRepo, book: TariffBook, now: datetime
) -> int:
    """Right after a payment (back-dated or not) or an arrangement is recorded for these
    accounts: each disconnection eligibility published for them that no longer holds today
    is withdrawn (``DisconnectionEligibilityWithdrawn``), so notices hears of it at once and
    not only from the next daily assessment (which withdraws whatever this missed: a crash
    between the two writes, a payment dated today, which counts from tomorrow). Only accounts
    with an eligibility not yet withdrawn are read further. The event is written before the
    mark: a retry after a crash between them finds the same withdrawal and rewrites the same
    outbox item (published once, on its INSERT). Returns the withdrawals."""
    today = local_today(now)
    if not account_ids or not in_force(book, tenant, today):
        return 0
    terms = terms_of(book.in_force(tenant, today))
    if not terms.overdue:
        return 0
    marks: dict[str, set[str]] = {a: set() for a in account_ids}
    if len(marks) <= FEW_ACCOUNTS:
        for account_id in marks:
            for i in repo.query(f"MARKS#{tenant}", prefix=f"{account_id}#"):
                marks[account_id].add(i["sk"].split("#", 1)[1])
    else:
        for account_id, kept in repo.marks(tenant).items():
            if account_id in marks:
                marks[account_id] = kept
    events: list[Any] = []
    items: list[dict[str, Any]] = []
    for account_id, kept in sorted(marks.items()):
        open_ = [
            m
            for m in kept
            if m.startswith(ELIGIBLE_MARK)
            and withdrawn_mark(m[len(ELIGIBLE_MARK) : -11], date.fromisoformat(m[-10:])) not in kept
        ]
        if not open_:
            continue
        bills = repo.bills_of(tenant, account_id)
        years = sorted({b.bill_date.year for b in bills} | {today.year})
        found = withdrawn_between_assessments(
            bills=bills,
            entries=repo.entries_of(tenant, account_id),
            marks=kept,
            notices=tax_notices(repo, tenant, account_id, years),
            terms=terms,
            today=today,
            arrangements=arrangements_of(repo, tenant, account_id),
        )
        events += [withdrawal_event(tenant, account_id, w, today, now) for w in found]
        items += [
            repo.mark_item(tenant, account_id, withdrawn_mark(w.bill.bill_id, w.eligible_on), now)
            for w in found
        ]
    repo.write_entries([], events=events, now=now)
    repo.write(items)
    return len(events)
