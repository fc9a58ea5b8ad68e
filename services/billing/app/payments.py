"""Payments: by the API and by lockbox file, and the late charges a back-dated one reverses (X-DUE)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from billing.adapters.items import entry_of, event_id_for
from billing.adapters.repository import BillingRepo
from billing.app.adjustments import adjustment_event
from billing.app.common import FEW_ACCOUNTS, FileResult, LineReport, NoReport, batches, in_force, local_today
from billing.app.eligibility import withdraw_eligibilities
from billing.domain.assessment import (
    late_charge_corrections,
)
from billing.domain.bills import Bill
from billing.domain.csvfiles import LineError
from billing.domain.ledger import Entry
from billing.domain.payments import Payment, read_lockbox_lines
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
    chunks: Iterable[bytes],
    *,
    run: str,
    source: str,
    repo: BillingRepo,
    tenants: Collection[str],
    now: datetime,
    book: TariffBook | None = None,
    report: LineReport | None = None,
) -> FileResult:
    """A lockbox file (CONTRACTS.md ``payments/``), streamed :data:`BATCH_LINES` lines at a
    time. Payments are facts: a line whose reference was taken in with the same values is
    ``repeated``; with other values ``rejected`` naming both; a new one is ``accepted`` and
    posted, counting from its ``paid_on`` date however late the file is (X-DUE); one for an
    account billing does not know yet is ``waiting`` in suspense with that reason, taken in
    when the account arrives (:func:`release_waiting`). ``run``: this delivery of the upload
    (the same on its redeliveries): a reference this run stored for this very line counts
    as it did then, so a redelivery after a crash reports what the run without it would."""
    today = local_today(now)
    first = {t: book.first_effective(t) for t in book.tenants} if book is not None else None
    result = FileResult(report=report or NoReport(), payments=True)
    for batch in batches(read_lockbox_lines(chunks, tenants, today, first)):
        result.counts.lines += len(batch)
        good: list[tuple[int, Payment]] = []
        for line, got in batch:
            if isinstance(got, LineError):
                result.reject(got)
            else:
                good.append((line, got))
                result.tenants.add(got.tenant)
        if good:
            _take_payments(good, result=result, run=run, source=source, repo=repo, now=now, book=book)
    result.counts.check()
    return result


def _values(p: Payment) -> tuple[str, str, str]:
    return (p.account_id, p.paid_on.isoformat(), str(p.amount))


MAX_WAITING_LINES = 10_000
"""Lines of one file that may wait in suspense. A lockbox file is a day's payments of
accounts billing bills; more than this for accounts it does not know is a wrong file (or
one sent before its accounts file: send the accounts first), and past it each such line
is rejected with that reason (never silently dropped), so a hostile file cannot fill the
table (issue 27: 900,000 lines for unknown accounts)."""


def too_many_waiting(p: Payment) -> str:
    return (
        f"account {p.account_id!r} is not known at {p.tenant}, and this file already has"
        f" {MAX_WAITING_LINES:,} payments waiting for unknown accounts: upload the accounts first,"
        " then this file again"
    )


def waiting_reason(p: Payment) -> str:
    return (
        f"account {p.account_id!r} is not known at {p.tenant} yet: the payment waits in suspense"
        " until the account arrives (an accounts file or the staff account route)"
    )


def _take_payments(
    good: list[tuple[int, Payment]],
    *,
    result: FileResult,
    run: str,
    source: str,
    repo: BillingRepo,
    now: datetime,
    book: TariffBook | None,
) -> None:
    # The accounts first: a line for an unknown account past the file's bound of waiting
    # lines is refused without reading its reference (a file of 900,000 such lines, issue 27).
    by_tenant: dict[str, list[str]] = {}
    for _, p in good:
        by_tenant.setdefault(p.tenant, []).append(p.account_id)
    known = {(t, a) for t, ids in by_tenant.items() for a in repo.existing_accounts(t, ids)}
    room = MAX_WAITING_LINES - result.counts.waiting
    kept: list[tuple[int, Payment]] = []
    for line, p in good:
        if (p.tenant, p.account_id) in known:
            kept.append((line, p))
        elif room > 0:
            room -= 1
            kept.append((line, p))
        else:
            result.reject(LineError(line, "account_id", too_many_waiting(p), p.amount))
    good = kept
    stored = repo.get_many([(f"PAYMENT#{p.tenant}", p.reference) for _, p in good])
    state: dict[tuple[str, str], dict[str, Any]] = {
        (pk.split("#", 1)[1], sk): i for (pk, sk), i in stored.items()
    }
    fresh: list[tuple[int, Payment]] = []
    counts = result.counts
    for line, p in good:
        key = (p.tenant, p.reference)
        last = state.get(key)
        if last is None:
            fresh.append((line, p))
            state[key] = {
                "account_id": p.account_id,
                "paid_on": p.paid_on.isoformat(),
                "amount": str(p.amount),
                "run": run,
                "line": line,
            }
            continue
        held = (str(last["account_id"]), str(last["paid_on"]), str(last["amount"]))
        own = last.get("run") == run
        if own and int(last.get("line", -1)) == line:  # stored by the crashed delivery
            if last.get("kind") == "waiting":
                result.wait(LineError(line, "account_id", waiting_reason(p), p.amount))
            else:
                counts.accepted += 1
                result.tally("accepted", p.amount)
        elif held != _values(p):
            result.reject(
                LineError(
                    line,
                    "reference",
                    f"{p.reference!r} was taken in as {' '.join(held)}"
                    f"{' (waiting in suspense)' if last.get('suspense') else ''}; this line has {' '.join(_values(p))}",
                    p.amount,
                )
            )
        elif not own and last.get("suspense"):  # an earlier file's payment, still waiting
            result.wait(LineError(line, "account_id", waiting_reason(p), p.amount))
        else:
            counts.repeated += 1
            result.tally("repeated", p.amount)
    if not fresh:
        return
    taken = [(line, p) for line, p in fresh if (p.tenant, p.account_id) in known]
    waiting = [(line, p) for line, p in fresh if (p.tenant, p.account_id) not in known]
    if taken:
        _post(taken, run=run, repo=repo, now=now, book=book)
        counts.accepted += len(taken)
        for _, p in taken:
            result.tally("accepted", p.amount)
    if waiting:
        _suspend(waiting, run=run, source=source, repo=repo, now=now)
        for line, p in waiting:
            result.wait(LineError(line, "account_id", waiting_reason(p), p.amount))
        # An account stored while this batch was judged (an accounts file at the same
        # time) found nothing waiting: its payments are taken in now, never left behind.
        for tenant in sorted({p.tenant for _, p in waiting}):
            ids = [p.account_id for _, p in waiting if p.tenant == tenant]
            arrived = repo.existing_accounts(tenant, ids)
            if arrived:
                release_waiting(tenant, sorted(arrived), repo=repo, now=now, book=book)


def _reference_item(
    p: Payment, *, run: str, line: int, kind: str, suspense: bool, now: datetime
) -> dict[str, Any]:
    return {
        "pk": f"PAYMENT#{p.tenant}",
        "sk": p.reference,
        "account_id": p.account_id,
        "paid_on": p.paid_on.isoformat(),
        "amount": str(p.amount),
        "channel": p.channel,
        "suspense": suspense,
        "recorded_at": now.isoformat(),
        "run": run,
        "line": line,
        "kind": kind,
    }


def _post(
    taken: Sequence[tuple[int, Payment]],
    *,
    run: str,
    repo: BillingRepo,
    now: datetime,
    book: TariffBook | None,
    refs: Sequence[dict[str, Any]] | None = None,
) -> None:
    """Post payments of known accounts: entries and events first, then the back-dated
    corrections, the reference items last, so a reference that exists always has its
    entry and a retry after a crash skips it (never posts it twice). ``refs``: the reference
    items to write (a payment taken in from suspense keeps its own)."""
    entries = [p.entry() for _, p in taken]
    events = [
        PaymentApplied(
            event_id=event_id_for("PaymentApplied", p.tenant, p.reference),
            occurred_at=now,
            tenant=p.tenant,
            account_id=p.account_id,
            reference=p.reference,
            paid_on=p.paid_on,
            amount=p.amount,
            channel=p.channel,
        )
        for _, p in taken
    ]
    repo.write_entries(entries, events=events, now=now)
    if book is not None:
        correct_for_backdated(entries, repo=repo, book=book, now=now)
        for tenant in sorted({e.tenant for e in entries}):
            paying = {e.account_id for e in entries if e.tenant == tenant}
            withdraw_eligibilities(tenant, paying, repo=repo, book=book, now=now)
    if refs is None:
        refs = [
            _reference_item(p, run=run, line=line, kind="accepted", suspense=False, now=now)
            for line, p in taken
        ]
    repo.write(refs)


def _suspend(
    waiting: Sequence[tuple[int, Payment]], *, run: str, source: str, repo: BillingRepo, now: datetime
) -> None:
    """Payments for accounts not known yet: each waits as a ``SUSPENSE#<tenant>`` item
    (``<account>#<reference>``: the staff report's rows) with a ``SUSPENDED#<tenant>``
    mark per account (what an arriving account looks up, 100 a request); then the
    reference items, last, as for a posted payment."""
    repo.write(_suspense_items(waiting, source=source, now=now))
    repo.write(
        [
            _reference_item(p, run=run, line=line, kind="waiting", suspense=True, now=now)
            for line, p in waiting
        ]
    )


def _suspense_items(
    waiting: Sequence[tuple[int, Payment]], *, source: str, now: datetime
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    marks: dict[tuple[str, str], dict[str, Any]] = {}
    for line, p in waiting:
        items.append(
            {
                "pk": f"SUSPENSE#{p.tenant}",
                "sk": f"{p.account_id}#{p.reference}",
                "account_id": p.account_id,
                "reference": p.reference,
                "paid_on": p.paid_on.isoformat(),
                "amount": str(p.amount),
                "channel": p.channel,
                "reason": waiting_reason(p),
                "source": source[:800],
                "line": line,
                "since": now.isoformat(),
            }
        )
        marks[(p.tenant, p.account_id)] = {"pk": f"SUSPENDED#{p.tenant}", "sk": p.account_id}
    return items + list(marks.values())


def release_waiting(
    tenant: str,
    account_ids: Sequence[str],
    *,
    repo: BillingRepo,
    now: datetime,
    book: TariffBook | None = None,
) -> int:
    """Take in the payments waiting for these accounts, now known (issue 26): each posted as
    it would have been had the account been known (dated its ``paid_on``: X-DUE), its
    reference no longer in suspense, its suspense item and the account's mark removed last.
    Every step rewrites the same keys, so a retry after a crash finishes the work and posts
    nothing twice. Returns the payments taken in."""
    marks = repo.get_many([(f"SUSPENDED#{tenant}", a) for a in dict.fromkeys(account_ids)])
    if not marks:
        return 0
    waiting = [i for (_, a) in sorted(marks) for i in repo.query(f"SUSPENSE#{tenant}", prefix=f"{a}#")]
    if waiting:
        payments = [
            (
                int(i.get("line", 0)),
                Payment(
                    tenant,
                    str(i["account_id"]),
                    str(i["reference"]),
                    date.fromisoformat(str(i["paid_on"])),
                    Decimal(str(i["amount"])),
                    channel=str(i.get("channel") or "lockbox"),
                ),
            )
            for i in waiting
        ]
        refs = repo.get_many([(f"PAYMENT#{tenant}", p.reference) for _, p in payments])
        updated = [
            {**item, "suspense": False, "taken_in_at": now.isoformat()}
            for item in refs.values()
            if item.get("suspense")
        ]
        _post(payments, run="", repo=repo, now=now, book=book, refs=updated)
    repo.write([], deletes=[(str(i["pk"]), str(i["sk"])) for i in waiting])
    repo.write([], deletes=list(marks))
    return len(waiting)


SUSPENSE_COLUMNS = (
    "account_id",
    "reference",
    "paid_on",
    "amount",
    "channel",
    "reason",
    "source",
    "line",
    "since",
)


def waiting_payments(
    repo: BillingRepo, tenant: str, *, limit: int | None = None, cursor: int = 0
) -> tuple[list[dict[str, Any]], int | None]:
    """The payments waiting in suspense for an account that never arrived (the staff
    report, by account then reference), a page of ``limit`` from ``cursor``; and the next
    page's cursor (None at the end)."""
    rows: list[dict[str, Any]] = []
    more = False
    for n, item in enumerate(repo.query(f"SUSPENSE#{tenant}")):
        if n < cursor:
            continue
        if limit is not None and len(rows) >= limit:
            more = True
            break
        rows.append({c: (int(item[c]) if c == "line" else str(item.get(c, ""))) for c in SUSPENSE_COLUMNS})
    return rows, (cursor + len(rows) if more else None)


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
    channel: str = "api",
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
    payment = Payment(tenant, account_id, reference, paid_on, amount, channel=channel)
    entry = payment.entry()
    result = {
        "reference": reference,
        "tenant": tenant,
        "account_id": account_id,
        "amount": str(amount),
        "paid_on": paid_on.isoformat(),
        "suspense": not known,
    }
    ref_item = {
        **_reference_item(
            payment, run="api", line=0, kind="accepted" if known else "waiting", suspense=not known, now=now
        ),
        "request": request,
    }
    event = PaymentApplied(
        event_id=event_id_for("PaymentApplied", tenant, reference),
        occurred_at=now,
        tenant=tenant,
        account_id=account_id,
        reference=reference,
        paid_on=paid_on,
        amount=amount,
        channel=channel,
    )
    # A known account's payment: its reference, entry and event together. An unknown
    # account's waits in suspense (issue 26): its reference, suspense item and mark
    # together; it is posted when the account arrives (release_waiting).
    if known:
        writes = [
            {"Put": {"TableName": repo.table, "Item": to_item(entry_item(entry, now.isoformat()))}},
            outbox_put(repo.table, event, now=now),
        ]
    else:
        writes = [
            {"Put": {"TableName": repo.table, "Item": to_item(item)}}
            for item in _suspense_items([(0, payment)], source=f"api:{route}", now=now)
        ]
    try:
        transact(repo.client, [put_if_absent(repo.table, ref_item), *writes])
    except ConditionFailed:
        # a retry after a crash marks too
        repo.assessment_inputs_changed([f"LEDGER#{tenant}"], accounts={(tenant, account_id)})
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
    repo.assessment_inputs_changed([f"LEDGER#{tenant}"], accounts={(tenant, account_id)})
    if book is not None and known:
        correct_for_backdated([entry], repo=repo, book=book, now=now)
        withdraw_eligibilities(tenant, {account_id}, repo=repo, book=book, now=now)
    if not known and repo.existing_accounts(tenant, [account_id]):  # it arrived meanwhile
        release_waiting(tenant, [account_id], repo=repo, now=now, book=book)
    return {**result, "replayed": False}
