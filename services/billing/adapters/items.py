"""Billing's items in its table: keys and (de)serialisation of the domain records.

Layout (one partition per tenant and kind, so a chunk of accounts, contiguous in account
order, is one range query):

- ``ACCOUNTS#<tenant>`` / ``<account_id>``: the current version of an account;
  ``ACCOUNT-HISTORY#<tenant>#<account_id>`` / ``V#<recorded_at>#<digest>``: every accepted
  change, in the order recorded (the version in force at a moment is the last by then).
- ``PARCEL-ACCOUNTS#<tenant>`` / ``<parcel_id>#<account_id>``: the account was on the parcel
  in some recorded version (written with that version), so a late change of a parcel's ERU
  finds the bills rated on it after the account moved to another parcel.
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

import functools
import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from billing.domain.accounts import AccountRecord
from billing.domain.bills import Bill, BilledRead, Line, funds_of
from billing.domain.ledger import Entry
from billing.events import BillIssued, IssuedLine, IssuedRead, Party
from common.events import check_entry_size
from common.ids import name_based_id


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


def parcel_link_item(acct: AccountRecord, recorded_at: str) -> dict[str, Any]:
    """The account was on ``acct.parcel_id`` (one item per parcel and account, rewritten with
    each version on it)."""
    return {
        "pk": f"PARCEL-ACCOUNTS#{acct.tenant}",
        "sk": f"{acct.parcel_id}#{acct.account_id}",
        "parcel_id": acct.parcel_id,
        "account_id": acct.account_id,
        "recorded_at": recorded_at,
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


def bill_issued_event(bill: Bill, notice: dict[str, Any], now: datetime) -> BillIssued:
    return BillIssued(
        event_id=event_id_for("BillIssued", bill.tenant, bill.bill_id),
        occurred_at=now,
        tenant=bill.tenant,
        account_id=bill.account_id,
        bill_id=bill.bill_id,
        bill_number=bill.bill_number,
        period_start=bill.period_start,
        period_end=bill.period_end,
        bill_date=bill.bill_date,
        due_date=bill.due_date,
        lines=tuple(
            IssuedLine(
                rule_id=ln.rule_id,
                description=ln.description,
                quantity=ln.quantity,
                unit=ln.unit,
                rate=ln.rate,
                amount=ln.amount,
                funds=ln.funds,
            )
            for ln in bill.lines
        ),
        total=bill.total,
        previous_balance=bill.previous_balance,
        payments_since=bill.payments_since,
        amount_due=bill.amount_due,
        estimated=bill.estimated,
        recipient=Party(**notice["recipient"]),
        owner=Party(**notice["owner"]),
        parcel_id=bill.parcel_id,
        service_address=notice.get("service_address") or None,
        reads=tuple(
            IssuedRead(
                meter_id=r.meter_id,
                previous_read_on=r.previous_read_on,
                previous_reading=r.previous_reading,
                present_read_on=r.present_read_on,
                present_reading=r.present_reading,
                quality=r.quality,
                estimated=r.estimated,
                consumption_gal=r.consumption_gal,
            )
            for r in bill.reads
        ),
    )


# BillIssued's detail as pydantic writes it (``BillIssued.detail_json``): its fields in the
# model's order, compact, UTF-8 unescaped; what cannot be shown here to come out the same
# (a value of another type, a bound exceeded, a time not in UTC) goes through the model.
_PARTY_KEYS = ("name", "address", "email", "email_opt_in")
_BILL_ISSUED_BOUNDS = {"funds": 8, "reads": 16, "service_address": 500}


class _NotPlain(Exception):
    """A value the direct rendering does not claim to render as pydantic does."""


def _text(value: Any) -> str:
    if type(value) is not str:
        raise _NotPlain
    return value


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _amount(value: Any) -> str:
    number = value if type(value) is Decimal else Decimal(value)
    if not number.is_finite():
        raise _NotPlain
    return str(number)


def _day(value: Any) -> str:
    return _iso_day(_text(value))


@functools.lru_cache(maxsize=256)  # a cycle's bills share a few periods, bill and due dates
def _iso_day(text: str) -> str:
    return date.fromisoformat(text).isoformat()


def _party(raw: Any) -> dict[str, Any]:
    if type(raw) is not dict or not set(raw) <= set(_PARTY_KEYS):
        raise _NotPlain
    opt_in = raw.get("email_opt_in", False)
    if type(opt_in) is not bool:
        raise _NotPlain
    return {
        "name": _text(raw["name"]),
        "address": _text(raw["address"]),
        "email": _optional_text(raw.get("email")),
        "email_opt_in": opt_in,
    }


@functools.lru_cache(maxsize=64)  # a stream batch's bills share a few issue times
def _occurred_at(issued_at: str) -> str:
    at = datetime.fromisoformat(issued_at)
    if at.tzinfo is None or at.utcoffset() or at.microsecond:
        raise _NotPlain
    return at.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"


def _issued_detail(doc: dict[str, Any], notice: dict[str, Any], issued_at: str) -> dict[str, Any]:
    lines = []
    for ln in doc["lines"]:
        amount = Decimal(_text(ln["amount"]))
        funds = funds_of(amount, ln.get("details") or {})
        if len(funds) > _BILL_ISSUED_BOUNDS["funds"]:
            raise _NotPlain
        lines.append(
            {
                "rule_id": _text(ln["rule_id"]),
                "description": _text(ln["description"]),
                "quantity": _text(ln["quantity"]),
                "unit": _text(ln["unit"]),
                "rate": _text(ln["rate"]),
                "amount": _amount(amount),
                "funds": {_text(fund): _amount(value) for fund, value in funds.items()},
            }
        )
    reads = []
    for raw in doc.get("reads") or ():
        read = BilledRead.from_values(raw)
        reads.append(
            {
                "meter_id": _optional_text(read.meter_id),
                "previous_read_on": read.previous_read_on.isoformat() if read.previous_read_on else None,
                "previous_reading": _optional_text(read.previous_reading),
                "present_read_on": read.present_read_on.isoformat() if read.present_read_on else None,
                "present_reading": _optional_text(read.present_reading),
                "quality": read.quality,
                "estimated": read.estimated,
                "consumption_gal": _amount(read.consumption_gal),
            }
        )
    if len(reads) > _BILL_ISSUED_BOUNDS["reads"]:
        raise _NotPlain
    service_address = notice.get("service_address") or None
    if service_address is not None and len(_text(service_address)) > _BILL_ISSUED_BOUNDS["service_address"]:
        raise _NotPlain
    total, previous, paid = (
        Decimal(doc["total"]),
        Decimal(doc["previous_balance"]),
        Decimal(doc["payments_since"]),
    )
    tenant, bill_id = _text(doc["tenant"]), _text(doc["bill_id"])
    return {
        "schema_version": 2,
        "event_id": event_id_for("BillIssued", tenant, bill_id),
        "occurred_at": _occurred_at(issued_at),
        "tenant": tenant,
        "account_id": _text(doc["account_id"]),
        "bill_id": bill_id,
        "bill_number": _text(doc["bill_number"]),
        "period_start": _day(doc["period_start"]),
        "period_end": _day(doc["period_end"]),
        "bill_date": _day(doc["bill_date"]),
        "due_date": _day(doc["due_date"]),
        "lines": lines,
        "total": _amount(total),
        "previous_balance": _amount(previous),
        "payments_since": _amount(paid),
        "amount_due": _amount(previous + total - paid),
        "estimated": bool(doc.get("estimated", False)),
        "recipient": _party(notice["recipient"]),
        "owner": _party(notice["owner"]),
        "parcel_id": _optional_text(doc.get("parcel_id")),
        "service_address": service_address,
        "reads": reads,
    }


@dataclass(frozen=True)
class IssuedDetail:
    """A bill item's ``BillIssued`` detail, with what its chunk (``BillsIssued``) is keyed
    and dated by."""

    tenant: str
    bill_id: str
    occurred_at: str  # as the detail writes it
    detail: str


def issued_detail(bill: str, notice: str, issued_at: str) -> IssuedDetail:
    """The ``BillIssued`` detail of a bill item (its ``bill``, ``notice`` and ``issued_at``
    attributes): the very text ``bill_issued_event(...).detail_json()`` gives, written
    straight from the item's JSON (the publisher's per-bill work: no domain ``Bill`` and no
    pydantic models in between). Anything it cannot vouch for goes through the model."""
    doc, parties = json.loads(bill), json.loads(notice)
    try:
        fields = _issued_detail(doc, parties, issued_at)
        detail = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
        found = IssuedDetail(fields["tenant"], fields["bill_id"], fields["occurred_at"], detail)
    except (_NotPlain, ArithmeticError, ValueError, TypeError, KeyError, AttributeError):
        detail = bill_issued_event(
            bill_of({"bill": bill}), parties, datetime.fromisoformat(issued_at)
        ).detail_json()
        fields = json.loads(detail)
        return IssuedDetail(fields["tenant"], fields["bill_id"], fields["occurred_at"], detail)
    check_entry_size(source=BillIssued.SOURCE, detail_type="BillIssued", detail=detail)
    return found


def bill_issued_detail(bill: str, notice: str, issued_at: str) -> str:
    """The ``BillIssued`` detail text of a bill item (``issued_detail``)."""
    return issued_detail(bill, notice, issued_at).detail


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
    """A deterministic event id: a rerun writes the same outbox item, never a second one
    (``uuid5`` of the business key, written by `common.ids.name_based_id`: one per bill in a
    cycle's publisher)."""
    return name_based_id(uuid.NAMESPACE_URL, "sewerbill:billing:" + ":".join(parts))
