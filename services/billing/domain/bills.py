"""Issuing a bill from a rated bill (X-IMMUTABLE, X-DUE, X-FUNDS; pure).

A bill is issued once per account and period (its id is the business key) and never
edited; corrections are adjustments that refer to it. Its ledger entries are one per
line and fund (a line split between funds, X-FUNDS, is two entries), kind ``charge``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from billing.domain.ledger import OM, ZERO, Entry
from common.dates import add_months

if TYPE_CHECKING:  # the rating package (every tenant's engine, the tariff models) only to issue
    from billing.domain.rating import RatedBill

TENANT_PREFIX = {
    "pleasant-prairie-sewer": "PPS",
    "pleasant-prairie-stormwater": "PPW",
    "grafton-sewer": "GR",
    "sullivan-sewer": "SU",
}


def bill_id_of(account_id: str, period_start: date) -> str:
    return f"{account_id}-{period_start.isoformat()}"


def bill_number_of(tenant: str, account_id: str, period_start: date) -> str:
    """Deterministic, so a rerun of a crashed cycle issues the same number (never a second)."""
    return f"{TENANT_PREFIX.get(tenant, 'X')}-{period_start:%Y%m}-{account_id}"


def due_date_of(period_end: date, bill_date: date, due_days: int | None) -> date:
    """X-DUE: ``due_days`` after the bill date; None: the first of the month after the
    period (GR-BILLING), or, for a bill issued later than that (a held account), the first
    of the month after the bill date."""
    if due_days is not None:
        from datetime import timedelta

        return bill_date + timedelta(days=due_days)
    first = period_end if period_end.day == 1 else add_months(period_end.replace(day=1), 1)
    if first >= bill_date:
        return first
    return add_months(bill_date.replace(day=1), 1)


@dataclass(frozen=True, slots=True)
class Line:
    rule_id: str
    description: str
    quantity: str
    unit: str
    rate: str
    amount: Decimal
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def funds(self) -> dict[str, Decimal]:
        return funds_of(self.amount, self.details)


def funds_of(amount: Decimal, details: Mapping[str, Any]) -> dict[str, Decimal]:
    """A line's amount by fund (X-FUNDS): the split its details record when it sums to the
    amount, else all O&M (``Line.funds``; the outbox publisher reads it off a bill's JSON)."""
    raw = details.get("funds")
    if isinstance(raw, Mapping):
        split: dict[str, Decimal] = {}
        for k, v in raw.items():
            share = Decimal(str(v))  # each share read once (a cycle's publisher: 20,000 lines)
            if share != 0:
                split[str(k)] = share
        if split and sum(split.values()) == amount:
            return split
    return {OM: amount}


@dataclass(frozen=True, slots=True)
class BilledRead:
    """The consumption behind a bill, for one meter where billing knows the meter, with the
    register readings that bound it where billing has them (``None`` where it does not)."""

    consumption_gal: Decimal
    quality: str = "actual"
    estimated: bool = False
    meter_id: str | None = None
    previous_read_on: date | None = None
    previous_reading: str | None = None
    present_read_on: date | None = None
    present_reading: str | None = None

    def to_values(self) -> dict[str, Any]:
        return {
            "consumption_gal": str(self.consumption_gal),
            "quality": self.quality,
            "estimated": self.estimated,
            "meter_id": self.meter_id,
            "previous_read_on": self.previous_read_on.isoformat() if self.previous_read_on else None,
            "previous_reading": self.previous_reading,
            "present_read_on": self.present_read_on.isoformat() if self.present_read_on else None,
            "present_reading": self.present_reading,
        }

    @classmethod
    def from_values(cls, raw: Mapping[str, Any]) -> BilledRead:
        def day(name: str) -> date | None:
            return date.fromisoformat(raw[name]) if raw.get(name) else None

        return cls(
            consumption_gal=Decimal(str(raw["consumption_gal"])),
            quality=str(raw.get("quality") or "actual"),
            estimated=bool(raw.get("estimated", False)),
            meter_id=raw.get("meter_id"),
            previous_read_on=day("previous_read_on"),
            previous_reading=raw.get("previous_reading"),
            present_read_on=day("present_read_on"),
            present_reading=raw.get("present_reading"),
        )


def reads_behind(
    volume_gal: Decimal,
    quality: str,
    estimated: bool,
    reads_used: Sequence[Mapping[str, Any]] = (),
    meters: Sequence[Mapping[str, Any]] = (),
) -> tuple[BilledRead, ...]:
    """What the bill prints of its consumption: one row per meter, its earliest and latest
    register reading of the period (metering's ``reads_used``) as previous and present, the
    meter's share of the volume (``meters``; a single meter: the whole volume) and its
    quality. Without reads (billing kept only the volume): one row, the volume and quality."""
    by_meter: dict[str, list[Mapping[str, Any]]] = {}
    for read in reads_used:
        by_meter.setdefault(str(read["meter_id"]), []).append(read)
    if not by_meter:
        return (BilledRead(consumption_gal=volume_gal, quality=quality, estimated=estimated),)
    shares = {str(m["meter_id"]): m for m in meters}
    rows = []
    for meter_id, reads in sorted(by_meter.items()):
        ordered = sorted(reads, key=lambda r: str(r["read_on"]))
        first, last = ordered[0], ordered[-1]
        share = shares.get(meter_id)
        meter_quality = str(share["quality"]) if share else quality
        if share is None and len(by_meter) > 1:
            consumption = Decimal(str(last["reading"])) - Decimal(str(first["reading"]))
        else:
            consumption = Decimal(str(share["volume_gal"])) if share else volume_gal
        marked = meter_quality == "estimated" or any(r.get("read_type") == "estimated" for r in ordered)
        rows.append(
            BilledRead(
                consumption_gal=consumption,
                quality="estimated" if marked else meter_quality,
                estimated=marked,
                meter_id=meter_id,
                previous_read_on=date.fromisoformat(str(first["read_on"])) if len(ordered) > 1 else None,
                previous_reading=str(first["reading"]) if len(ordered) > 1 else None,
                present_read_on=date.fromisoformat(str(last["read_on"])),
                present_reading=str(last["reading"]),
            )
        )
    return tuple(rows)


@dataclass(frozen=True, slots=True)
class Bill:
    tenant: str
    account_id: str
    bill_id: str
    bill_number: str
    period_start: date
    period_end: date
    bill_date: date
    due_date: date
    lines: tuple[Line, ...]
    total: Decimal
    previous_balance: Decimal
    payments_since: Decimal
    tariff_versions: tuple[str, ...] = ()
    estimated: bool = False
    parcel_id: str | None = None
    reads: tuple[BilledRead, ...] = ()  # the consumption and meter reads behind the bill

    @property
    def amount_due(self) -> Decimal:
        return self.previous_balance + self.total - self.payments_since

    def entries(self) -> list[Entry]:
        """One ``charge`` entry per line and fund, posted on the bill date."""
        out: list[Entry] = []
        for i, ln in enumerate(self.lines):
            for fund, amount in sorted(ln.funds.items()):
                out.append(
                    Entry(
                        entry_id=f"{self.bill_id}-L{i:02d}-{fund}",
                        tenant=self.tenant,
                        account_id=self.account_id,
                        posted_on=self.bill_date,
                        kind="charge",
                        amount=amount,
                        fund=fund,
                        rule_id=ln.rule_id,
                        bill_id=self.bill_id,
                        description=ln.description,
                    )
                )
        return out


def issue(
    rated: RatedBill,
    *,
    account_id: str,
    bill_date: date,
    due_days: int | None,
    history: Iterable[Entry],
    last_bill_date: date | None,
    estimated: bool = False,
    parcel_id: str | None = None,
    charges: Sequence[Any] = (),
    reads: Sequence[BilledRead] = (),
) -> Bill:
    """The bill for ``rated``: previous balance is the account's balance before the bill
    date; payments since are the payments after the last bill's date (X-DUE: paid_on)."""
    # Here, not at the top: reading a bill (the outbox publisher's BillIssued) needs no rating.
    from billing.domain.rating.output import detail_value, plain, rate_text

    entries = list(history)
    previous = sum((e.amount for e in entries if e.posted_on < bill_date), ZERO)
    paid = -sum(
        (
            e.amount
            for e in entries
            if e.kind == "payment"
            and e.posted_on < bill_date
            and (last_bill_date is None or e.posted_on >= last_bill_date)
        ),
        ZERO,
    )
    lines = tuple(
        Line(
            rule_id=bl.rule_id,
            description=bl.description,
            quantity=plain(bl.quantity),
            unit=bl.unit,
            rate=rate_text(bl.rate),
            amount=bl.amount,
            details=detail_value(bl.details),
        )
        for bl in rated.lines
    ) + tuple(
        # One-time charges (PP-SEW-SAMPLE-COST, PP-CWU-PEF, ...) as their own lines; the
        # charge id in the details is what keeps one from being billed twice.
        Line(
            rule_id=c.rule_id,
            description=c.description,
            quantity="1",
            unit="charge",
            rate=str(c.amount),
            amount=c.amount,
            details={
                **dict(getattr(c, "derivation", None) or {}),
                "charge_id": c.charge_id,
                "charged_on": c.charged_on.isoformat(),
                "source_event_id": c.source_event_id,
            },
        )
        for c in charges
    )
    return Bill(
        tenant=rated.tenant,
        account_id=account_id,
        bill_id=bill_id_of(account_id, rated.period_start),
        bill_number=bill_number_of(rated.tenant, account_id, rated.period_start),
        period_start=rated.period_start,
        period_end=rated.period_end,
        bill_date=bill_date,
        due_date=due_date_of(rated.period_end, bill_date, due_days),
        lines=lines,
        total=sum((ln.amount for ln in lines), ZERO),
        # previous balance counts payments too, so "previous - payments_since" double counts:
        # show the balance before those payments, as a statement does.
        previous_balance=previous + paid,
        payments_since=paid,
        tariff_versions=rated.tariff_versions,
        estimated=estimated,
        parcel_id=parcel_id,
        reads=tuple(reads),
    )
