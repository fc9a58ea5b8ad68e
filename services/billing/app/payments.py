"""Payments: by the API and by lockbox file, and the late charges a back-dated one reverses (X-DUE)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from billing.adapters.items import entry_of, event_id_for
from billing.adapters.repository import BillingRepo
from billing.app.adjustments import adjustment_event
from billing.app.common import FEW_ACCOUNTS, FileResult, in_force, local_today
from billing.app.eligibility import withdraw_eligibilities
from billing.domain.assessment import (
    late_charge_corrections,
)
from billing.domain.bills import Bill
from billing.domain.csvfiles import LineError
from billing.domain.ledger import Entry
from billing.domain.payments import Payment, parse_lockbox_file
from billing.domain.terms import terms_of
from billing.events import (
    BillAdjusted,
    PaymentApplied,
)
from common.dynamo import to_item
from common.errors import PermanentError
from common.tariffs import TariffBook


class PaymentConflict(PermanentError):
    """The same reference (or idempotency key) with other values."""


PAYMENTS_ROUTE = "POST /payments"


def idempotency_scope(caller: str, route: str) -> str:
    """The scope of a client's ``Idempotency-Key``: its caller (the token's subject) and
    route, so one caller's key never meets another's (issue 27: a key shared by a tenant's
    customers let one block, or see, another's payment). A digest, so the reference built
    from it has a fixed length and safe characters whatever the subject is."""
    return hashlib.sha256(f"{route}\n{caller}".encode()).hexdigest()[:16]


def post_payments(
    payments: Sequence[Payment], *, repo: BillingRepo, now: datetime, book: TariffBook | None = None
) -> tuple[int, int, list[str]]:
    """Post new payments (oldest charge first is the ledger's allocation); returns (posted,
    suspense, conflicts). Idempotent by reference: a repeat changes nothing.

    With the ``book``, a payment dated before a late charge or penalty already assessed on
    its account is applied as of its date: the charge's excess is reversed
    (:func:`correct_for_backdated`)."""
    if not payments:
        return 0, 0, []
    tenant_refs = [(f"PAYMENT#{p.tenant}", p.reference) for p in payments]
    seen = repo.get_many(tenant_refs)
    conflicts: list[str] = []
    fresh: list[Payment] = []
    for p in payments:
        old = seen.get((f"PAYMENT#{p.tenant}", p.reference))
        if old is None:
            fresh.append(p)
        elif (old["account_id"], old["paid_on"], old["amount"]) != (
            p.account_id,
            p.paid_on.isoformat(),
            str(p.amount),
        ):
            conflicts.append(
                f"reference {p.reference!r}: already posted as {old['account_id']} {old['paid_on']} {old['amount']}, "
                f"now {p.account_id} {p.paid_on.isoformat()} {p.amount}"
            )
    known: set[str] = set()
    by_tenant: dict[str, list[str]] = {}
    for p in fresh:
        by_tenant.setdefault(p.tenant, []).append(p.account_id)
    for tenant, ids in by_tenant.items():
        known |= {f"{tenant}#{i}" for i in repo.existing_accounts(tenant, ids)}
    entries: list[Entry] = []
    refs: list[dict[str, Any]] = []
    events = []
    suspense = 0
    for p in fresh:
        in_suspense = f"{p.tenant}#{p.account_id}" not in known
        suspense += in_suspense
        entry = p.entry(suspense=in_suspense)
        if in_suspense:
            entry = replace(entry, account_id=f"SUSPENSE-{p.account_id}")
        entries.append(entry)
        refs.append(
            {
                "pk": f"PAYMENT#{p.tenant}",
                "sk": p.reference,
                "account_id": p.account_id,
                "paid_on": p.paid_on.isoformat(),
                "amount": str(p.amount),
                "channel": p.channel,
                "suspense": in_suspense,
                "recorded_at": now.isoformat(),
            }
        )
        events.append(
            PaymentApplied(
                event_id=event_id_for("PaymentApplied", p.tenant, p.reference),
                occurred_at=now,
                tenant=p.tenant,
                account_id=p.account_id,
                reference=p.reference,
                paid_on=p.paid_on,
                amount=p.amount,
                channel=p.channel,
                suspense=in_suspense,
            )
        )
    # Entries and events first, the reference items last: a reference that exists always
    # has its entry, so a retry after a crash skips it (never posts it twice).
    repo.write_entries(entries, events=events, now=now)
    if book is not None:
        known_entries = [e for e in entries if not e.account_id.startswith("SUSPENSE-")]
        correct_for_backdated(known_entries, repo=repo, book=book, now=now)
        for tenant in sorted({e.tenant for e in known_entries}):
            paying = {e.account_id for e in known_entries if e.tenant == tenant}
            withdraw_eligibilities(tenant, paying, repo=repo, book=book, now=now)
    repo.write(refs)
    return len(fresh), suspense, conflicts


def correct_for_backdated(
    payments: Sequence[Entry], *, repo: BillingRepo, book: TariffBook, now: datetime
) -> int:
    """X-DUE, X-IMMUTABLE: payments just posted count from their ``paid_on`` date, so a late
    charge or penalty assessed after that date is reassessed with them and its excess
    reversed by an adjustment referring to it (``assessment.late_charge_corrections``).
    Runs before the payments' reference items are written: a retry after a crash runs it
    again, and a charge already reversed is not reversed twice. Returns the reversals."""
    today = local_today(now)
    reversals: list[Entry] = []
    events: list[BillAdjusted] = []
    by_tenant: dict[str, dict[str, list[Entry]]] = {}
    for p in payments:
        if p.posted_on <= today:
            by_tenant.setdefault(p.tenant, {}).setdefault(p.account_id, []).append(p)
    for tenant, by_account in sorted(by_tenant.items()):
        if not in_force(book, tenant, today):
            continue
        terms = terms_of(book.in_force(tenant, today))
        # The accounts' stored entries: one query each for a few accounts, else one query of
        # the tenant's ledger (a file's worth of prefix queries costs more than one range).
        stored: dict[str, list[Entry]] = {a: [] for a in by_account}
        if len(by_account) <= FEW_ACCOUNTS:
            for account_id in by_account:
                stored[account_id] = [
                    entry_of(i) for i in repo.query(f"LEDGER#{tenant}", prefix=f"{account_id}#")
                ]
        else:
            for i in repo.query(f"LEDGER#{tenant}"):
                if i["account_id"] in stored:
                    stored[i["account_id"]].append(entry_of(i))
        # Only accounts with a late charge or penalty on or after a payment's date (most
        # payments are on time) need their bills.
        late = [
            a
            for a, paid in by_account.items()
            if any(
                e.kind in ("late_charge", "penalty") and e.posted_on >= min(p.posted_on for p in paid)
                for e in stored[a]
            )
        ]
        if not late:
            continue
        bills_by: dict[str, list[Bill]] = {a: [] for a in late}
        if len(late) <= FEW_ACCOUNTS:
            for account_id in late:
                bills_by[account_id] = repo.bills_of(tenant, account_id)
        else:
            for b in repo.all_bills(tenant):
                if b.account_id in bills_by:
                    bills_by[b.account_id].append(b)
        for account_id in sorted(late):
            bills = bills_by[account_id]
            found = late_charge_corrections(
                bills=bills,
                entries=[e for b in bills for e in b.entries()] + stored[account_id],
                terms=terms,
                payments=by_account[account_id],
                today=today,
            )
            reversals += found
            by_id = {b.bill_id: b for b in bills}
            events += [reversal_event(by_id[r.bill_id or ""], r, now) for r in found]
    # The memos first, then the reversals: a crash between them is finished by the retry,
    # which finds the same reversals (not yet written) and rewrites the same outbox items
    # (an outbox item published once: its INSERT); the other way round a retry would find
    # the charges reversed already and the memos would be lost.
    repo.write_entries([], events=events, now=now)
    repo.write_entries(reversals, now=now)
    return len(reversals)


REVERSAL_APPROVER = "billing (X-DUE back-dated payment)"


def reversal_event(bill: Bill, reversal: Entry, now: datetime) -> BillAdjusted:
    """A late charge or penalty reduced by a back-dated payment, as the same ``BillAdjusted``
    every adjustment publishes (the customer is sent a credit memo; the portal's ledger
    shows the entry): referring to the charge's bill, keyed by the reversal's entry id."""
    return adjustment_event(
        bill,
        reference=reversal.entry_id,
        posted_on=reversal.posted_on,
        split={reversal.fund: reversal.amount},
        reason=reversal.description,
        approver=REVERSAL_APPROVER,
        now=now,
        kind="reversal",
        rule_ids=(reversal.rule_id, "X-DUE", "X-IMMUTABLE"),
        derivation=reversal.description,
        reverses_entry_id=reversal.reference,
    )


def take_in_lockbox_file(
    data: bytes,
    *,
    repo: BillingRepo,
    tenants: Collection[str],
    now: datetime,
    book: TariffBook | None = None,
) -> FileResult:
    """A lockbox file (CONTRACTS.md ``payments/``): each payment counts from its ``paid_on``
    date, however late the file is posted (see :func:`post_payments`)."""
    accepted, errors = parse_lockbox_file(data, tenants, local_today(now))
    posted, suspense, conflicts = post_payments([p for _, p in accepted], repo=repo, now=now, book=book)
    lines = {p.reference: line for line, p in accepted}
    for c in conflicts:
        ref = c.split("'")[1]
        errors.append(LineError(lines.get(ref, 0), "reference", c))
    return FileResult(
        accepted=posted, unchanged=len(accepted) - posted - len(conflicts), rejected=errors, suspense=suspense
    )


def post_api_payment(
    tenant: str,
    account_id: str,
    amount: Decimal,
    paid_on: date,
    key: str,
    *,
    caller: str,
    repo: BillingRepo,
    now: datetime,
    given_paid_on: bool = True,
    book: TariffBook | None = None,
    route: str = PAYMENTS_ROUTE,
) -> dict[str, Any]:
    """A payment from the HTTP API, idempotent by the client's key within its ``caller``
    (the token's subject) and ``route`` (:func:`idempotency_scope`): the first result is
    stored and replayed; the same caller's key with another body is refused
    (PaymentConflict, naming only that caller's own earlier request). Another caller's
    same key is another payment. ``given_paid_on``: whether the body named the date; a body
    without one is the same body on any day (a retry after midnight replays the payment,
    dated as it first was).

    A key stored before keys were scoped (reference ``API-<key>``) still replays a retry
    with the same body (the same account, which the caller may pay); with another body it
    is not this caller's and is ignored. No data migration is needed.

    The reference item, the ledger entry and the PaymentApplied event are one transaction
    (two facts that must change together); this is one payment, not a hot path.
    """
    from billing.adapters.items import entry_item
    from common.dynamo import ConditionFailed, put_if_absent, transact
    from common.outbox import outbox_put

    reference = f"API-{idempotency_scope(caller, route)}-{key}"
    request = json.dumps(
        {
            "tenant": tenant,
            "account_id": account_id,
            "amount": str(amount),
            "paid_on": paid_on.isoformat() if given_paid_on else None,
        },
        sort_keys=True,
    )
    legacy = repo.get(f"PAYMENT#{tenant}", f"API-{key}")
    if legacy is not None and legacy.get("request") == request:
        return {
            "reference": f"API-{key}",
            "tenant": tenant,
            "account_id": account_id,
            "amount": str(amount),
            "paid_on": legacy["paid_on"],
            "suspense": bool(legacy.get("suspense")),
            "replayed": True,
        }
    known = bool(repo.existing_accounts(tenant, [account_id]))
    payment = Payment(tenant, account_id, reference, paid_on, amount, channel="api")
    entry = payment.entry(suspense=not known)
    if not known:
        entry = replace(entry, account_id=f"SUSPENSE-{account_id}")
    result = {
        "reference": reference,
        "tenant": tenant,
        "account_id": account_id,
        "amount": str(amount),
        "paid_on": paid_on.isoformat(),
        "suspense": not known,
    }
    ref_item = {
        "pk": f"PAYMENT#{tenant}",
        "sk": reference,
        "account_id": account_id,
        "paid_on": paid_on.isoformat(),
        "amount": str(amount),
        "channel": "api",
        "suspense": not known,
        "request": request,
        "recorded_at": now.isoformat(),
    }
    event = PaymentApplied(
        event_id=event_id_for("PaymentApplied", tenant, reference),
        occurred_at=now,
        tenant=tenant,
        account_id=account_id,
        reference=reference,
        paid_on=paid_on,
        amount=amount,
        channel="api",
        suspense=not known,
    )
    try:
        transact(
            repo.client,
            [
                put_if_absent(repo.table, ref_item),
                {"Put": {"TableName": repo.table, "Item": to_item(entry_item(entry, now.isoformat()))}},
                outbox_put(repo.table, event, now=now),
            ],
        )
    except ConditionFailed:
        repo.assessment_inputs_changed([f"LEDGER#{tenant}"])  # a retry after a crash marks too
        stored = repo.get(f"PAYMENT#{tenant}", reference) or {}
        if stored.get("request") != request:
            # The stored request is this caller's own (the key is scoped to it).
            raise PaymentConflict(
                f"{key!r} was used for your earlier payment {stored.get('request')}"
            ) from None
        first_paid_on = date.fromisoformat(stored["paid_on"]) if stored.get("paid_on") else paid_on
        if book is not None and known:  # a retry after a crash before the reversal: idempotent
            first = replace(entry, posted_on=first_paid_on)  # as the payment was first dated
            correct_for_backdated([first], repo=repo, book=book, now=now)
            withdraw_eligibilities(tenant, {account_id}, repo=repo, book=book, now=now)
        replayed = {"paid_on": first_paid_on.isoformat(), "suspense": bool(stored.get("suspense"))}
        return {**result, **replayed, "replayed": True}
    repo.assessment_inputs_changed([f"LEDGER#{tenant}"])
    if book is not None and known:
        correct_for_backdated([entry], repo=repo, book=book, now=now)
        withdraw_eligibilities(tenant, {account_id}, repo=repo, book=book, now=now)
    return {**result, "replayed": False}
