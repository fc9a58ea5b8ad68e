"""Billing cycles: a cycle planned in chunks of accounts, each chunk rated and its bills issued."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Protocol

from billing.adapters.repository import BillingRepo
from billing.domain.accounts import AccountRecord
from billing.domain.bills import Bill
from billing.domain.issuing import ChunkInputs, ChunkResult, Held, chunks, rate_chunk
from billing.domain.ledger import Entry
from billing.domain.periods import back_periods, first_period_start, months_of
from billing.domain.rating import RatingEngine
from billing.domain.terms import terms_of
from common.dates import add_months
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
    only: tuple[str, ...] = ()  # just these accounts of the range
    back_recs: dict[str, str] = field(default_factory=dict)  # SU-REC of earlier periods, by start

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
            "back_recs": self.back_recs,
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
            back_recs=dict(raw.get("back_recs") or {}),
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
    """The chunk messages of a cycle: every account with a period to bill (X-PERIOD: from
    its first period up to this one) in account order, CHUNK_ACCOUNTS a message. Each chunk
    bills its accounts' period ending at the run and every earlier one still unbilled (held
    before, or loaded late: ``billing.domain.periods``), so no earlier period is lost."""
    accounts = sorted(repo.accounts(tenant), key=lambda a: a.account_id)
    months = months_of(period_start, period_end)
    first_tariff = book.first_effective(tenant)
    starts = {a.account_id: first_period_start(a, months, first_tariff) for a in accounts}
    sullivan = tenant == "sullivan-sewer"
    recs = str(total_recs_of(accounts, period_start, period_end, book)) if sullivan else None
    back_recs: dict[str, str] = {}
    if sullivan and starts:
        start = min(starts.values())
        while start < period_start:
            end = add_months(start, months)
            back_recs[start.isoformat()] = str(total_recs_of(accounts, start, end, book))
            start = end
    ids = [a.account_id for a in accounts if a.active_in(min(starts[a.account_id], period_start), period_end)]
    return [
        ChunkRequest(tenant, period_start, period_end, bill_date, c[0], c[-1], recs, back_recs=back_recs)
        for c in chunks(ids, size)
    ]


def _load(req: ChunkRequest, repo: BillingRepo) -> tuple[ChunkInputs, list[Bill]]:
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
    inputs = ChunkInputs(
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
    return inputs, bills


def load_chunk(req: ChunkRequest, repo: BillingRepo) -> ChunkInputs:
    """What rating the chunk's accounts for the request's period reads."""
    return _load(req, repo)[0]


def load_back_periods(
    req: ChunkRequest, repo: BillingRepo, inputs: ChunkInputs, bills: Sequence[Bill], first_tariff: date
) -> list[ChunkInputs]:
    """The inputs of each earlier period some account of the chunk has still unbilled
    (X-PERIOD), oldest first, each with just those accounts. Nothing is read when no
    account has one (the common case: the chunk's reads are ``load_chunk``'s alone);
    otherwise a back period costs its own consumption, ERU and strength reads. One-time
    charges go on the bill of the cycle's own period (the account's next bill), not here."""
    months = months_of(req.period_start, req.period_end)
    billed: dict[str, set[date]] = {}
    for b in bills:
        billed.setdefault(b.account_id, set()).add(b.period_start)
    need: dict[tuple[date, date], list[AccountRecord]] = {}
    for a in inputs.accounts:
        for period in back_periods(a, months, first_tariff, req.period_start, billed.get(a.account_id, ())):
            need.setdefault(period, []).append(a)
    out: list[ChunkInputs] = []
    for (start, end), accounts in sorted(need.items()):
        last_bill: dict[str, date] = {}
        for b in bills:
            if b.period_start < start and b.bill_date > last_bill.get(b.account_id, date.min):
                last_bill[b.account_id] = b.bill_date
        parcels = [a.parcel_id for a in accounts if a.parcel_id]
        recs = req.back_recs.get(start.isoformat())
        out.append(
            replace(
                inputs,
                period_start=start,
                period_end=end,
                accounts=accounts,
                billed=frozenset(),
                usage=repo.usage_between(req.tenant, start, end, req.first, req.last),
                erus=repo.erus(req.tenant, parcels, end, start=start)
                if req.tenant == "pleasant-prairie-stormwater"
                else {},
                strength=repo.strength_between(req.tenant, req.first, req.last, start, end),
                charges={},
                last_bill_dates=last_bill,
                total_recs=Decimal(recs) if recs else None,
            )
        )
    return out


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
    inputs, bills = _load(req, repo)
    result = ChunkResult()
    for period in [
        *load_back_periods(req, repo, inputs, bills, book.first_effective(req.tenant)),
        inputs,
    ]:
        rated = rate_chunk(
            period, engine=engine, terms=terms_of(book.in_force(req.tenant, period.period_start))
        )
        result.bills.extend(rated.bills)
        result.held.extend(rated.held)
        if period is inputs:
            result.skipped.extend(rated.skipped)
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
        accounts = {b.account_id for b in result.bills} | (
            inputs.billed & {a.account_id for a in inputs.accounts}
        )
        repo.assessment_inputs_changed([f"BILLS#{req.tenant}"], accounts={(req.tenant, a) for a in accounts})
    held_items = [repo.held_item(req.tenant, h, now) for h in result.held]
    was_held = {(h.account_id, h.period_start) for h in repo.held_between(req.tenant, req.first, req.last)}
    released = [
        (f"HELD#{req.tenant}", f"{b.account_id}#{b.period_start.isoformat()}")
        for b in result.bills
        if (b.account_id, b.period_start) in was_held
    ]
    run_bills = bills_of_run(req, inputs, bills, result.bills)
    summary = {
        "pk": f"CYCLE#{req.tenant}",
        "sk": f"PERIOD#{req.period_start.isoformat()}#{req.period_end.isoformat()}#CHUNK#{req.bill_date.isoformat()}#{req.first}",
        # the chunk's bills, those a crashed delivery issued included (back periods too): what
        # is stored, not what this delivery happened to write (issue 26)
        "bills": len(run_bills),
        "total": str(sum((b.total for b in run_bills), Decimal("0.00"))),
        "held": [_held_row(h) for h in result.held][:500],
        "recorded_at": now.isoformat(),
    }
    repo.write(held_items + [summary], deletes=released)
    return result


def bills_of_run(
    req: ChunkRequest, inputs: ChunkInputs, stored: Sequence[Bill], issued: Sequence[Bill]
) -> list[Bill]:
    """Every bill of the chunk's accounts that this run issues: those this delivery wrote
    and those an earlier (crashed) delivery of the same chunk wrote, of the cycle's own
    period and of every back period (X-PERIOD) alike. A run's bills are the ones dated
    with its ``bill_date``; a bill of another run (an earlier cycle, or a back period a
    later run picked up) is not this chunk's. By bill id, so none is counted twice."""
    ids = {a.account_id for a in inputs.accounts}
    out = {b.bill_id: b for b in stored if b.account_id in ids and b.bill_date == req.bill_date}
    out.update((b.bill_id, b) for b in issued)
    return [out[k] for k in sorted(out)]


def cycle_summary(tenant: str, start: date, end: date, repo: BillingRepo) -> dict[str, Any]:
    prefix = f"PERIOD#{start.isoformat()}#{end.isoformat()}#CHUNK#"
    bills = [b for b in repo.all_bills(tenant) if b.period_start == start]
    held = sorted(repo.held(tenant), key=lambda h: (h.period_start, h.account_id))
    chunks_run = list(repo.query(f"CYCLE#{tenant}", prefix=prefix))
    return {
        "tenant": tenant,
        "period": {"start": start.isoformat(), "end": end.isoformat()},
        "bills": len(bills),
        "total": str(sum((b.total for b in bills), Decimal("0.00"))),
        # every account held for the period, with what is missing and who can supply it
        "held": [_held_row(h) for h in held if h.period_start == start],
        # and every earlier period still held (the run goes on billing them, X-PERIOD)
        "held_earlier": [
            {**_held_row(h), "period": {"start": h.period_start.isoformat(), "end": h.period_end.isoformat()}}
            for h in held
            if h.period_start < start
        ],
        "chunks": len(chunks_run),
    }


def _held_row(h: Held) -> dict[str, Any]:
    return {"account_id": h.account_id, "reason": h.reason, "who_can_supply": h.who}


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
    months = calendar_months(request.tenant, add_months(end, -1))
    period_start, period_end = period_ending(request.scheduled_time, months)
    plan = plan_cycle(
        request.tenant, period_start, period_end, local_date(request.scheduled_time), repo=repo, book=book
    )
    queue.send_many([json.dumps(c.to_json()) for c in plan])
    return len(plan)
