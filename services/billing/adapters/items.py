"""Billing's items in its table: keys and (de)serialisation of the domain records.

Layout (one partition per tenant and kind, so a chunk of accounts, contiguous in account
order, is one range query):

- ``ACCOUNTS#<tenant>`` / ``<account_id>``: the current version of an account;
  ``ACCOUNT-HISTORY#<tenant>#<account_id>`` / ``V#<recorded_at>#<digest>``: every accepted
  change, in the order recorded (the version in force at a moment is the last by then).
- ``BILLS#<tenant>`` / ``<account_id>#<period_start>``: an issued bill (immutable).
- ``LEDGER#<tenant>`` / ``<account_id>#<posted_on>#<entry_id>``: a ledger entry.
- ``MARKS#<tenant>`` / ``<account_id>#<mark>``: an assessment point done without an entry.
- ``USAGE#<tenant>#<start>#<end>`` / ``<account_id>``: consumption kept from metering.
- ``ERU#<tenant>`` / ``<parcel_id>``; ``STRENGTH#<tenant>`` / ``<account_id>``: projections.
- ``HELD#<tenant>`` / ``<account_id>#<period_start>``: a period held for missing data.
- ``PAYMENT#<tenant>`` / ``<reference>``: a payment's business key (idempotency).
- ``ADJUSTMENT#<tenant>`` / ``<reference>``: an adjustment's business key (its entries are
  ``LEDGER#`` items); a re-rating's is ``RERATE-<bill_id>-<nnn>``, keeping the volume it
  brought the bill to (X-IMMUTABLE). ``RERATE-REFUSED#<tenant>`` / ``<bill_id>#<event>``:
  a re-determined period that could not be rated again, with the reason.
- ``TAXROLL#<tenant>#<year>`` / ``<account_id>``: the October notice and the certification.
- ``CYCLE#<tenant>`` / ``PERIOD#<start>#<end>[#CHUNK#<first account>]``: cycle runs.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import date
from decimal import Decimal
from typing import Any

from billing.domain.accounts import AccountRecord
from billing.domain.bills import Bill, BilledRead, Line
from billing.domain.ledger import Entry


def account_key(tenant: str, account_id: str) -> tuple[str, str]:
    return (f"ACCOUNTS#{tenant}", account_id)


def _record(acct: AccountRecord) -> str:
    return json.dumps(acct.to_values(), sort_keys=True, separators=(",", ":"), default=str)


def account_item(acct: AccountRecord, recorded_at: str) -> dict[str, Any]:
    """The account as one JSON document (read whole; few attributes keep reads cheap)."""
    pk, sk = account_key(acct.tenant, acct.account_id)
    return {"pk": pk, "sk": sk, "record": _record(acct), "recorded_at": recorded_at}


def account_history_item(acct: AccountRecord, recorded_at: str, source: str) -> dict[str, Any]:
    record = _record(acct)
    digest = hashlib.sha256(record.encode()).hexdigest()[:24]
    return {
        "pk": f"ACCOUNT-HISTORY#{acct.tenant}#{acct.account_id}",
        "sk": f"V#{recorded_at}#{digest}",
        "record": record,
        "recorded_at": recorded_at,
        "source": source,
    }


def account_of(item: dict[str, Any]) -> AccountRecord:
    return AccountRecord.from_values(json.loads(item["record"]))


def bill_key(tenant: str, account_id: str, period_start: date) -> tuple[str, str]:
    return (f"BILLS#{tenant}", f"{account_id}#{period_start.isoformat()}")


def _money(value: Decimal) -> str:
    return str(value)


def bill_item(bill: Bill, recorded_at: str, notice: dict[str, Any] | None = None) -> dict[str, Any]:
    """The bill, one item: its ledger entries are derived from its lines (``Bill.entries``)
    and its ``BillIssued`` is published from this item's stream INSERT (one fact, one item;
    ``notice`` holds the recipient and owner as they were at issue). The bill is one JSON
    document: it is immutable and always read whole."""
    pk, sk = bill_key(bill.tenant, bill.account_id, bill.period_start)
    document = {
        "tenant": bill.tenant,
        "account_id": bill.account_id,
        "bill_id": bill.bill_id,
        "bill_number": bill.bill_number,
        "period_start": bill.period_start.isoformat(),
        "period_end": bill.period_end.isoformat(),
        "bill_date": bill.bill_date.isoformat(),
        "due_date": bill.due_date.isoformat(),
        "lines": [
            {
                "rule_id": ln.rule_id,
                "description": ln.description,
                "quantity": ln.quantity,
                "unit": ln.unit,
                "rate": ln.rate,
                "amount": str(ln.amount),
                "details": ln.details,
            }
            for ln in bill.lines
        ],
        "total": _money(bill.total),
        "previous_balance": _money(bill.previous_balance),
        "payments_since": _money(bill.payments_since),
        "tariff_versions": list(bill.tariff_versions),
        "estimated": bill.estimated,
        "parcel_id": bill.parcel_id,
        "reads": [r.to_values() for r in bill.reads],
    }
    return {
        "pk": pk,
        "sk": sk,
        "bill": json.dumps(document, separators=(",", ":"), default=str),
        "issued_at": recorded_at,
        "notice": json.dumps(notice, separators=(",", ":")) if notice else None,
    }


def bill_document(item: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(item["bill"])
    return doc


def bill_of(item: dict[str, Any]) -> Bill:
    doc = bill_document(item)
    lines = tuple(
        Line(
            rule_id=ln["rule_id"],
            description=ln["description"],
            quantity=ln["quantity"],
            unit=ln["unit"],
            rate=ln["rate"],
            amount=Decimal(ln["amount"]),
            details=ln.get("details") or {},
        )
        for ln in doc["lines"]
    )
    return Bill(
        tenant=doc["tenant"],
        account_id=doc["account_id"],
        bill_id=doc["bill_id"],
        bill_number=doc["bill_number"],
        period_start=date.fromisoformat(doc["period_start"]),
        period_end=date.fromisoformat(doc["period_end"]),
        bill_date=date.fromisoformat(doc["bill_date"]),
        due_date=date.fromisoformat(doc["due_date"]),
        lines=lines,
        total=Decimal(doc["total"]),
        previous_balance=Decimal(doc["previous_balance"]),
        payments_since=Decimal(doc["payments_since"]),
        tariff_versions=tuple(doc.get("tariff_versions") or ()),
        estimated=bool(doc.get("estimated", False)),
        parcel_id=doc.get("parcel_id"),
        reads=tuple(BilledRead.from_values(r) for r in doc.get("reads") or ()),
    )


def entry_key(e: Entry) -> tuple[str, str]:
    return (f"LEDGER#{e.tenant}", f"{e.account_id}#{e.posted_on.isoformat()}#{e.entry_id}")


def entry_item(e: Entry, recorded_at: str) -> dict[str, Any]:
    pk, sk = entry_key(e)
    return {
        "pk": pk,
        "sk": sk,
        "entry_id": e.entry_id,
        "tenant": e.tenant,
        "account_id": e.account_id,
        "posted_on": e.posted_on.isoformat(),
        "kind": e.kind,
        "amount": str(e.amount),
        "fund": e.fund,
        "rule_id": e.rule_id or None,
        "bill_id": e.bill_id or None,
        "reference": e.reference or None,
        "description": e.description or None,
        "recorded_at": recorded_at,
    }


def entry_of(item: dict[str, Any]) -> Entry:
    return Entry(
        entry_id=item["entry_id"],
        tenant=item["tenant"],
        account_id=item["account_id"],
        posted_on=date.fromisoformat(item["posted_on"]),
        kind=item["kind"],
        amount=Decimal(item["amount"]),
        fund=item["fund"],
        rule_id=item.get("rule_id") or "",
        bill_id=item.get("bill_id") or "",
        reference=item.get("reference") or "",
        description=item.get("description") or "",
    )


def event_id_for(*parts: str) -> str:
    """A deterministic event id: a rerun writes the same outbox item, never a second one."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "sewerbill:billing:" + ":".join(parts)))
