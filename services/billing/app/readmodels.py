"""What staff read: bills, ledger, tax roll, account, reports (CONTRACTS.md "Staff read routes").

Plain functions over the repository returning JSON-ready dicts (money as decimal strings).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import date
from decimal import Decimal
from typing import Any

from billing.adapters.repository import BillingRepo
from billing.domain import books
from billing.domain.accounts import period_start_of
from billing.domain.bills import Bill
from billing.domain.ledger import ZERO, Entry, allocate, balance, unpaid_of
from billing.domain.periods import account_periods
from billing.domain.terms import terms_of
from common import csvsafe
from common.money import fmt
from common.tariffs import TariffBook, TariffNotInForce


def bill_json(b: Bill) -> dict[str, Any]:
    return {
        "bill_id": b.bill_id,
        "bill_number": b.bill_number,
        "period": {"start": b.period_start.isoformat(), "end": b.period_end.isoformat()},
        "bill_date": b.bill_date.isoformat(),
        "due_date": b.due_date.isoformat(),
        "lines": [
            {
                "rule_id": ln.rule_id,
                "description": ln.description,
                "quantity": ln.quantity,
                "unit": ln.unit,
                "rate": ln.rate,
                "amount": fmt(ln.amount),
                "details": ln.details,
            }
            for ln in b.lines
        ],
        "total": fmt(b.total),
        "previous_balance": fmt(b.previous_balance),
        "payments_since": fmt(b.payments_since),
        "amount_due": fmt(b.amount_due),
        "estimated": b.estimated,
        "tariff_versions": list(b.tariff_versions),
    }


def entry_json(e: Entry) -> dict[str, Any]:
    return {
        "entry_id": e.entry_id,
        "posted_on": e.posted_on.isoformat(),
        "kind": e.kind,
        "rule_id": e.rule_id or None,
        "amount": fmt(e.amount),
        "bill_id": e.bill_id or None,
        "fund": e.fund,
        "reference": e.reference or None,
        "description": e.description or None,
    }


def page(items: Sequence[Any], limit: int | None, cursor: str | None) -> tuple[list[Any], str | None]:
    """Offset cursors over a list already in its order; without ``limit``, everything."""
    start = int(cursor) if cursor else 0
    if limit is None:
        return list(items[start:]), None
    end = start + limit
    return list(items[start:end]), (str(end) if end < len(items) else None)


def bills_of(repo: BillingRepo, tenant: str, account_id: str) -> list[dict[str, Any]]:
    bills = sorted(repo.bills_of(tenant, account_id), key=lambda b: (b.period_start, b.bill_date))
    return [bill_json(b) for b in bills]


def ledger_of(repo: BillingRepo, tenant: str, account_id: str) -> tuple[list[dict[str, Any]], Decimal]:
    entries = sorted(repo.entries_of(tenant, account_id), key=lambda e: (e.posted_on, e.entry_id))
    return [entry_json(e) for e in entries], balance(entries)


def owner_bills(repo: BillingRepo, tenant: str, parcel_id: str) -> list[dict[str, Any]]:
    """PP-CWU-BILLING: the bills of a parcel's accounts and whether each was paid, with no
    name, address, account number or payment detail of the tenant. A bill is paid when the account's payments
    and credits, applied oldest debit first, leave nothing of it unpaid; arrears moved to the
    tax roll (X-TAXROLL) are not payments, so those bills stay unpaid."""
    found: list[dict[str, Any]] = []
    for account in repo.accounts(tenant):
        if account.parcel_id != parcel_id:
            continue
        entries = [e for e in repo.entries_of(tenant, account.account_id) if e.kind != "tax_roll"]
        unpaid = allocate(entries)
        for b in sorted(
            repo.bills_of(tenant, account.account_id), key=lambda b: (b.period_start, b.bill_date)
        ):
            owing = unpaid_of(unpaid, [e for e in entries if e.bill_id == b.bill_id])
            found.append(
                {
                    "period": {"start": b.period_start.isoformat(), "end": b.period_end.isoformat()},
                    "due_date": b.due_date.isoformat(),
                    "total": fmt(b.total),
                    "paid": owing <= ZERO,
                }
            )
    return found


def tax_roll(repo: BillingRepo, tenant: str, year: int) -> dict[str, Any] | None:
    items = list(repo.query(f"TAXROLL#{tenant}#{year}"))
    if not items:
        return None
    entries = []
    certified_on = None
    for item in sorted(items, key=lambda i: i["sk"]):
        if item.get("certified_on"):
            certified_on = item["certified_on"]
            arrears, penalty = Decimal(item["certified_arrears"]), Decimal(item["certified_penalty"])
        else:
            ledger = repo.entries_of(tenant, item["sk"])
            ids = tuple(item["entry_ids"])
            penalty_id = f"TAXROLL-{year}-PENALTY"
            unpaid = allocate(
                ledger, first=dict.fromkeys((*ids, penalty_id), date.fromisoformat(item["noticed_on"]))
            )
            arrears = sum((unpaid.get(i, ZERO) for i in ids), ZERO)
            penalty = unpaid.get(penalty_id, ZERO)
        if arrears + penalty <= 0:
            continue  # paid: not listed
        entries.append(
            {
                "account_id": item["sk"],
                "parcel_id": item.get("parcel_id"),
                "owner_name": item.get("owner_name"),
                "arrears": fmt(arrears),
                "penalty": fmt(penalty),
                "amount": fmt(arrears + penalty),
            }
        )
    return {"noticed_on": items[0]["noticed_on"], "certified_on": certified_on, "entries": entries}


# --- reports ----------------------------------------------------------------------------


def aging(repo: BillingRepo, tenant: str, today: date) -> list[dict[str, Any]]:
    """Unpaid debits by age from their posting date: current (<30), 30, 60, 90+ days."""
    by_account: dict[str, list[Entry]] = {}
    for e in repo.all_entries(tenant):
        by_account.setdefault(e.account_id, []).append(e)
    rows = []
    for account_id, entries in sorted(by_account.items()):
        buckets, total = aging_of(entries, today)
        if any(buckets.values()) or total:
            rows.append(
                {"account_id": account_id, **{k: fmt(v) for k, v in buckets.items()}, "balance": fmt(total)}
            )
    return rows


def aging_of(entries: Sequence[Entry], today: date) -> tuple[dict[str, Decimal], Decimal]:
    """One account's unpaid debits by age from their posting date (current (<30), 30, 60,
    90+ days) and its balance on ``today``: the aging report's row, and the account page's."""
    unpaid = allocate(entries, paid_by=today)
    buckets = {"current": ZERO, "30": ZERO, "60": ZERO, "90+": ZERO}
    for e in entries:
        owed = unpaid.get(e.entry_id, ZERO)
        if owed <= 0:
            continue
        age = (today - e.posted_on).days
        bucket = "current" if age < 30 else "30" if age < 60 else "60" if age < 90 else "90+"
        buckets[bucket] += owed
    return buckets, balance(entries, as_of=today)


def revenue(repo: BillingRepo, tenant: str, start: date, end: date) -> list[dict[str, Any]]:
    """Billed revenue by class and fund for [start, end) (charges, late charges, penalties)."""
    classes = {a.account_id: a.account_class for a in repo.accounts(tenant)}
    sums: dict[tuple[str, str, str], Decimal] = {}
    for e in repo.all_entries(tenant):
        if e.amount <= 0 or not (start <= e.posted_on < end) or e.kind == "payment":
            continue
        key = (classes.get(e.account_id, "unknown"), e.fund, e.kind)
        sums[key] = sums.get(key, ZERO) + e.amount
    return [
        {"tenant": tenant, "class": c, "fund": f, "kind": k, "amount": fmt(v)}
        for (c, f, k), v in sorted(sums.items())
    ]


def reconciliation(repo: BillingRepo, tenant: str, start: date, end: date) -> list[dict[str, Any]]:
    """SU-FUNDS: per class, revenue billed and collected in [start, end), by fund; what a
    class paid over its billed costs is applied to that class's costs next year."""
    classes = {a.account_id: a.account_class for a in repo.accounts(tenant)}
    billed: dict[tuple[str, str], Decimal] = {}
    collected: dict[str, Decimal] = {}
    for e in repo.all_entries(tenant):
        if not (start <= e.posted_on < end):
            continue
        klass = classes.get(e.account_id, "unknown")
        if e.kind == "payment":
            collected[klass] = collected.get(klass, ZERO) - e.amount
        elif e.amount > 0:
            billed[(klass, e.fund)] = billed.get((klass, e.fund), ZERO) + e.amount
    rows = []
    for klass in sorted({k for k, _ in billed} | set(collected)):
        funds = {f: v for (k, f), v in billed.items() if k == klass}
        total = sum(funds.values(), ZERO)
        rows.append(
            {
                "class": klass,
                "billed_om": fmt(funds.get("om", ZERO)),
                "billed_replacement": fmt(funds.get("replacement", ZERO)),
                "billed_total": fmt(total),
                "collected": fmt(collected.get(klass, ZERO)),
            }
        )
    return rows


def to_csv(rows: Sequence[dict[str, Any]], fieldnames: Sequence[str] = ()) -> str:
    if not rows and not fieldnames:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(fieldnames or rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(csvsafe.records(rows))  # cells no spreadsheet runs
    return out.getvalue()


def rerate_refused(repo: BillingRepo, tenant: str) -> list[dict[str, Any]]:
    """X-IMMUTABLE: the billed periods whose re-determined consumption could not be rated
    again (``RERATE-REFUSED#<tenant>``), oldest first, with the reason, for staff to settle."""
    items = sorted(repo.query(f"RERATE-REFUSED#{tenant}"), key=lambda i: (i.get("recorded_at", ""), i["sk"]))
    return [
        {
            "bill_id": i["bill_id"],
            "account_id": i["account_id"],
            "from_volume_gal": i.get("from_volume_gal"),
            "to_volume_gal": i.get("to_volume_gal"),
            "source_event_id": i.get("source_event_id") or i["sk"].split("#", 1)[-1],
            "reason": i["reason"],
            "rule_id": i.get("rule_id", "X-IMMUTABLE"),
            "recorded_at": i.get("recorded_at"),
        }
        for i in items
    ]


UNBILLED_COLUMNS = ("account_id", "period_start", "period_end", "status", "reason", "who_can_supply")


def unbilled(repo: BillingRepo, tenant: str, book: TariffBook, today: date) -> list[dict[str, Any]]:
    """X-PERIOD completeness: every account-period from the account's first period to the
    last period ended by ``today`` that is not billed, oldest first per account: ``held``
    (a cycle found something missing: what, and who can supply it) or ``not_yet_due`` (no
    cycle has looked at it since it ended: the next one bills it or holds it). A period
    billed is not listed; so every ended account-period is billed or listed here."""
    months = book.versions(tenant)[-1].billing_period_months
    until = period_start_of(today, months)
    first_tariff = book.first_effective(tenant)
    billed = {(b.account_id, b.period_start) for b in repo.all_bills(tenant)}
    held = {(h.account_id, h.period_start): h for h in repo.held(tenant)}
    rows: list[dict[str, Any]] = []
    for account in sorted(repo.accounts(tenant), key=lambda a: a.account_id):
        for start, end in account_periods(account, months, first_tariff, until):
            if (account.account_id, start) in billed:
                continue
            h = held.get((account.account_id, start))
            rows.append(
                {
                    "account_id": account.account_id,
                    "period_start": start.isoformat(),
                    "period_end": end.isoformat(),
                    "status": "held" if h else "not_yet_due",
                    "reason": h.reason
                    if h
                    else f"ended {end}: the next cycle bills it or holds it with its reason",
                    "who_can_supply": h.who if h else "",
                }
            )
    return rows


JOURNAL_COLUMNS = ("date", "gl_account", "gl_name", "fund", "debit", "credit", "entries")
TRIAL_BALANCE_COLUMNS = ("as_of", "fund", "gl_account", "gl_name", "debit", "credit")


def _books_inputs(
    repo: BillingRepo, tenant: str, book: TariffBook, day: date
) -> tuple[dict[str, list[Entry]], dict[str, tuple[str, str]], tuple[str, ...]]:
    """Every account's entries, the tenant's chart of accounts and payment order in force."""
    try:
        tariff = book.in_force(tenant, day)
    except TariffNotInForce:  # books before the first tariff are empty: its chart serves
        tariff = book.versions(tenant)[0]
    terms = terms_of(tariff)
    bt = tariff.billing_terms
    chart = books.chart_of(bt.chart_of_accounts.value if bt is not None and bt.chart_of_accounts else None)
    ledgers: dict[str, list[Entry]] = {}
    for e in repo.all_entries(tenant):
        ledgers.setdefault(e.account_id, []).append(e)
    return ledgers, chart, terms.payment_order


def journal(repo: BillingRepo, tenant: str, book: TariffBook, start: date, end: date) -> list[dict[str, Any]]:
    """The daily journal of [start, end) by general-ledger account and fund (issue 35):
    every day's debits equal its credits in each fund."""
    ledgers, chart, order = _books_inputs(repo, tenant, book, start)
    return [
        {
            "date": ln.day.isoformat(),
            "gl_account": ln.code,
            "gl_name": ln.name,
            "fund": ln.fund,
            "debit": fmt(ln.debit),
            "credit": fmt(ln.credit),
            "entries": ln.entries,
        }
        for ln in books.journal(ledgers, start, end, chart, order)
    ]


def trial_balance(repo: BillingRepo, tenant: str, book: TariffBook, as_of: date) -> list[dict[str, Any]]:
    """Each general-ledger account's balance by fund at the end of ``as_of`` (issue 35)."""
    ledgers, chart, order = _books_inputs(repo, tenant, book, as_of)
    return [
        {
            "as_of": as_of.isoformat(),
            "fund": fund,
            "gl_account": code,
            "gl_name": name,
            "debit": fmt(value) if value > 0 else "0.00",
            "credit": fmt(-value) if value < 0 else "0.00",
        }
        for fund, code, name, value in books.trial_balance(ledgers, as_of, chart, order)
    ]
