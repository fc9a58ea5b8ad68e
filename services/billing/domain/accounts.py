"""Accounts per tenant, from the ``accounts/`` import file (CONTRACTS.md) and the staff API.

An account is kept as history: each accepted change is a new version; the current version
is what cycles bill. A change of owner or occupant is just a new version: the charges,
penalties and arrears stay on the account (and so on its parcel) (GR-TAXROLL,
SU-OWNER-CHANGE): nothing here touches the ledger.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from dataclasses import fields as dataclass_fields
from datetime import date
from decimal import Decimal
from typing import Any, Literal

from billing.domain.csvfiles import BadCell, LineError, key_cell, stream_rows, text_cell
from common import fields
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


@dataclass(frozen=True, slots=True)
class TakenAccount:
    """A version an import line made: the record, the run and line that made it, how the
    line was counted (``accepted``: a new account; ``changed``: a new version) and when it
    was first recorded (kept by a redelivery, so its items are rewritten the same)."""

    record: AccountRecord
    run: str
    line: int
    kind: Literal["accepted", "changed"]
    recorded_at: str


_VALUE_FIELDS = frozenset(f.name for f in dataclass_fields(AccountRecord)) - {"extra"}
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


METER_SIZES = ("5/8", "3/4", "1", "1-1/2", "2", "3", "4", "6")  # common.tariffs.Meter


@dataclass(frozen=True, slots=True)
class BillsFromRules:
    """What an account's cells must agree with (X-PERIOD, issue 27): the tenant's period
    length in months, its first tariff version's date, today (a go-live never lies ahead;
    an ``opened_on`` at most :data:`common.fields.SCHEDULED_AHEAD_DAYS` ahead), and what the
    tariff in force lists: its meter sizes (a tenant absent from ``meter_sizes`` charges
    none by size: any of :data:`METER_SIZES`) and its rate zones (a tenant absent from
    ``zones`` has none: a zone cell is refused)."""

    months: Mapping[str, int]
    first_tariff: Mapping[str, date]
    today: date
    meter_sizes: Mapping[str, frozenset[str]] = field(default_factory=dict)
    zones: Mapping[str, frozenset[str]] | None = None


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


def _listed(column: str, value: str | None, allowed: Collection[str], tenant: str) -> str | None:
    if value is None or value in allowed:
        return value
    if not allowed:
        raise BadCell(column, f"{value[:40]!r}: the tariff of {tenant} lists none")
    raise BadCell(
        column, f"{value[:40]!r} is not listed by the tariff of {tenant} ({', '.join(sorted(allowed))})"
    )


def _checked(column: str, check: Any) -> Any:
    try:
        return check()
    except fields.BadField as exc:
        raise BadCell(column, exc.reason) from None


def parse_account_row(
    row: Mapping[str, str], tenants: Collection[str], rules: BillsFromRules | None = None
) -> AccountRecord:
    """One accounts line as a record, or :class:`BadCell` naming the first column that is
    wrong and why: ids of the safe set, text printable and bounded, a US ZIP code, dates in
    the window of their kind (``common.fields.DateWindow``), and a class, meter size and zone
    the tenant's tariff lists (issue 27)."""
    text = dict(row)
    tenant = key_cell(text, "tenant")
    if tenant not in tenants:
        raise BadCell("tenant", f"{tenant!r} is not a tenant")
    account_id = key_cell(text, "account_id")
    for column in ("name", "service_address", "mailing_address", "zip", "opened_on", "class"):
        if not text.get(column):
            raise BadCell(column, "is required")
    klass = text["class"]
    if klass not in ("residential", "nonresidential"):
        raise BadCell("class", f"must be residential or nonresidential, got {klass[:40]!r}")
    zip_code = _checked("zip", lambda: fields.zip_code("zip", text["zip"]))
    units = _decimal(row, "dwelling_units")
    if units is not None and (units != units.to_integral_value() or units < 1):
        raise BadCell("dwelling_units", "must be a whole number of at least 1")
    frequency = row.get("billing_frequency")
    if frequency is not None and frequency not in ("monthly", "quarterly", "annual"):
        raise BadCell("billing_frequency", f"must be monthly, quarterly or annual, got {frequency[:40]!r}")
    opened = _date(row, "opened_on")
    assert opened is not None  # required above
    closed = _date(row, "closed_on")
    if closed is not None and closed <= opened:
        raise BadCell("closed_on", f"{closed} must be after opened_on {opened}")
    meter = text_cell(text, "meter_size")
    zone = text_cell(text, "zone")
    if rules is not None:
        window = fields.DateWindow(rules.first_tariff.get(tenant, date.min), rules.today)
        _checked("opened_on", lambda: window.started("opened_on", opened))
        if closed is not None:
            _checked(
                "closed_on", lambda: window.ended("closed_on", closed, start=opened, start_field="opened_on")
            )
        meter = _listed("meter_size", meter, rules.meter_sizes.get(tenant, frozenset(METER_SIZES)), tenant)
        if rules.zones is not None:
            zone = _listed("zone", zone, rules.zones.get(tenant, frozenset()), tenant)
    elif meter is not None and meter not in METER_SIZES:
        raise BadCell("meter_size", f"{meter[:40]!r} is not a meter size ({', '.join(METER_SIZES)})")
    parcel = key_cell(text, "parcel_id") if row.get("parcel_id") else None
    if tenant == STORMWATER and parcel is None:
        raise BadCell("parcel_id", "is required for a stormwater account")
    email = text_cell(text, "email")
    if email is not None and ("@" not in email or " " in email):
        raise BadCell("email", f"{email[:40]!r} is not an email address")
    return AccountRecord(
        tenant=tenant,
        account_id=account_id,
        name=text_cell(text, "name", required=True) or "",
        service_address=text_cell(text, "service_address", required=True) or "",
        mailing_address=text_cell(text, "mailing_address", required=True) or "",
        zip=zip_code,
        opened_on=opened,
        account_class=klass,  # type: ignore[arg-type]
        closed_on=closed,
        email=email,
        email_opt_in=_bool(row, "email_opt_in"),
        zone=zone,
        meter_size=meter,
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


def read_account_lines(
    chunks: Iterable[bytes], tenants: Collection[str], rules: BillsFromRules | None = None
) -> Iterator[tuple[int, AccountRecord | LineError]]:
    """Each data line of an accounts file, in file order, as its record or its rejection;
    streamed (``csvfiles.stream_rows``): one line held at a time."""
    for line, row in stream_rows(chunks, required=REQUIRED, optional=OPTIONAL):
        if isinstance(row, BadCell):  # not a row of the header's columns
            yield line, LineError(line, row.column, row.reason)
            continue
        try:
            yield line, parse_account_row(row, tenants, rules)
        except BadCell as exc:
            yield line, LineError(line, exc.column, exc.reason)


def parse_account_file(
    data: bytes, tenants: Collection[str], rules: BillsFromRules | None = None
) -> tuple[list[tuple[int, AccountRecord]], list[LineError]]:
    """Accepted (line, account) pairs and the rejected lines. A later line for the same
    account in the same file is a later version of it. ``rules``: what a ``bills_from``
    is checked against (without them, only that it is a month start not before the month
    of ``opened_on``)."""
    accepted: list[tuple[int, AccountRecord]] = []
    errors: list[LineError] = []
    for line, got in read_account_lines((data,), tenants, rules):
        if isinstance(got, LineError):
            errors.append(got)
        else:
            accepted.append((line, got))
    return accepted, errors
