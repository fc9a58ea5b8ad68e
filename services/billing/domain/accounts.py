"""Accounts per tenant, from the ``accounts/`` import file (CONTRACTS.md) and the staff API.

An account is kept as history: each accepted change is a new version; the current version
is what cycles bill. A change of owner or occupant is just a new version: the charges,
penalties and arrears stay on the account (and so on its parcel) (GR-TAXROLL,
SU-OWNER-CHANGE): nothing here touches the ledger.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field, fields
from datetime import date
from decimal import Decimal
from typing import Any, Literal

from billing.domain.csvfiles import BadCell, LineError, key_cell, rows, text_cell
from common.values import BadValue, to_date, to_decimal

REQUIRED = ("tenant", "account_id", "name", "service_address", "mailing_address", "zip", "opened_on", "class")
OPTIONAL = (
    "closed_on",
    "email",
    "email_opt_in",
    "zone",
    "meter_size",
    "dwelling_units",
    "rec_units",
    "estimated_gallons",
    "parcel_id",
    "owner_name",
    "owner_address",
    "bill_recipient_name",
    "bill_recipient_address",
    "billing_frequency",
    "satellite",
    "sic",
    "bills_from",
)
STORMWATER = "pleasant-prairie-stormwater"


@dataclass(frozen=True, slots=True)
class AccountRecord:
    """The current version of an account (every CONTRACTS.md column, typed)."""

    tenant: str
    account_id: str
    name: str
    service_address: str
    mailing_address: str
    zip: str
    opened_on: date
    account_class: Literal["residential", "nonresidential"]
    closed_on: date | None = None
    email: str | None = None
    email_opt_in: bool = False
    zone: str | None = None
    meter_size: str | None = None
    dwelling_units: int = 1
    rec_units: Decimal | None = None
    estimated_gallons: Decimal | None = None
    parcel_id: str | None = None
    owner_name: str | None = None
    owner_address: str | None = None
    bill_recipient_name: str | None = None
    bill_recipient_address: str | None = None
    billing_frequency: str | None = None
    satellite: bool = False
    sic: str | None = None
    bills_from: date | None = None  # go-live: the first period start this system bills (X-PERIOD)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def active_in(self, start: date, end: date) -> bool:
        """Open for some of [start, end)."""
        return self.opened_on < end and (self.closed_on is None or self.closed_on > start)

    @property
    def recipient(self) -> tuple[str, str]:
        return (self.bill_recipient_name or self.name, self.bill_recipient_address or self.mailing_address)

    @property
    def owner(self) -> tuple[str, str]:
        return (self.owner_name or self.name, self.owner_address or self.mailing_address)

    def to_values(self) -> dict[str, Any]:
        values = asdict(self)
        values.pop("extra", None)
        return {k: v for k, v in values.items() if v is not None}

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> AccountRecord:
        """The record from ``to_values`` (every field but ``extra``; other keys ignored).
        Each read of an account (a cycle reads each twice) takes this: the field names are
        looked up once per process (``_VALUE_FIELDS``), not listed for every account."""
        kwargs: dict[str, Any] = {}
        for name, v in values.items():
            if name in _VALUE_FIELDS:
                convert = _FROM_VALUE.get(name)
                kwargs[name] = v if convert is None else convert(v)
        return cls(**kwargs)


_VALUE_FIELDS = frozenset(f.name for f in fields(AccountRecord)) - {"extra"}
_FROM_VALUE: dict[str, Any] = {
    "opened_on": to_date,
    "closed_on": to_date,
    "bills_from": to_date,
    "rec_units": lambda v: Decimal(str(v)),
    "estimated_gallons": lambda v: Decimal(str(v)),
    "dwelling_units": int,
}


def _bool(row: Mapping[str, str], column: str) -> bool:
    value = row.get(column)
    if value is None:
        return False
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise BadCell(column, f"must be true or false, got {value!r}")


def _date(row: Mapping[str, str], column: str) -> date | None:
    value = row.get(column)
    if value is None:
        return None
    try:
        return to_date(value)
    except BadValue as exc:
        raise BadCell(column, str(exc)) from None


def _decimal(row: Mapping[str, str], column: str) -> Decimal | None:
    value = row.get(column)
    if value is None:
        return None
    try:
        number = to_decimal(value)
    except BadValue as exc:
        raise BadCell(column, str(exc)) from None
    if number < 0 or number.adjusted() > 30:
        raise BadCell(column, f"must be a non-negative number below 10^30, got {value!r}")
    return number


@dataclass(frozen=True, slots=True)
class BillsFromRules:
    """What a ``bills_from`` must agree with (X-PERIOD): the tenant's period length in
    months, its first tariff version's date, and today (a go-live never lies ahead)."""

    months: Mapping[str, int]
    first_tariff: Mapping[str, date]
    today: date


def period_start_of(day: date, months: int) -> date:
    """The start of the tenant's billing period holding ``day`` (periods aligned to January)."""
    return date(day.year, (day.month - 1) // months * months + 1, 1)


def _bills_from(
    row: Mapping[str, str], tenant: str, opened: date, rules: BillsFromRules | None
) -> date | None:
    """X-PERIOD: a period start of the tenant's cycle, not before the period of
    ``opened_on`` (nothing is billed before the account opened), not before the tenant's
    first tariff version, not in the future."""
    start = _date(row, "bills_from")
    if start is None:
        return None
    months = rules.months.get(tenant, 1) if rules is not None else 1
    if period_start_of(start, months) != start:
        raise BadCell("bills_from", f"must be the start of a {months}-month billing period, got {start}")
    if start < period_start_of(opened, months):
        raise BadCell("bills_from", f"must not be before the period of opened_on ({opened}), got {start}")
    if rules is not None:
        first = rules.first_tariff.get(tenant)
        if first is not None and start < first:
            raise BadCell(
                "bills_from", f"must not be before the tenant's first tariff ({first}), got {start}"
            )
        if start > rules.today:
            raise BadCell("bills_from", f"must not be in the future (today {rules.today}), got {start}")
    return start


def parse_account_row(
    row: Mapping[str, str], tenants: Collection[str], rules: BillsFromRules | None = None
) -> AccountRecord:
    tenant = key_cell(dict(row), "tenant")
    if tenant not in tenants:
        raise BadCell("tenant", f"{tenant!r} is not a tenant")
    klass = row.get("class")
    if klass not in ("residential", "nonresidential"):
        raise BadCell("class", f"must be residential or nonresidential, got {klass!r}")
    units = _decimal(row, "dwelling_units")
    if units is not None and (units != units.to_integral_value() or units < 1):
        raise BadCell("dwelling_units", "must be a whole number of at least 1")
    frequency = row.get("billing_frequency")
    if frequency is not None and frequency not in ("monthly", "quarterly", "annual"):
        raise BadCell("billing_frequency", f"must be monthly, quarterly or annual, got {frequency!r}")
    opened = _date(row, "opened_on")
    if opened is None:
        raise BadCell("opened_on", "is required")
    closed = _date(row, "closed_on")
    if closed is not None and closed <= opened:
        raise BadCell("closed_on", "must be after opened_on")
    parcel = key_cell(dict(row), "parcel_id") if row.get("parcel_id") else None
    if tenant == STORMWATER and parcel is None:
        raise BadCell("parcel_id", "is required for a stormwater account")
    text = dict(row)
    return AccountRecord(
        tenant=tenant,
        account_id=key_cell(text, "account_id"),
        name=text_cell(text, "name", required=True) or "",
        service_address=text_cell(text, "service_address", required=True) or "",
        mailing_address=text_cell(text, "mailing_address", required=True) or "",
        zip=text_cell(text, "zip", required=True) or "",
        opened_on=opened,
        account_class=klass,  # type: ignore[arg-type]
        closed_on=closed,
        email=text_cell(text, "email"),
        email_opt_in=_bool(row, "email_opt_in"),
        zone=text_cell(text, "zone"),
        meter_size=text_cell(text, "meter_size"),
        dwelling_units=int(units) if units is not None else 1,
        rec_units=_decimal(row, "rec_units"),
        estimated_gallons=_decimal(row, "estimated_gallons"),
        parcel_id=parcel,
        owner_name=text_cell(text, "owner_name"),
        owner_address=text_cell(text, "owner_address"),
        bill_recipient_name=text_cell(text, "bill_recipient_name"),
        bill_recipient_address=text_cell(text, "bill_recipient_address"),
        billing_frequency=frequency,
        satellite=_bool(row, "satellite"),
        sic=text_cell(text, "sic"),
        bills_from=_bills_from(row, tenant, opened, rules),
    )


def parse_account_file(
    data: bytes, tenants: Collection[str], rules: BillsFromRules | None = None
) -> tuple[list[tuple[int, AccountRecord]], list[LineError]]:
    """Accepted (line, account) pairs and the rejected lines. A later line for the same
    account in the same file is a later version of it. ``rules``: what a ``bills_from``
    is checked against (without them, only that it is a month start not before the month
    of ``opened_on``)."""
    accepted: list[tuple[int, AccountRecord]] = []
    errors: list[LineError] = []
    for line, row in rows(data, required=REQUIRED, optional=OPTIONAL):
        if isinstance(row, BadCell):  # not a row of the header's columns
            errors.append(LineError(line, row.column, row.reason))
            continue
        try:
            accepted.append((line, parse_account_row(row, tenants, rules)))
        except BadCell as exc:
            errors.append(LineError(line, exc.column, exc.reason))
    return accepted, errors
