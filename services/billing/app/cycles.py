"""Billing cycles: a cycle planned in chunks of accounts, each chunk rated and its bills issued."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Protocol

from billing.adapters.repository import BillingRepo
from billing.domain.accounts import AccountRecord
from billing.domain.issuing import ChunkInputs, ChunkResult, chunks, rate_chunk
from billing.domain.ledger import Entry
from billing.domain.rating import RatingEngine
from billing.domain.terms import terms_of
from common.tariffs import TariffBook

# Accounts per chunk message. Each chunk reads its accounts' partitions once (accounts,
# usage, bills, ledger, projections: seven range queries) and issues its bills 25 a
# BatchWriteItem; 1,000 accounts is about 40 batch writes and well inside the function's
# timeout and memory, so a 10,000-account cycle is 10 invocations and 70 queries, not 40
# and 280 (on the local emulator, whose Query walks the whole partition, the difference is
# most of a cycle's reading).
CHUNK_ACCOUNTS = 1000


WRITE_STEP = 100  # bills written per pair of batch writes (entries + events, then the bills)


class Queue(Protocol):
    def send_many(self, bodies: Sequence[str]) -> None: ...


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
    ids = {a.account_id for a in accounts}
    issued = [b for b in bills if b.period_start == req.period_start and b.account_id in ids]
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
        billed_total=sum((b.total for b in issued), Decimal("0.00")),
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
        # the chunk's bills, those a crashed delivery issued included: what is stored, not what
        # this delivery happened to write (issue 26)
        "total": str(sum((b.total for b in result.bills), inputs.billed_total)),
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
