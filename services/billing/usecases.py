"""Billing's use cases: accounts, cycles, payments, the daily assessment, read models.

Each takes its repository, engine, tariffs and ``now`` as parameters (composition.py wires
the real ones; tests wire the same with moto). The rules themselves live in ``domain/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal, Protocol

from billing.adapters.items import bill_item, bill_key, bill_of, entry_of, event_id_for
from billing.adapters.repository import BillingRepo
from billing.arrangements import all_arrangements
from billing.domain.accounts import AccountRecord, parse_account_file
from billing.domain.assessment import (
    ELIGIBLE_MARK,
    TaxNotice,
    Withdrawn,
    announced_by_overdue_notice,
    assess_account,
    late_charge_corrections,
    next_action_on,
    withdrawn_between_assessments,
    withdrawn_mark,
)
from billing.domain.assessment_due import next_run_on
from billing.domain.bills import Bill
from billing.domain.csvfiles import LineError
from billing.domain.issuing import ChunkInputs, ChunkResult, Held, chunks, rate_chunk
from billing.domain.ledger import Entry
from billing.domain.payments import Payment, parse_lockbox_file
from billing.domain.rating import RatingEngine
from billing.domain.septage import Disposal, Permit
from billing.domain.terms import Terms, terms_of
from billing.events import (
    AdjustedFund,
    BillAdjusted,
    BillDelinquent,
    BillOverdue,
    DisconnectionEligibilityWithdrawn,
    DisconnectionEligible,
    Party,
    PaymentApplied,
    TaxRollCertified,
    TaxRollNoticed,
)
from common.dynamo import to_item
from common.errors import PermanentError, TransientError
from common.outbox import outbox_item
from common.tariffs import TariffBook

if TYPE_CHECKING:  # the consumption projection (and its producers' events) only where it is kept
    from billing.adapters.projections import Redetermined

# Accounts per chunk message. Each chunk reads its accounts' partitions once (accounts,
# usage, bills, ledger, projections: seven range queries) and issues its bills 25 a
# BatchWriteItem; 1,000 accounts is about 40 batch writes and well inside the function's
# timeout and memory, so a 10,000-account cycle is 10 invocations and 70 queries, not 40
# and 280 (on the local emulator, whose Query walks the whole partition, the difference is
# most of a cycle's reading).
CHUNK_ACCOUNTS = 1000
FEW_ACCOUNTS = 5  # a back-dated payment check reads these accounts one by one, more by partition
WRITE_STEP = 100  # bills written per pair of batch writes (entries + events, then the bills)


class Queue(Protocol):
    def send_many(self, bodies: Sequence[str]) -> None: ...


@dataclass
class FileResult:
    accepted: int = 0
    unchanged: int = 0
    rejected: list[LineError] = field(default_factory=list)
    suspense: int = 0


# --- accounts ---------------------------------------------------------------------------


def take_in_account_file(
    data: bytes, *, source: str, repo: BillingRepo, tenants: Collection[str], now: datetime
) -> FileResult:
    """accounts/ upload: good lines kept (as history), bad ones reported with line numbers."""
    accepted, errors = parse_account_file(data, tenants)
    latest: dict[tuple[str, str], AccountRecord] = {}
    for _, record in accepted:
        latest[(record.tenant, record.account_id)] = record
    repo.store_accounts(list(latest.values()), source=source, now=now)
    return FileResult(accepted=len(accepted), rejected=errors)


# --- cycles -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkRequest:
    tenant: str
    period_start: date
    period_end: date
    bill_date: date
    first: str
    last: str
    total_recs: str | None = None
    only: tuple[str, ...] = ()  # re-billing held accounts: just these

    def to_json(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "period_start": self.period_start.isoformat(),
            "period_end": self.period_end.isoformat(),
            "bill_date": self.bill_date.isoformat(),
            "first": self.first,
            "last": self.last,
            "total_recs": self.total_recs,
            "only": list(self.only),
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ChunkRequest:
        return cls(
            tenant=raw["tenant"],
            period_start=date.fromisoformat(raw["period_start"]),
            period_end=date.fromisoformat(raw["period_end"]),
            bill_date=date.fromisoformat(raw["bill_date"]),
            first=raw["first"],
            last=raw["last"],
            total_recs=raw.get("total_recs"),
            only=tuple(raw.get("only") or ()),
        )


def total_recs_of(accounts: Sequence[AccountRecord], start: date, end: date, book: TariffBook) -> Decimal:
    """SU-REC: REC units of every active account (residential: dwelling units x tariff)."""
    tariff = book.in_force("sullivan-sewer", start)
    per_dwelling = tariff.rec_units_residential_per_dwelling.value  # type: ignore[union-attr]
    total = Decimal(0)
    for a in accounts:
        if not a.active_in(start, end):
            continue
        if a.rec_units is not None:
            total += a.rec_units
        elif a.account_class == "residential":
            total += per_dwelling * a.dwelling_units
    return total


def plan_cycle(
    tenant: str,
    period_start: date,
    period_end: date,
    bill_date: date,
    *,
    repo: BillingRepo,
    book: TariffBook,
    size: int = CHUNK_ACCOUNTS,
) -> list[ChunkRequest]:
    """The chunk messages of a cycle: every account in account order, CHUNK_ACCOUNTS a
    message, and one message per earlier period still held (billed once its data is there)."""
    accounts = sorted(repo.accounts(tenant), key=lambda a: a.account_id)
    recs = (
        str(total_recs_of(accounts, period_start, period_end, book)) if tenant == "sullivan-sewer" else None
    )
    ids = [a.account_id for a in accounts if a.active_in(period_start, period_end)]
    requests = [
        ChunkRequest(tenant, period_start, period_end, bill_date, c[0], c[-1], recs)
        for c in chunks(ids, size)
    ]
    earlier: dict[tuple[date, date], list[str]] = {}
    for h in repo.held(tenant):
        if h.period_start != period_start:
            earlier.setdefault((h.period_start, h.period_end), []).append(h.account_id)
    for (start, end), held_ids in sorted(earlier.items()):
        recs_then = str(total_recs_of(accounts, start, end, book)) if tenant == "sullivan-sewer" else None
        for c in chunks(sorted(held_ids), size):
            requests.append(ChunkRequest(tenant, start, end, bill_date, c[0], c[-1], recs_then, tuple(c)))
    return requests


def load_chunk(req: ChunkRequest, repo: BillingRepo) -> ChunkInputs:
    accounts = repo.accounts_between(req.tenant, req.first, req.last)
    if req.only:
        accounts = [a for a in accounts if a.account_id in req.only]
    bills = repo.bills_between(req.tenant, req.first, req.last)
    history: dict[str, list[Entry]] = {}
    for e in repo.entries_between(req.tenant, req.first, req.last, bills):
        history.setdefault(e.account_id, []).append(e)
    last_bill: dict[str, date] = {}
    for b in bills:
        if b.period_start < req.period_start and b.bill_date > last_bill.get(b.account_id, date.min):
            last_bill[b.account_id] = b.bill_date
    parcels = [a.parcel_id for a in accounts if a.parcel_id]
    return ChunkInputs(
        tenant=req.tenant,
        period_start=req.period_start,
        period_end=req.period_end,
        bill_date=req.bill_date,
        accounts=accounts,
        billed=frozenset(b.account_id for b in bills if b.period_start == req.period_start),
        usage=repo.usage_between(req.tenant, req.period_start, req.period_end, req.first, req.last),
        erus=repo.erus(req.tenant, parcels, req.period_end, start=req.period_start)
        if req.tenant == "pleasant-prairie-stormwater"
        else {},
        strength=repo.strength_between(req.tenant, req.first, req.last, req.period_start, req.period_end),
        charges=repo.charges_between(req.tenant, req.first, req.last),
        billed_charges=frozenset(
            str(ln.details.get("charge_id")) for b in bills for ln in b.lines if ln.details.get("charge_id")
        ),
        history=history,
        last_bill_dates=last_bill,
        total_recs=Decimal(req.total_recs) if req.total_recs else None,
    )


def notice_of(account: AccountRecord) -> dict[str, Any]:
    """Who the bill goes to, as it was at issue (kept on the bill; BillIssued carries it)."""
    recipient, owner = account.recipient, account.owner
    return {
        "recipient": {
            "name": recipient[0],
            "address": recipient[1],
            "email": account.email,
            "email_opt_in": account.email_opt_in,
        },
        "owner": {"name": owner[0], "address": owner[1]},
        "service_address": account.service_address,
    }


def issue_chunk(
    req: ChunkRequest,
    *,
    repo: BillingRepo,
    engine: RatingEngine,
    book: TariffBook,
    now: datetime,
    dry_run: bool = False,
    crash_after: Callable[[int], None] | None = None,
) -> ChunkResult:
    """Rate and issue one chunk; exactly once per account and period (see write_issued)."""
    inputs = load_chunk(req, repo)
    terms = terms_of(book.in_force(req.tenant, req.period_start))
    result = rate_chunk(inputs, engine=engine, terms=terms)
    if dry_run:
        return result
    by_id = {a.account_id: a for a in inputs.accounts}
    step = WRITE_STEP
    for start in range(0, len(result.bills), step):
        part = result.bills[start : start + step]
        repo.write_issued(part, [notice_of(by_id[b.account_id]) for b in part], now=now, mark=False)
        if crash_after is not None:
            crash_after(start + len(part))
    # The assessment's due mark, once for the chunk after all its bills (items first, then
    # the mark: billing.domain.assessment_due). A redelivery that finds bills of the chunk
    # already issued marks too: a crash between the last bill and this mark loses no mark.
    if result.bills or inputs.billed & {a.account_id for a in inputs.accounts}:
        repo.assessment_inputs_changed([f"BILLS#{req.tenant}"])
    held_items = [repo.held_item(req.tenant, h, now) for h in result.held]
    was_held = {
        h.account_id
        for h in repo.held_between(req.tenant, req.first, req.last)
        if h.period_start == req.period_start
    }
    released = [
        (f"HELD#{req.tenant}", f"{b.account_id}#{b.period_start.isoformat()}")
        for b in result.bills
        if b.account_id in was_held
    ]
    summary = {
        "pk": f"CYCLE#{req.tenant}",
        "sk": f"PERIOD#{req.period_start.isoformat()}#{req.period_end.isoformat()}#CHUNK#{req.bill_date.isoformat()}#{req.first}",
        "bills": len(result.bills) + len(inputs.billed & {a.account_id for a in inputs.accounts}),
        "issued_now": len(result.bills),
        "total": str(sum((b.total for b in result.bills), Decimal("0.00"))),
        "held": [{"account_id": h.account_id, "reason": h.reason} for h in result.held][:500],
        "recorded_at": now.isoformat(),
    }
    repo.write(held_items + [summary], deletes=released)
    return result


def cycle_summary(tenant: str, start: date, end: date, repo: BillingRepo) -> dict[str, Any]:
    prefix = f"PERIOD#{start.isoformat()}#{end.isoformat()}#CHUNK#"
    bills = [b for b in repo.all_bills(tenant) if b.period_start == start]
    held = [h for h in repo.held(tenant) if h.period_start == start]
    chunks_run = list(repo.query(f"CYCLE#{tenant}", prefix=prefix))
    return {
        "tenant": tenant,
        "period": {"start": start.isoformat(), "end": end.isoformat()},
        "bills": len(bills),
        "total": str(sum((b.total for b in bills), Decimal("0.00"))),
        "held": [{"account_id": h.account_id, "reason": h.reason} for h in held],
        "chunks": len(chunks_run),
    }


# --- payments ---------------------------------------------------------------------------


class PaymentConflict(PermanentError):
    """The same reference (or idempotency key) with other values."""


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
        if not _in_force(book, tenant, today):
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


# --- the daily assessment -----------------------------------------------------------------


def tax_notices(repo: BillingRepo, tenant: str, account_id: str, years: Sequence[int]) -> list[TaxNotice]:
    found = repo.get_many([(f"TAXROLL#{tenant}#{y}", account_id) for y in years])
    return [
        TaxNotice(
            int(i["year"]), date.fromisoformat(i["noticed_on"]), tuple(i["entry_ids"]), Decimal(i["arrears"])
        )
        for i in found.values()
    ]


def run_assessment(today: date, *, repo: BillingRepo, book: TariffBook, now: datetime) -> dict[str, int]:
    """Assess every account of every tenant due for ``today`` (idempotent; catches up).

    One read of the mark first (``billing.domain.assessment_due``): a tenant with nothing
    due is not read at all; a tenant due is assessed in full, exactly as every day before,
    and its next day with work recorded, unless a write came in meanwhile."""
    counts = {"entries": 0, "events": 0, "tenants": 0}
    mark = repo.assessment_due()
    next_on = dict(mark.next_on) if mark is not None else {}
    for tenant in book.tenants:
        if mark is not None and not mark.due(tenant, today):
            continue
        counts["tenants"] += 1
        later = [v.effective_from for v in book.versions(tenant) if v.effective_from > today]
        if not _in_force(book, tenant, today):  # no tariff in force: nothing to assess or read
            next_on[tenant] = next_run_on(today, later)
            continue
        entries, events, candidates = _assess_tenant(
            tenant, terms_of(book.in_force(tenant, today)), today, repo=repo, now=now
        )
        counts["entries"] += entries
        counts["events"] += events
        next_on[tenant] = next_run_on(today, [*later, *candidates])
    if counts["tenants"]:
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
            extra.append(_notice_item(tenant, account_id, account, n, now))
        for c in out.certified:
            extra.append(
                {
                    **_notice_item(
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


def _in_force(book: TariffBook, tenant: str, on: date) -> bool:
    try:
        book.in_force(tenant, on)
    except Exception:  # noqa: BLE001 - a date before the tenant's first tariff: nothing to assess
        return False
    return True


def _notice_item(
    tenant: str, account_id: str, account: AccountRecord | None, n: TaxNotice, now: datetime
) -> dict[str, Any]:
    owner = account.owner if account else ("", "")
    return {
        "pk": f"TAXROLL#{tenant}#{n.year}",
        "sk": account_id,
        "year": n.year,
        "noticed_on": n.noticed_on.isoformat(),
        "entry_ids": list(n.entry_ids),
        "arrears": str(n.arrears),
        "parcel_id": account.parcel_id if account else None,
        "owner_name": owner[0],
        "recorded_at": now.isoformat(),
    }


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


__all__ = ["ChunkRequest", "FileResult", "Held", "PaymentConflict", "bill_item", "bill_key"]


def run_cycle(
    request: Any,
    *,
    start: Callable[[Any], Any],
    calendar_months: Callable[[str, date], int],
    repo: BillingRepo,
    book: TariffBook,
    queue: Queue,
) -> int:
    """A cycle schedule fired: record the cycle (once) and fan its accounts out in chunks.

    The fan-out runs again on a rerun (the same schedule input again): chunks skip what is
    already billed, so a cycle that crashed anywhere is finished by running it again.
    """
    from billing.domain.cycles import local_date, period_ending

    start(request)
    end = period_ending(request.scheduled_time, 1)[1]
    from common.dates import add_months

    months = calendar_months(request.tenant, add_months(end, -1))
    period_start, period_end = period_ending(request.scheduled_time, months)
    plan = plan_cycle(
        request.tenant, period_start, period_end, local_date(request.scheduled_time), repo=repo, book=book
    )
    queue.send_many([json.dumps(c.to_json()) for c in plan])
    return len(plan)


def keep_producer_event(
    event: Any,
    *,
    projections: Any,
    clock: Any,
    rerate: Callable[[list[ParcelChange], datetime], object] | None = None,
) -> None:
    """Keep a sampling or stormwater event in billing's projections (by business key); an
    ERU or credit kept for a period already billed is then re-rated (``rerate``, see
    :func:`rerate_parcels`). Kept first: a crash before the re-rating is finished by the
    redelivery, which keeps the same values again and re-rates."""
    from sampling.events import SamplingCostCharged, SamplingCostsCharged, StrengthClassified
    from stormwater.events import CreditChanged, ERUDetermined, ERUsDetermined, FeeCharged, RefundGranted

    now = clock.now()
    if isinstance(event, StrengthClassified):
        projections.keep_strength(event, now)
    elif isinstance(event, SamplingCostCharged):
        projections.keep_charge(event, event.account_id, now)
    elif isinstance(event, SamplingCostsCharged):  # a lab file's chunk: each charge by its own key
        for charge in event.charges:
            projections.keep_charge(charge, charge.account_id, now)
    elif isinstance(event, ERUDetermined):
        projections.keep_eru(event, now)
    elif isinstance(event, ERUsDetermined):  # a chunk of a GIS extract's: each kept as if alone
        projections.keep_erus(event.determinations, now)
    elif isinstance(event, CreditChanged):
        projections.keep_credit(event, now)
    elif isinstance(event, FeeCharged):
        if event.account_id is None:
            raise PermanentError(
                f"fee {event.fee_id}: account_id is required to bill it (parcel {event.parcel_id})"
            )
        projections.keep_charge(event, event.account_id, now)
    elif isinstance(event, RefundGranted):
        projections.post_refund(event, now)
    else:  # pragma: no cover - the handler only passes the kinds above
        raise PermanentError(f"billing keeps no {type(event).__name__}")
    if rerate is not None:
        changes = parcel_changes(event)
        if changes:
            rerate(changes, now)


def local_today(now: datetime) -> date:
    from billing.domain.cycles import UTILITY_TZ

    return now.astimezone(UTILITY_TZ).date()


def post_api_payment(
    tenant: str,
    account_id: str,
    amount: Decimal,
    paid_on: date,
    key: str,
    *,
    repo: BillingRepo,
    now: datetime,
    given_paid_on: bool = True,
    book: TariffBook | None = None,
) -> dict[str, Any]:
    """A payment from the HTTP API, idempotent by the client's key: the first result is
    stored and replayed; the same key with another body is refused (PaymentConflict).
    ``given_paid_on``: whether the body named the date; a body without one is the same body
    on any day (a retry after midnight replays the payment, dated as it first was).

    The reference item, the ledger entry and the PaymentApplied event are one transaction
    (two facts that must change together); this is one payment, not a hot path.
    """
    from billing.adapters.items import entry_item
    from common.dynamo import ConditionFailed, put_if_absent, transact
    from common.outbox import outbox_put

    reference = f"API-{key}"
    request = json.dumps(
        {
            "tenant": tenant,
            "account_id": account_id,
            "amount": str(amount),
            "paid_on": paid_on.isoformat() if given_paid_on else None,
        },
        sort_keys=True,
    )
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
            raise PaymentConflict(f"{key!r} was used for another payment ({stored.get('request')})") from None
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


def dry_run(
    tenant: str, period_start: date, *, repo: BillingRepo, book: TariffBook, today: date
) -> dict[str, Any]:
    """A whole cycle rated, nothing written: what would be billed and what held."""
    from common.dates import add_months

    engine = RatingEngine(book)
    months = book.in_force(tenant, period_start).billing_period_months
    period_end = add_months(period_start, months)
    bills: list[dict[str, Any]] = []
    held: list[dict[str, str]] = []
    for req in plan_cycle(tenant, period_start, period_end, today, repo=repo, book=book):
        if req.period_start != period_start:
            continue
        result = rate_chunk(
            load_chunk(req, repo), engine=engine, terms=terms_of(book.in_force(tenant, period_start))
        )
        bills += [
            {"account_id": b.account_id, "bill_id": b.bill_id, "total": str(b.total), "lines": len(b.lines)}
            for b in result.bills
        ]
        held += [{"account_id": h.account_id, "reason": h.reason} for h in result.held]
    return {
        "tenant": tenant,
        "period": {"start": period_start.isoformat(), "end": period_end.isoformat()},
        "dry_run": True,
        "bills": bills,
        "total": str(sum((Decimal(b["total"]) for b in bills), Decimal("0.00"))),
        "held": held,
    }


# --- staff preview and septage (issue 14) -------------------------------------------------


class PreviewRefused(PermanentError):
    """A preview the account or tariff cannot give; the message starts with the field."""


def preview_bill(
    tenant: str,
    account_id: str,
    period_start: date,
    period_end: date,
    water_gallons: Decimal | None,
    *,
    repo: BillingRepo,
    book: TariffBook,
) -> dict[str, Any]:
    """The bill ``account_id`` would get for the period, rated with the cycle's engine and
    inputs (``rating_input``), nothing written. ``water_gallons`` stands in for the
    period's determined consumption; without it, what billing holds is used."""
    from billing.domain.issuing import Usage, rating_input
    from billing.domain.rating import RatingError
    from billing.domain.rating.output import bill_to_contract

    account = repo.account(tenant, account_id)
    if account is None:
        raise PreviewRefused(f"account_id: no account {account_id!r} at {tenant}")
    if period_end <= period_start:
        raise PreviewRefused(f"period_end: {period_end} is not after period_start {period_start}")
    recs = (
        str(total_recs_of(repo.accounts(tenant), period_start, period_end, book))
        if tenant == "sullivan-sewer"
        else None
    )
    req = ChunkRequest(
        tenant, period_start, period_end, period_end, account_id, account_id, recs, (account_id,)
    )
    inp = load_chunk(req, repo)
    if water_gallons is not None:
        inp = replace(inp, usage={account_id: Usage(volume_gal=water_gallons)})
    rated_input = rating_input(inp, account)
    if isinstance(rated_input, str):
        raise PreviewRefused(f"water_gallons: {rated_input}")
    try:
        rated = RatingEngine(book).rate(rated_input)
    except RatingError as exc:
        raise PreviewRefused(str(exc)) from None
    return {"account_id": account_id, "preview": True, **bill_to_contract(rated)}


class SeptageConflict(PermanentError):
    """A permit id or disposal reference already used for other values."""


def register_permit(permit: Permit, *, repo: BillingRepo, now: datetime) -> dict[str, Any]:
    """GR-SEPTAGE-PERMIT: keep a checked permit, idempotent by its permit id (the same
    permit again is replayed; other values under the id are refused)."""
    from billing.domain.septage import TENANT, check_permit

    values = check_permit(permit).to_json()
    request = json.dumps(values, sort_keys=True)
    item = {
        "pk": f"SEPTAGE_PERMIT#{TENANT}",
        "sk": permit.permit_id,
        "request": request,
        "recorded_at": now.isoformat(),
    }
    if repo.put_new(item):
        return {**values, "replayed": False}
    stored = repo.get(f"SEPTAGE_PERMIT#{TENANT}", permit.permit_id) or {}
    if stored.get("request") != request:
        raise SeptageConflict(f"permit_id: {permit.permit_id!r} is registered with other values")
    return {**values, "replayed": True}


def septage_permit(permit_id: str, *, repo: BillingRepo) -> Permit | None:
    from billing.domain.septage import TENANT, permit_of

    stored = repo.get(f"SEPTAGE_PERMIT#{TENANT}", permit_id)
    return None if stored is None else permit_of(json.loads(stored["request"]))


def record_disposal(
    disposal: Disposal, *, repo: BillingRepo, book: TariffBook, now: datetime
) -> dict[str, Any]:
    """GR-SEPTAGE-CHARGE: a disposal by a permitted unit is charged at the tariff's septage
    rate in force on the disposal date; the disposal item keeps the line with its
    derivation and, when the permit names the hauler's account, the charge is posted to
    that account's ledger in the same transaction. Idempotent by ``reference``."""
    from billing.adapters.items import entry_item
    from billing.domain.septage import CHARGE_RULE, TENANT, charge_disposal
    from common.dynamo import ConditionFailed, put_if_absent, transact

    tariff = book.in_force(TENANT, disposal.disposed_on)
    permit = septage_permit(disposal.permit_id, repo=repo)
    line = charge_disposal(disposal, permit, tariff)  # type: ignore[arg-type]
    account_id = permit.account_id if permit is not None else None
    asked = {
        "permit_id": disposal.permit_id,
        "licence_number": disposal.licence_number,
        "gallons": str(disposal.gallons),
        "disposed_on": disposal.disposed_on.isoformat(),
    }
    request = json.dumps(asked, sort_keys=True)
    result = {**asked, "reference": disposal.reference, "account_id": account_id, "line": line}
    item = {
        "pk": f"SEPTAGE_DISPOSAL#{TENANT}",
        "sk": disposal.reference,
        "request": request,
        "line": json.dumps(line, sort_keys=True),
        "account_id": account_id,
        "recorded_at": now.isoformat(),
    }
    actions = [put_if_absent(repo.table, item)]
    if account_id is not None:
        entry = Entry(
            entry_id=f"SEPTAGE-{disposal.reference}",
            tenant=TENANT,
            account_id=account_id,
            posted_on=disposal.disposed_on,
            kind="charge",
            amount=Decimal(line["amount"]),
            fund="om",
            rule_id=CHARGE_RULE,
            reference=disposal.reference,
            description=(
                f"Septage disposal {line['quantity']} kgal x {line['rate']} "
                f"(unit {disposal.licence_number}, permit {disposal.permit_id})"
            ),
        )
        actions.append(
            {"Put": {"TableName": repo.table, "Item": to_item(entry_item(entry, now.isoformat()))}}
        )
    try:
        transact(repo.client, actions)
    except ConditionFailed:
        repo.assessment_inputs_changed([f"LEDGER#{TENANT}"] if account_id is not None else [])
        stored = repo.get(f"SEPTAGE_DISPOSAL#{TENANT}", disposal.reference) or {}
        if stored.get("request") != request:
            raise SeptageConflict(
                f"reference: {disposal.reference!r} was used for another disposal"
            ) from None
        return {**result, "replayed": True}
    repo.assessment_inputs_changed([f"LEDGER#{TENANT}"] if account_id is not None else [])
    return {**result, "replayed": False}


def post_adjustment(
    tenant: str,
    account_id: str,
    bill_id: str,
    amount: Decimal,
    reason: str,
    approver: str,
    reference: str,
    posted_on: date,
    *,
    repo: BillingRepo,
    now: datetime,
    funds: Mapping[str, Decimal] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """X-IMMUTABLE: a correction is a credit (negative) or debit memo that refers to the
    bill, with its reason and approver; never an edit of the bill. Idempotent by the
    staff's ``reference``: the same again is replayed, other values are refused.

    ``funds`` splits the amount by fund (a re-rating, GR-FUNDS): one entry per fund, all
    under the one reference; without it the whole amount is operation and maintenance.
    ``extra`` is kept on the reference item (what the adjustment stands on). The same
    transaction puts ``BillAdjusted`` in the outbox: the customer is sent the memo."""
    from billing.adapters.items import entry_item
    from common.dynamo import ConditionFailed, put_if_absent, transact

    extra = extra or {}
    bills = {b.bill_id: b for b in repo.bills_of(tenant, account_id)}
    bill = bills.get(bill_id)
    if bill is None:
        raise AdjustmentRefused(f"bill_id: no bill {bill_id!r} on account {account_id}")
    asked: dict[str, Any] = {
        "account_id": account_id,
        "bill_id": bill_id,
        "amount": str(amount),
        "reason": reason,
        "approver": approver,
    }
    if funds is not None:
        if sum(funds.values(), Decimal("0.00")) != amount:
            raise AdjustmentRefused(f"funds: {dict(funds)} do not add up to the amount {amount}")
        asked["funds"] = {f: str(v) for f, v in sorted(funds.items())}
    request = json.dumps(asked, sort_keys=True)
    split = {"om": amount} if funds is None else dict(sorted(funds.items()))
    entries = [
        Entry(
            entry_id=f"ADJ-{reference}" if funds is None else f"ADJ-{reference}-{fund}",
            tenant=tenant,
            account_id=account_id,
            posted_on=posted_on,
            kind="adjustment",
            amount=part,
            fund=fund,
            rule_id="X-IMMUTABLE",
            bill_id=bill_id,
            reference=reference,
            description=f"{reason} (approved by {approver})",
        )
        for fund, part in split.items()
    ]
    ref_item = {
        **extra,
        "pk": f"ADJUSTMENT#{tenant}",
        "sk": reference,
        "request": request,
        "posted_on": posted_on.isoformat(),
        "recorded_at": now.isoformat(),
    }
    rerating = extra.get("kind") == "rerating"

    def volume(name: str) -> Decimal | None:
        return Decimal(str(extra[name])) if rerating and extra.get(name) is not None else None

    event = adjustment_event(
        bill,
        reference=reference,
        posted_on=posted_on,
        split=split,
        reason=reason,
        approver=approver,
        now=now,
        kind="rerating" if rerating else "correction",
        from_volume_gal=volume("from_volume_gal"),
        to_volume_gal=volume("to_volume_gal"),
        source_event_id=extra.get("source_event_id") if rerating else None,
        rule_ids=tuple(extra.get("rule_ids") or ("X-IMMUTABLE",)),
        derivation=extra.get("derivation"),
    )
    result = {
        "entry_id": entries[0].entry_id,
        "bill_id": bill_id,
        "amount": str(amount),
        "posted_on": posted_on.isoformat(),
    }
    try:
        transact(
            repo.client,
            [
                put_if_absent(repo.table, ref_item),
                {"Put": {"TableName": repo.table, "Item": to_item(outbox_item(event, now=now))}},
            ]
            + [
                {"Put": {"TableName": repo.table, "Item": to_item(entry_item(e, now.isoformat()))}}
                for e in entries
            ],
        )
    except ConditionFailed:
        repo.assessment_inputs_changed([f"LEDGER#{tenant}"])  # a retry after a crash marks too
        stored = repo.get(f"ADJUSTMENT#{tenant}", reference) or {}
        if stored.get("request") != request:
            raise AdjustmentRefused(f"reference: {reference!r} was used for another adjustment") from None
        return {**result, "posted_on": stored.get("posted_on"), "replayed": True}
    repo.assessment_inputs_changed([f"LEDGER#{tenant}"])
    return {**result, "replayed": False}


def adjustment_event(
    bill: Bill,
    *,
    reference: str,
    posted_on: date,
    split: Mapping[str, Decimal],
    reason: str,
    approver: str,
    now: datetime,
    kind: Literal["rerating", "correction", "reversal"] = "correction",
    rule_ids: Sequence[str] = ("X-IMMUTABLE",),
    derivation: str | None = None,
    **extra: Any,
) -> BillAdjusted:
    """``BillAdjusted`` for an adjustment of ``bill`` (a staff memo, a re-rating or a late
    charge's reversal): one contract for every adjustment, keyed by its ``reference``."""
    amount = sum(split.values(), Decimal("0.00"))
    return BillAdjusted(
        event_id=event_id_for("BillAdjusted", bill.tenant, reference),
        occurred_at=now,
        tenant=bill.tenant,
        account_id=bill.account_id,
        bill_id=bill.bill_id,
        bill_number=bill.bill_number,
        period_start=bill.period_start,
        period_end=bill.period_end,
        reference=reference,
        posted_on=posted_on,
        amount=amount,
        memo="credit" if amount < 0 else "debit",
        lines=tuple(AdjustedFund(fund=f, amount=v) for f, v in sorted(split.items())),
        reason=reason[:2000],
        approver=approver,
        kind=kind,
        rule_ids=tuple(dict.fromkeys(rule_ids)),
        derivation=derivation[:2000] if derivation else None,
        **extra,
    )


class AdjustmentRefused(PermanentError):
    """An adjustment that names no bill of the account, or reuses a reference."""


# --- re-rating a billed period (X-IMMUTABLE) ----------------------------------------------

RERATING_APPROVER = "billing (X-IMMUTABLE re-rating)"


def rerate_billed(
    redetermined: Sequence[Redetermined],
    *,
    repo: BillingRepo,
    engine: RatingEngine,
    book: TariffBook,
    now: datetime,
) -> list[dict[str, Any]]:
    """Consumption re-determined for periods: where a bill was issued for the period, the
    period is re-rated and the difference booked as one adjustment on the bill (X-IMMUTABLE).

    The adjustments of a bill form a chain (``RERATE-<bill>-001``, ``-002``, ...), each
    keeping the volume it brought the bill to: the next re-rating starts from there, so the
    same re-determination again books nothing (its volume is where the chain stands) and
    another volume books only the further difference. A chain link written concurrently by
    another delivery makes this one retry (TransientError) and start from the new link. Each
    link keeps the determination time of the volume it brought the bill to, and a
    determination older than the chain's latest books nothing: two deliveries racing each
    other end with the bill at the later determination, whichever booked first.
    One BatchGetItem finds the bills of the chunk's re-determinations. A period that cannot
    be rated again (its tariff version changed, its account is gone) books nothing and is
    kept under ``RERATE-REFUSED#<tenant>`` with the reason; the consumption is still kept."""
    from billing.adapters.repository import usage_of
    from billing.domain.rerating import CannotRerate, billed_total_recs, rerate

    keys = {
        bill_key(r.tenant, r.new["account_id"], date.fromisoformat(r.new["period_start"])): r
        for r in redetermined
    }
    bills = repo.get_many(list(keys))
    booked: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    recs: dict[tuple[str, str], Decimal] = {}
    for key, item in sorted(bills.items()):
        r = keys[key]
        bill = bill_of(item)
        if bill.period_end.isoformat() != r.new["period_end"]:
            continue  # another period shape (not this bill's period): nothing billed on it
        # The account as the cycle rated it: the version in force when the bill was issued
        # (accounts are kept as history; a later change of meter or class is not this
        # period's). Items kept before the history was ordered fall back to the current one.
        account = repo.account_as_of(
            r.tenant, bill.account_id, datetime.fromisoformat(item["issued_at"])
        ) or repo.account(r.tenant, bill.account_id)
        if account is None:
            refused.append(_refusal(r, bill.bill_id, "account_id: the bill's account is not kept", now))
            continue
        chain = sorted(
            repo.query(f"ADJUSTMENT#{r.tenant}", prefix=f"RERATE-{bill.bill_id}-"), key=lambda i: i["sk"]
        )
        # A later determination already re-rated the bill (a delivery racing this one booked
        # its link first): this one is stale and books nothing; its kept item's conditional
        # write fails too, and the retry finds the later determination kept.
        determined = r.new.get("determined_at")
        links_at = [datetime.fromisoformat(str(i["determined_at"])) for i in chain if i.get("determined_at")]
        if determined and links_at and datetime.fromisoformat(determined) < max(links_at):
            continue
        billed = usage_of(r.old)
        if chain:
            last = chain[-1]
            billed = replace(
                billed,
                volume_gal=Decimal(str(last["to_volume_gal"])),
                winter_average_gal=Decimal(str(last["to_winter_average_gal"]))
                if last.get("to_winter_average_gal") is not None
                else None,
            )
        new = usage_of(r.new)
        total_recs = None
        if r.tenant == "sullivan-sewer":
            total_recs = billed_total_recs(bill)
            if total_recs is None:  # a bill without its SU-REC derivation: the accounts then
                period = (bill.period_start.isoformat(), item["issued_at"])
                if period not in recs:
                    recs[period] = total_recs_as_of(
                        repo, r.tenant, datetime.fromisoformat(item["issued_at"]), bill, book
                    )
                total_recs = recs[period]
        strength = repo.strength_between(
            r.tenant, bill.account_id, bill.account_id, bill.period_start, bill.period_end
        ).get(bill.account_id)
        try:
            rerated = rerate(
                bill,
                account,
                billed=billed,
                new=new,
                sequence=len(chain) + 1,
                engine=engine,
                strength=strength,
                total_recs=total_recs,
            )
        except CannotRerate as exc:
            refused.append(_refusal(r, bill.bill_id, str(exc), now))
            continue
        if rerated is None:
            continue
        try:
            booked.append(
                post_adjustment(
                    r.tenant,
                    bill.account_id,
                    bill.bill_id,
                    rerated.amount,
                    rerated.reason,
                    RERATING_APPROVER,
                    rerated.reference,
                    local_today(now),
                    repo=repo,
                    now=now,
                    funds=rerated.funds,
                    extra={
                        "kind": "rerating",
                        "account_id": bill.account_id,
                        "from_volume_gal": str(rerated.from_volume_gal),
                        "to_volume_gal": str(rerated.to_volume_gal),
                        "to_winter_average_gal": None
                        if new.winter_average_gal is None
                        else str(new.winter_average_gal),
                        "source_event_id": rerated.source_event_id,
                        "determined_at": determined,
                        "tariff_versions": list(rerated.tariff_versions),
                        "total_recs": None if total_recs is None else str(total_recs),
                        "rule_lines": json.dumps([[r, str(b), str(a)] for r, b, a in rerated.lines]),
                    },
                )
            )
        except AdjustmentRefused:  # another delivery wrote this link first: start again from it
            raise TransientError(
                f"re-rating of bill {bill.bill_id}: {rerated.reference} was just written"
            ) from None
    repo.write(refused)
    return booked


def _refusal(r: Redetermined, bill_id: str, reason: str, now: datetime) -> dict[str, Any]:
    """A billed period that cannot be rated again is kept for staff with the reason (the
    consumption itself is still kept: the rest of metering's chunk is not lost for it)."""
    return {
        "pk": f"RERATE-REFUSED#{r.tenant}",
        "sk": f"{bill_id}#{r.new['source_event_id']}",
        "bill_id": bill_id,
        "account_id": r.new["account_id"],
        "from_volume_gal": r.old.get("volume_gal"),
        "to_volume_gal": r.new["volume_gal"],
        "source_event_id": r.new["source_event_id"],
        "reason": reason[:1000],
        "rule_id": "X-IMMUTABLE",
        "recorded_at": now.isoformat(),
    }


def total_recs_as_of(repo: BillingRepo, tenant: str, at: datetime, bill: Bill, book: TariffBook) -> Decimal:
    """SU-REC's total REC units as the cycle that issued ``bill`` counted them: every
    account's version recorded by ``at`` (the bill's issue; accounts are kept as history,
    one item per change), active in the bill's period. One history query per account: only
    for a bill that does not carry the figure in its SU-REC line (``billed_total_recs``)."""
    then = [repo.account_as_of(tenant, a.account_id, at) for a in repo.accounts(tenant)]
    return total_recs_of([a for a in then if a is not None], bill.period_start, bill.period_end, book)


# --- re-rating a billed stormwater period whose ERU or credit changed (X-IMMUTABLE) ------


@dataclass(frozen=True)
class ParcelChange:
    """An ERU determination or a credit change kept for a parcel, from ``effective_from``."""

    tenant: str
    parcel_id: str
    effective_from: date
    source_event_id: str
    what: str  # as the memo names it: "ERU 2.00 from 2026-09-13 (manual_override OV-1, ...)"


def parcel_changes(event: Any) -> list[ParcelChange]:
    """The parcel changes a stormwater event brings (none for other events)."""
    from stormwater.events import CreditChanged, ERUDetermined, ERUsDetermined

    if isinstance(event, ERUsDetermined):
        return [c for d in event.determinations for c in parcel_changes(d)]
    if isinstance(event, ERUDetermined):
        return [
            ParcelChange(
                event.tenant,
                event.parcel_id,
                event.effective_from,
                event.event_id,
                f"ERU of parcel {event.parcel_id} determined {event.eru} from {event.effective_from} "
                f"({event.cause} {event.cause_ref}, determination {event.sequence}, event {event.event_id})",
            )
        ]
    if isinstance(event, CreditChanged) and event.status in ("approved", "revoked"):
        return [
            ParcelChange(
                event.tenant,
                event.parcel_id,
                event.effective_from,
                event.event_id,
                f"{event.rule_id} credit {event.credit_id} of parcel {event.parcel_id} {event.status} "
                f"({event.credit_percent}%) from {event.effective_from} (event {event.event_id})",
            )
        ]
    return []


def rerate_parcels(
    changes: Sequence[ParcelChange],
    *,
    repo: BillingRepo,
    engine: RatingEngine,
    book: TariffBook,
    now: datetime,
) -> list[dict[str, Any]]:
    """X-IMMUTABLE, X-PERIOD: an ERU or credit kept for a parcel from a day inside or before
    a period already billed (a back-dated override, a reconsideration or appeal outcome, a
    credit approved or revoked with an effective date in a billed period, or an event that
    simply arrived after the cycle) re-rates each such bill rated on the parcel (the bill's
    own parcel: an account moved to another parcel since is found through the parcels its
    versions were recorded on, ``PARCEL-ACCOUNTS#``; versions recorded before those items
    existed are found only while the account is still on the parcel): the
    period rated with what is kept now against what the bill stands at, the difference one
    adjustment on the bill in the same chain as consumption re-ratings
    (``RERATE-<bill>-<nnn>``, :func:`post_adjustment`, published as ``BillAdjusted``).

    A change effective today or later touches no billed period (a cycle bills periods that
    have ended), so an extract's ordinary determinations cost nothing here. The same event
    again finds the bill standing at its values and books nothing; a concurrent link makes
    this delivery retry from it (TransientError). A bill that cannot be rated again (its
    tariff version changed) is refused and listed for staff (``RERATE-REFUSED#<tenant>``).

    Reconsideration (PP-CWU-RECONSIDER): its refund of the reconsidered bill comes as
    ``RefundGranted``; its new ERU applies from the decision date, which is after that
    bill's period (decided after it was issued), so no period is corrected twice."""
    from billing.domain.accounts import STORMWATER
    from billing.domain.rerating import CannotRerate, rerate_parcel, standing

    today = local_today(now)
    late = [c for c in changes if c.tenant == STORMWATER and c.effective_from < today]
    if not late:
        return []
    by_parcel: dict[str, list[ParcelChange]] = {}
    for c in late:
        by_parcel.setdefault(c.parcel_id, []).append(c)
    booked: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    # The accounts that are, or ever were, on a changed parcel; of their bills, those rated on
    # a changed parcel (the bill's own parcel: an account moved since is still re-rated there).
    accounts = {a.account_id: a for a in repo.accounts(STORMWATER)}
    candidates = {a for a, account in accounts.items() if account.parcel_id in by_parcel}
    for parcel in by_parcel:
        candidates |= repo.accounts_ever_on(STORMWATER, parcel) & accounts.keys()
    for account in (accounts[a] for a in sorted(candidates)):
        items = repo.query(f"BILLS#{STORMWATER}", prefix=f"{account.account_id}#")
        for item in sorted(items, key=lambda i: i["sk"]):
            bill = bill_of(item)
            issued_at = datetime.fromisoformat(item["issued_at"])
            # the version in force at issue, which the period is rated with; read here only for
            # a bill that does not name its parcel, else once the bill is found to be touched
            at_issue = None if bill.parcel_id else repo.account_as_of(STORMWATER, bill.account_id, issued_at)
            parcel_id = bill.parcel_id or (at_issue or account).parcel_id or ""
            mine = by_parcel.get(parcel_id)
            if not mine or bill.period_end <= min(c.effective_from for c in mine):
                continue
            if bill.parcel_id:
                at_issue = repo.account_as_of(STORMWATER, bill.account_id, issued_at)
            rated_on = at_issue or account
            relevant = [c for c in mine if c.effective_from < bill.period_end]
            eru = repo.erus(STORMWATER, [parcel_id], bill.period_end, start=bill.period_start).get(parcel_id)
            if eru is None:
                continue
            chain = sorted(
                repo.query(f"ADJUSTMENT#{STORMWATER}", prefix=f"RERATE-{bill.bill_id}-"),
                key=lambda i: i["sk"],
            )
            try:
                rerated = rerate_parcel(
                    bill,
                    rated_on,
                    eru=eru,
                    stands_at=_stands_at(bill, chain, standing),
                    sequence=len(chain) + 1,
                    engine=engine,
                    what="; ".join(c.what for c in relevant),
                    source_event_id=relevant[-1].source_event_id,
                )
            except CannotRerate as exc:
                refused.append(
                    {
                        "pk": f"RERATE-REFUSED#{STORMWATER}",
                        "sk": f"{bill.bill_id}#{relevant[-1].source_event_id}",
                        "bill_id": bill.bill_id,
                        "account_id": bill.account_id,
                        "source_event_id": relevant[-1].source_event_id,
                        "reason": str(exc)[:1000],
                        "rule_id": "X-IMMUTABLE",
                        "recorded_at": now.isoformat(),
                    }
                )
                continue
            if rerated is None:
                continue
            try:
                booked.append(
                    post_adjustment(
                        STORMWATER,
                        bill.account_id,
                        bill.bill_id,
                        rerated.amount,
                        rerated.reason,
                        RERATING_APPROVER,
                        rerated.reference,
                        today,
                        repo=repo,
                        now=now,
                        funds=rerated.funds,
                        extra={
                            "kind": "rerating",
                            "account_id": bill.account_id,
                            "source_event_id": rerated.source_event_id,
                            "tariff_versions": list(rerated.tariff_versions),
                            "standing": json.dumps({f: str(v) for f, v in rerated.standing.items()}),
                            "standing_rules": json.dumps(
                                {r: str(v) for r, v in rerated.standing_rules.items()}
                            ),
                            "rule_ids": list(rerated.rule_ids),
                            "derivation": rerated.derivation[:2000],
                        },
                    )
                )
            except AdjustmentRefused:  # another delivery wrote this link first: start again from it
                raise TransientError(
                    f"re-rating of bill {bill.bill_id}: {rerated.reference} was just written"
                ) from None
    repo.write(refused)
    return booked


def _stands_at(
    bill: Bill,
    chain: Sequence[dict[str, Any]],
    standing: Callable[[Bill], tuple[dict[str, Decimal], dict[str, Decimal]]],
) -> tuple[dict[str, Decimal], dict[str, Decimal]]:
    """What the bill stands at: the last re-rating's figures where it kept them, else the
    bill's rated lines plus each re-rating's amounts by fund (its rules as billed)."""
    if chain and chain[-1].get("standing"):
        last = chain[-1]
        return (
            {f: Decimal(v) for f, v in json.loads(last["standing"]).items()},
            {r: Decimal(v) for r, v in json.loads(last.get("standing_rules") or "{}").items()},
        )
    funds, rules = standing(bill)
    for link in chain:
        for fund, amount in (
            json.loads(link["request"]).get("funds") or {"om": json.loads(link["request"])["amount"]}
        ).items():
            funds[fund] = funds.get(fund, Decimal("0.00")) + Decimal(amount)
    return funds, rules


# --- disconnection eligibility withdrawn (GR-OVERDUE "unless paid or arranged") -----------


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
    from billing.arrangements import arrangements_of

    today = local_today(now)
    if not account_ids or not _in_force(book, tenant, today):
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
