"""Account inquiry, the clerk's phone-call screen (issue 33): find an account from one box,
then what it owes and by when, by age, what is held and why, its use and its basis.

Plain functions over the repository and the search index returning JSON-ready dicts (money
as decimal strings), as ``readmodels`` does for the other staff reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import date
from decimal import Decimal
from typing import Any, Protocol

from billing.adapters.repository import BillingRepo
from billing.app.readmodels import aging_of, page
from billing.domain.accounts import AccountRecord, period_start_of
from billing.domain.ledger import ZERO, allocate, unpaid_of
from billing.domain.periods import account_periods
from billing.domain.search import RANK_NAMES, ValueHit, parse_query, rank_hits, words_matched
from common.dates import add_months
from common.money import fmt
from common.tariffs import TariffBook

USAGE_PERIODS = 24
"""Periods of consumption shown on the account page (two years of monthly bills)."""


class SearchReads(Protocol):
    """What a search reads of the index (``billing.adapters.search_index.SearchIndex``)."""

    def values_starting(self, tenant: str, whole: str) -> tuple[list[ValueHit], bool]: ...

    def words(self, tenant: str, words: Iterable[str]) -> tuple[Mapping[str, set[str]], bool]: ...


def _fields(record: AccountRecord) -> dict[str, str | None]:
    return {k: (None if v is None else str(v)) for k, v in record.to_values().items()}


def search_accounts(
    index: SearchReads,
    repo: BillingRepo,
    tenant: str,
    q: str,
    limit: int,
    cursor: str | None,
) -> dict[str, Any]:
    """The accounts ``q`` finds, ranked (exact id, then prefix, then token:
    ``billing.domain.search``), a page of ``limit`` from ``cursor``; only the page's accounts
    are read whole. A query with no letter or digit finds nothing. ``truncated``: some term
    matched more index items than a search reads (type more to narrow it)."""
    query = parse_query(q)
    if query.empty:
        return {"query": "", "hits": [], "next_cursor": None, "truncated": False}
    values, cut_values = index.values_starting(tenant, query.whole)
    word_hits, cut_words = index.words(tenant, query.words)
    ranked = rank_hits(query, values, word_hits)
    hits, nxt = page(ranked, limit, cursor)
    found = repo.get_many([(f"ACCOUNTS#{tenant}", h.account_id) for h in hits])
    out = []
    for h in hits:
        item = found.get((f"ACCOUNTS#{tenant}", h.account_id))
        if item is None:
            continue  # an index item of an account not stored (a crash before its version)
        record = AccountRecord.from_values(json.loads(item["record"]))
        out.append(
            {
                "account_id": h.account_id,
                "match": RANK_NAMES[h.rank],
                "matched": h.matched or words_matched(_fields(record), query),
                "name": record.name,
                "service_address": record.service_address,
                "mailing_address": record.mailing_address,
                "parcel_id": record.parcel_id,
                "class": record.account_class,
                "closed_on": record.closed_on.isoformat() if record.closed_on else None,
            }
        )
    return {"query": query.whole, "hits": out, "next_cursor": nxt, "truncated": cut_values or cut_words}


def utility_name(book: TariffBook, tenant: str, today: date) -> str:
    """The utility's name as its tariff gives it (the version in force, else the latest)."""
    try:
        return book.in_force(tenant, today).name
    except Exception:  # noqa: BLE001 - a day outside every version: the latest's name
        return book.versions(tenant)[-1].name


def account_summary(
    repo: BillingRepo, book: TariffBook, tenant: str, account_id: str, today: date
) -> dict[str, Any] | None:
    """The account page's figures in one read: the account, its balance on ``today``, what
    is due by when (each bill's unpaid part, X-ALLOCATION, past due or not), the aging
    buckets (the aging report's, ``readmodels.aging_of``), the periods held and why, the
    consumption kept per period with its meters, the strength category in force and its
    basis, and a stormwater parcel's ERU and credit. None for an unknown account."""
    account = repo.account(tenant, account_id)
    if account is None:
        return None
    bills = sorted(repo.bills_of(tenant, account_id), key=lambda b: (b.period_start, b.bill_date))
    entries = repo.entries_of(tenant, account_id)
    buckets, total = aging_of(entries, today)
    unpaid = allocate(entries, paid_by=today)
    due_bills: list[dict[str, Any]] = []
    on_bills: set[str] = set()
    owing: list[tuple[str, Decimal, bool]] = []  # (due date, unpaid, past due) per bill
    for b in bills:
        mine = [e for e in entries if e.bill_id == b.bill_id]
        on_bills.update(e.entry_id for e in mine)
        owed = unpaid_of(unpaid, mine)
        if owed > 0:
            owing.append((b.due_date.isoformat(), owed, b.due_date < today))
            due_bills.append(
                {
                    "bill_id": b.bill_id,
                    "bill_number": b.bill_number,
                    "due_date": b.due_date.isoformat(),
                    "unpaid": fmt(owed),
                    "past_due": b.due_date < today,
                }
            )
    other = sum((unpaid.get(e.entry_id, ZERO) for e in entries if e.entry_id not in on_bills), ZERO)
    past_due = sum((owed for _, owed, late in owing if late), ZERO)
    next_date = min((d for d, _, late in owing if not late), default=None)
    next_amount = sum((owed for d, owed, late in owing if not late and d == next_date), ZERO)
    values = {
        k: (v.isoformat() if isinstance(v, date) else str(v) if isinstance(v, Decimal) else v)
        for k, v in account.to_values().items()
    }
    usage = _usage(repo, book, account, today)
    meters = sorted(
        {m["meter_id"] for u in usage for m in u["meters"] if m.get("meter_id")}
        | {r.meter_id for b in bills for r in b.reads if r.meter_id}
    )
    return {
        "tenant": tenant,
        "utility": utility_name(book, tenant, today),
        "as_of": today.isoformat(),
        "account": values,
        "balance": fmt(total),
        "due": {
            "past_due": fmt(past_due),
            "next_due_date": next_date,
            "next_due_amount": fmt(next_amount),
            "not_on_a_bill": fmt(other),
            "bills": due_bills,
        },
        "aging": {k: fmt(v) for k, v in buckets.items()},
        "held": _held(repo, tenant, account_id, {b.period_start for b in bills}),
        "usage": usage,
        "meters": meters,
        "strength": _strength(repo, tenant, account_id, today),
        "stormwater": _stormwater(repo, tenant, account, today),
    }


def _held(repo: BillingRepo, tenant: str, account_id: str, billed: set[date]) -> list[dict[str, Any]]:
    """X-PERIOD: the account's periods a cycle held (not billed since), with what is missing
    and who can supply it (the unbilled report's ``held`` rows of this account)."""
    held = repo.held(tenant, between=(f"{account_id}#", f"{account_id}#\uffff"))
    return [
        {
            "period_start": h.period_start.isoformat(),
            "period_end": h.period_end.isoformat(),
            "reason": h.reason,
            "who_can_supply": h.who,
        }
        for h in sorted(held, key=lambda h: h.period_start)
        if h.account_id == account_id and h.period_start not in billed
    ]


def _listed(raw: Any) -> list[dict[str, Any]]:
    value = json.loads(raw) if isinstance(raw, str) else raw
    return [dict(v) for v in value] if isinstance(value, list) else []


def _usage(repo: BillingRepo, book: TariffBook, account: AccountRecord, today: date) -> list[dict[str, Any]]:
    """The consumption billing kept for the account's last ``USAGE_PERIODS`` periods (up to
    the current one), oldest first: one BatchGetItem of ``USAGE#`` keys, no scan."""
    months = book.versions(account.tenant)[-1].billing_period_months
    until = add_months(period_start_of(today, months), months)
    periods = list(account_periods(account, months, book.first_effective(account.tenant), until))
    periods = periods[-USAGE_PERIODS:]
    keys = [
        (f"USAGE#{account.tenant}#{s.isoformat()}#{e.isoformat()}", account.account_id) for s, e in periods
    ]
    found = repo.get_many(keys)
    out = []
    for (start, end), key in zip(periods, keys, strict=True):
        item = found.get(key)
        if item is None:
            continue
        out.append(
            {
                "period": {"start": start.isoformat(), "end": end.isoformat()},
                "volume_gal": str(item["volume_gal"]),
                "quality": str(item.get("quality") or "actual"),
                "estimated": bool(item.get("estimated", False)),
                "meters": _listed(item.get("meters")),
                "reads": _listed(item.get("reads_used")),
            }
        )
    return out


def _strength(repo: BillingRepo, tenant: str, account_id: str, today: date) -> dict[str, Any] | None:
    """The strength classification in force on ``today`` as sampling published it (its
    category and the basis concentrations), or None when sampling published none."""
    item = repo.get(f"STRENGTH#{tenant}", account_id)
    classified = list(((item or {}).get("classified") or {}).values())
    in_force = [c for c in classified if date.fromisoformat(str(c["effective_from"])) <= today]
    if not in_force:
        return None
    latest = max(in_force, key=lambda c: (c["effective_from"], c["as_of"], c.get("occurred_at", "")))
    return {
        "category": latest.get("category"),
        "effective_from": latest["effective_from"],
        "as_of": latest["as_of"],
        "trigger": latest.get("trigger"),
        "basis": json.loads(latest.get("basis") or "null"),
    }


def _stormwater(repo: BillingRepo, tenant: str, account: AccountRecord, today: date) -> dict[str, Any] | None:
    """The parcel's ERU and credit in force on ``today`` as stormwater determined them, or
    None for an account with no parcel or no determination kept."""
    if not account.parcel_id:
        return None
    eru = repo.erus(tenant, [account.parcel_id], today + (date.resolution))
    found = eru.get(account.parcel_id)
    if found is None:
        return None
    return {
        "parcel_id": account.parcel_id,
        "use": found.use,
        "eru": str(found.eru),
        "credit_percent": str(found.credit_percent),
        "details": json.loads(json.dumps(dict(found.details), default=str)),
    }
