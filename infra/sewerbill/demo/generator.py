"""A demo utility of the four tenants, seeded and reproducible (issue 32): the import files of
CONTRACTS.md "Import files" for a year, the staff calls files cannot carry, payment intents,
and the figures a year's run must arrive at.

Pure: ``generate(size, seed, start, months, book)`` reads no file and no clock; the tariff
book is passed in (``common.tariff_files.load_tariff_book``) and gives the meter sizes, the
PP rate zones, the billing periods and each tenant's first tariff version (nothing is dated
before it). Every date is relative to ``start``, so the demo works from any start date.

Streaming: an account is never stored. It is rebuilt from ``(seed, tenant, index)`` each
time a file needs it (a ``random.Random`` of its own), and each file's rows come from a
generator, so 100,000 accounts take no more memory than 300. Register readings are the
account's use summed from its install; use per period is a deterministic function of the
account and the period (cheap arithmetic, no stored history).

What is in a year (``months`` from ``start``; Grafton and Sullivan bill quarterly):

- accounts (``accounts/``) and meters (``meters/``) on the first day, then new accounts
  opening and accounts closing (``closed_on``; the meter removed with its final reading)
  during the year, each in the file of its day;
- a register read for every metered meter at every period end (``reads/``), with PP-0001's
  rollover (a 5-digit register near its end), PP-0002's exchange (a gallon meter removed
  with its final reading, a cubic-foot meter installed the same day) and PP-0003's missed
  read (left out of one period's file for the daily run to estimate; the next period's read
  replaces the estimate);
- the satellites' flow monitors' 5-minute volumes each month (``reads/interval/``), with
  one slug (X-SLUG);
- lab results (``lab/``): PP-0004 entered Category B 23 months before ``start`` and has been
  compliant since (back in Category A 24 months after its first compliant sample, inside the
  year), PP-0005 enters Category B in the first month and is compliant thereafter, GR-0004
  is high strength every quarter, SU-0004 has one day of BOD >= 900 (SU-BOD900), the
  satellites are sampled monthly (PP-SEW-SAT-SAMPLE);
- the GIS extract (``gis/``): a parcel for every stormwater account (woods, ponds as
  excluded area, farmsteads, vacant lots, rentals whose owner is not the bill recipient),
  and the farms' agricultural land and a right-of-way (exempt, no account) as GeoJSON;
- staff calls (:class:`ApiCall`): the sampled accounts' sampling points (sampling learns
  its accounts so) and Grafton's septage hauler permits and disposals (GR-SEPTAGE-*);
- payment intents (:class:`PaymentIntent`): for every bill the generator expects, whether
  it is paid on time, late, in part or not at all, and by lockbox or the portal. Amounts
  cannot be known without rating, so the runner turns an intent into a lockbox line
  (:func:`lockbox_row`) or a portal payment once the bill exists.

The demo identities keep their ids: Ada Demo is PP-0001 and stormwater PPW-0001 on parcel
PP-P-0001, which Olive Owner owns and rents to her (a parcel of the GIS extract, so the
reconsideration form works); Ben Demo is PP-0002.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from functools import partial
from itertools import islice
from typing import Any
from zoneinfo import ZoneInfo

from common.dates import add_months
from common.tariffs import GraftonTariff, PPSewerTariff, TariffBook

PP = "pleasant-prairie-sewer"
PPW = "pleasant-prairie-stormwater"
GR = "grafton-sewer"
SU = "sullivan-sewer"
TENANTS = (PP, PPW, GR, SU)
DEFAULT_SIZE = 300
MIN_SIZE = 60
BENCHMARK_SIZES = (10_000, 100_000)
SHARES = {PP: Decimal("0.40"), PPW: Decimal("0.35"), GR: Decimal("0.15"), SU: Decimal("0.10")}
PREFIX = {PP: "PP", PPW: "PPW", GR: "GR", SU: "SU"}
TOWN = {PP: "Pleasant Prairie", PPW: "Pleasant Prairie", GR: "Grafton", SU: "Sullivan"}
ZIP = {PP: "53158", PPW: "53158", GR: "53024", SU: "53178"}
LOCAL = ZoneInfo("America/Chicago")  # every tenant is in Wisconsin
CF_GAL = Decimal("7.48052")
READ_WINDOW_DAYS = 5

ACCOUNT_COLUMNS = (
    "tenant", "account_id", "name", "service_address", "mailing_address", "zip", "opened_on", "class",
    "closed_on", "email", "email_opt_in", "zone", "meter_size", "dwelling_units", "rec_units",
    "estimated_gallons", "parcel_id", "owner_name", "owner_address", "bill_recipient_name",
    "bill_recipient_address", "billing_frequency", "satellite", "sic",
)  # fmt: skip
METER_COLUMNS = (
    "tenant", "meter_id", "account_id", "kind", "units", "digits", "installed_on", "initial_reading",
    "size", "removed_on", "final_reading",
)  # fmt: skip
READ_COLUMNS = ("tenant", "meter_id", "read_on", "reading", "read_type")
INTERVAL_COLUMNS = ("tenant", "meter_id", "interval_start", "volume")
LAB_COLUMNS = (
    "tenant", "sample_id", "account_id", "collected_on", "parameter", "value", "units", "analysed_on",
    "lab", "kind",
)  # fmt: skip
GIS_COLUMNS = (
    "tenant", "parcel_id", "owner_name", "use", "area_sqft", "impervious_sqft", "woods_sqft",
    "excluded_sqft", "farmstead",
)  # fmt: skip
PAYMENT_COLUMNS = ("tenant", "account_id", "reference", "paid_on", "amount")
INTENT_COLUMNS = (
    "tenant", "account_id", "period_start", "period_end", "kind", "channel", "relative_to", "offset_days",
    "fraction", "reference",
)  # fmt: skip

FIRST = (
    "Alex", "Bea", "Carl", "Dana", "Eli", "Fay", "Gus", "Hana", "Ivan", "Jo", "Kai", "Lena", "Milo", "Nia",
    "Otto", "Pia", "Quinn", "Rosa", "Sven", "Tess", "Uma", "Vic", "Wren", "Yara", "Zed",
)  # fmt: skip
LAST = (
    "Anders", "Berg", "Cruz", "Dahl", "Evans", "Fisk", "Gray", "Holm", "Iverson", "Jensen", "Kowalski",
    "Lund", "Meyer", "Novak", "Olson", "Peterson", "Quist", "Ruiz", "Schultz", "Thorne", "Ulrich",
    "Vogel", "Weber", "Young", "Zimmer",
)  # fmt: skip
STREETS = (
    "Lake Rd", "Oak St", "Elm Ave", "Prairie Ln", "Mill Rd", "Cedar Ct", "River Dr", "Birch St",
    "Highland Ave", "Main St", "Park Pl", "Spring St", "Hickory Ln", "Meadow Rd", "Pine Ct",
)  # fmt: skip
BUSINESSES = (
    "Diner", "Auto Repair", "Dental", "Bakery", "Laundromat", "Hardware", "Brewing", "Printing",
    "Market", "Fitness", "Clinic", "Salon",
)  # fmt: skip
LANDLORDS = ("Olive Owner", "Harbor Rentals LLC", "Prairie Homes LLC", "K. Landry", "Lakeshore Properties")
DIURNAL = tuple(
    Decimal(v)
    for v in (
        "0.55",
        "0.50",
        "0.48",
        "0.47",
        "0.50",
        "0.65",
        "0.95",
        "1.30",
        "1.40",
        "1.30",
        "1.20",
        "1.15",
        "1.15",
        "1.10",
        "1.10",
        "1.15",
        "1.20",
        "1.30",
        "1.40",
        "1.35",
        "1.25",
        "1.10",
        "0.85",
        "0.70",
    )
)  # fmt: skip; hourly factors of a day's flow, mean 1.0 (within 5x: only the slug is a slug)


# --- what the generator hands out --------------------------------------------------------------


@dataclass(frozen=True)
class DemoFile:
    """One upload: its key under the uploads bucket, the day the runner uploads it (every
    date in it is on or before that day), and its rows, generated afresh on each call."""

    on: date
    key: str
    kind: str  # accounts, meters, reads, interval, lab, gis, payments
    columns: tuple[str, ...]
    rows: Callable[[], Iterator[tuple[str, ...]]]
    format: str = "csv"  # or geojson (gis only)

    def chunks(self) -> Iterator[bytes]:
        """The file's bytes, a block at a time (CSV: header then rows; GeoJSON: features)."""
        if self.format == "geojson":
            yield from _geojson_chunks(self)
            return
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.columns)
        rows = self.rows()
        while block := list(islice(rows, 4096)):
            writer.writerows(block)
            yield buffer.getvalue().encode()
            buffer.seek(0)
            buffer.truncate()
        if buffer.tell():
            yield buffer.getvalue().encode()

    def data(self) -> bytes:
        return b"".join(self.chunks())


@dataclass(frozen=True)
class ApiCall:
    """A staff call the runner makes on day ``on`` (before that day's files)."""

    on: date
    method: str
    path: str
    tenant: str
    body: Mapping[str, Any]
    purpose: str

    def to_json(self) -> dict[str, Any]:
        return {
            "on": self.on.isoformat(),
            "method": self.method,
            "path": self.path,
            "tenant": self.tenant,
            "body": dict(self.body),
            "purpose": self.purpose,
        }


@dataclass(frozen=True, slots=True)
class PaymentIntent:
    """How the bill of ``account_id`` for the period is paid; the runner makes the payment
    once the bill exists: on ``relative_to`` (the bill's ``due_date`` or ``bill_date``) plus
    ``offset_days``, for ``fraction`` of the bill's total ("missing": never paid)."""

    tenant: str
    account_id: str
    period_start: date
    period_end: date
    kind: str  # on_time, late, partial, missing
    channel: str  # lockbox, portal, none
    relative_to: str
    offset_days: int
    fraction: Decimal
    reference: str

    def row(self) -> tuple[str, ...]:
        return (
            self.tenant,
            self.account_id,
            self.period_start.isoformat(),
            self.period_end.isoformat(),
            self.kind,
            self.channel,
            self.relative_to,
            str(self.offset_days),
            str(self.fraction),
            self.reference,
        )


def lockbox_row(
    intent: PaymentIntent, bill_total: Decimal, bill_date: date, due_date: date
) -> tuple[str, ...] | None:
    """The ``payments/`` line of an intent once its bill is known (None: missing, or paid
    through the portal). The amount is the fraction of the total, in cents (half up)."""
    if intent.kind == "missing" or intent.channel != "lockbox":
        return None
    paid_on = intent_paid_on(intent, bill_date, due_date)
    amount = (bill_total * intent.fraction).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    if amount <= 0:
        return None
    return (intent.tenant, intent.account_id, intent.reference, paid_on.isoformat(), str(amount))


def intent_paid_on(intent: PaymentIntent, bill_date: date, due_date: date) -> date:
    """The day the intent's payment is made: never before the bill."""
    base = due_date if intent.relative_to == "due_date" else bill_date
    return max(bill_date, base + timedelta(days=intent.offset_days))


@dataclass
class DemoUtility:
    """The generated demo: files and staff calls by day, payment intents, expectations."""

    size: int
    seed: int
    start: date
    months: int
    files: list[DemoFile]
    api_calls: list[ApiCall]
    payment_intents: Callable[[], Iterator[PaymentIntent]]
    expected: dict[str, Any]

    def days(self) -> list[date]:
        """Every day with something to do, in order."""
        return sorted({f.on for f in self.files} | {c.on for c in self.api_calls})


# --- accounts --------------------------------------------------------------------------------


@dataclass(slots=True)
class Acct:
    """One account as the generator chose it (rebuilt from its seed whenever needed)."""

    tenant: str
    index: int
    account_id: str
    kind: str
    klass: str
    name: str
    service_address: str
    opened_on: date
    closed_on: date | None = None
    email: str | None = None
    zone: str | None = None
    meter_size: str | None = None
    dwelling_units: int = 1
    rec_units: Decimal | None = None
    estimated_gallons: int | None = None
    parcel_id: str | None = None
    owner_name: str | None = None
    owner_address: str | None = None
    satellite: bool = False
    sic: str | None = None
    daily_gal: int = 0  # typical use per day (gallons)
    units: str = "gal"
    digits: int = 6
    initial: int = 0
    rented: bool = False
    story: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def metered(self) -> bool:
        return self.meter_size is not None

    def active_in(self, start: date, end: date) -> bool:
        return self.opened_on < end and (self.closed_on is None or self.closed_on > start)

    def row(self) -> tuple[str, ...]:
        town, zipcode = TOWN[self.tenant], ZIP[self.tenant]
        recipient = (self.name, self.service_address) if self.rented else ("", "")
        return (
            self.tenant,
            self.account_id,
            self.name,
            f"{self.service_address} {town} WI",
            # The mailing address as an envelope shows it: street, town, state and ZIP.
            f"{self.service_address}, {town}, WI {zipcode}",
            zipcode,
            self.opened_on.isoformat(),
            self.klass,
            _d(self.closed_on),
            self.email or "",
            "true" if self.email else "",
            self.zone or "",
            self.meter_size or "",
            str(self.dwelling_units) if self.dwelling_units != 1 else "",
            "" if self.rec_units is None else str(self.rec_units),
            "" if self.estimated_gallons is None else str(self.estimated_gallons),
            self.parcel_id or "",
            self.owner_name or "",
            self.owner_address or "",
            recipient[0],
            f"{recipient[1]}, {town}, WI {zipcode}" if recipient[1] else "",
            "",
            "true" if self.satellite else "",
            self.sic or "",
        )


class Plan:
    """The counts, periods and special accounts of one generated demo (no files yet)."""

    def __init__(self, size: int, seed: int, start: date, months: int, book: TariffBook) -> None:
        if size < MIN_SIZE:
            raise ValueError(f"size: at least {MIN_SIZE} accounts in all, got {size}")
        if months < 3:
            raise ValueError(f"months: at least 3 (a quarter), got {months}")
        self.size, self.seed, self.start, self.months, self.book = size, seed, start, months, book
        self.end = add_months(start, months)
        shares = {t: int(Decimal(size) * SHARES[t]) for t in TENANTS}
        shares[PP] += size - sum(shares.values())
        self.count = shares
        self.period_months = {
            t: book.in_force(t, max(start, book.first_effective(t))).billing_period_months for t in TENANTS
        }
        self.begin: dict[str, date] = {}
        self.periods: dict[str, list[tuple[date, date]]] = {}
        for t in TENANTS:
            months_t = self.period_months[t]
            first = max(start, book.first_effective(t))
            p0 = _period_start(first, months_t)
            if p0 < book.first_effective(t):
                p0 = add_months(p0, months_t)
            self.begin[t] = p0
            out, s = [], p0
            while add_months(s, months_t) <= self.end:
                out.append((s, add_months(s, months_t)))
                s = add_months(s, months_t)
            if not out:
                raise ValueError(f"months: {months} from {start} holds no whole period of {t}")
            self.periods[t] = out
        pp = self.periods[PP]
        self.exchange_period = min(3, len(pp) - 1)
        self.missed_period = min(4, len(pp) - 2)
        self.rollover_period = 0
        # stormwater accounts 1..paired share their parcel and customer with PP sewer's
        self.paired = min(self.count[PP], self.count[PPW] * 7 // 10)
        self.satellites = 2 + size // 25_000
        # PP-0006 and PP-0007, then after the other special accounts (PP-0008 to PP-0011)
        self.satellite_ids = [6, 7, *range(12, 12 + self.satellites - 2)]
        # the meter sizes and zones the tariff in force at each tenant's first period publishes
        pp_tariff = book.in_force(PP, self.begin[PP])
        gr_tariff = book.in_force(GR, self.begin[GR])
        assert isinstance(pp_tariff, PPSewerTariff) and isinstance(gr_tariff, GraftonTariff)
        charges: dict[str, dict[str, Decimal]] = dict(pp_tariff.service_charge.value)  # type: ignore[arg-type]
        self.pp_sizes: set[str] = set(charges["PP"])
        self.pp_zones = tuple(pp_tariff.zones)
        self.lm_sizes: set[str] = set(charges.get("LM", {}))
        self.gr_sizes: set[str] = set(gr_tariff.service_charge.value)

    # -- the account of (tenant, index) ---------------------------------------------------------
    def rng(self, tenant: str, index: int, salt: int = 0) -> random.Random:
        return random.Random(((self.seed * 7919 + TENANTS.index(tenant)) * 1_000_003 + index) * 31 + salt)

    def account_ids(self, tenant: str) -> range:
        return range(1, self.count[tenant] + 1)

    def account(self, tenant: str, i: int) -> Acct:
        r = self.rng(tenant, i)
        builder = {PP: self._pp, PPW: self._ppw, GR: self._gr, SU: self._su}[tenant]
        a = builder(i, r)
        if a.metered:
            annual_units = a.daily_gal * 400 // (7 if a.units == "cf" else 1) + 1
            if a.story != "rollover" and 10**a.digits < annual_units * 4:
                a.digits = max(6, len(str(annual_units * 4)))
            if a.story != "rollover":
                a.initial = r.randrange(0, 10**a.digits // 2)
        if a.story == "" and tenant != PPW:
            self._life(a, r)
        return a

    def _life(self, a: Acct, r: random.Random) -> None:
        """Some accounts open during the year (new construction) and some close (a move)."""
        periods = self.periods[a.tenant]
        roll = r.random()
        if roll < 0.04 and len(periods) > 2:
            k = r.randrange(1, len(periods) - 1)
            a.opened_on = periods[k][0] + timedelta(days=9)
        elif roll < 0.07 and len(periods) > 2:
            k = r.randrange(1, len(periods) - 1)
            a.closed_on = periods[k][0] + timedelta(days=12)

    def _person(self, r: random.Random) -> str:
        return f"{r.choice(FIRST)} {r.choice(LAST)}"

    def _address(self, r: random.Random, i: int) -> str:
        return f"{100 + i * 7 % 9000} {r.choice(STREETS)}"

    def _rent(self, a: Acct, r: random.Random, share: float = 0.2) -> None:
        if a.klass == "residential" and r.random() < share:
            a.rented = True
            a.owner_name = r.choice(LANDLORDS[1:])
            a.owner_address = f"{r.randrange(1, 999)} Harbor Way, Kenosha, WI 53140"

    def _pp(self, i: int, r: random.Random) -> Acct:
        begin = self.begin[PP]
        a = Acct(
            PP, i, f"PP-{i:04d}", "residential", "residential", self._person(r), self._address(r, i), begin
        )
        a.zone, a.meter_size, a.daily_gal = "PP", "5/8", r.randrange(110, 220)
        kind = {
            1: "residential", 2: "residential", 3: "residential", 4: "industrial", 5: "industrial",
            8: "multifamily", 9: "apartments", 10: "commercial", 11: "residential_lm",
        }.get(i)  # fmt: skip
        if i in self.satellite_ids:
            kind = "satellite"
        if kind is None:
            x = r.random()
            kind = (
                "residential" if x < 0.55 else "residential_lm" if x < 0.65 else "multifamily" if x < 0.75
                else "apartments" if x < 0.80 else "commercial" if x < 0.95 else "industrial"
            )  # fmt: skip
        a.kind = kind
        if kind == "residential_lm" and "LM" in self.pp_zones and "5/8" in self.lm_sizes:
            a.zone = "LM"
        elif kind == "residential_lm":
            a.kind = "residential"
        elif kind == "multifamily":
            a.dwelling_units = r.randrange(2, 5)
            a.meter_size, a.daily_gal = "3/4", 150 * a.dwelling_units
        elif kind == "apartments":
            a.klass, a.dwelling_units = "nonresidential", r.randrange(5, 40)
            a.meter_size, a.daily_gal = ("1-1/2" if a.dwelling_units > 16 else "1"), 140 * a.dwelling_units
            a.name = f"{r.choice(STREETS).split()[0]} Apartments LLC"
        elif kind == "commercial":
            a.klass, a.meter_size, a.daily_gal = (
                "nonresidential",
                r.choice(("5/8", "1", "1-1/2")),
                r.randrange(200, 1500),
            )
            a.name = f"{r.choice(LAST)} {r.choice(BUSINESSES)}"
        elif kind == "industrial":
            a.klass, a.meter_size, a.daily_gal = (
                "nonresidential",
                r.choice(("2", "3")),
                r.randrange(4000, 20000),
            )
            a.name = f"{r.choice(LAST)} Manufacturing Inc"
        elif kind == "satellite":
            a.klass, a.meter_size, a.satellite = "nonresidential", "6", True
            a.daily_gal = r.randrange(40_000, 90_000)
            a.name = f"Town of {r.choice(('Bristol', 'Paris', 'Somers', 'Salem', 'Wheatland'))} Sanitary District {i}"
            a.units = "cf"
        if a.meter_size not in self.pp_sizes:
            a.meter_size = "5/8"
        self._rent(a, r)
        if i <= self.paired and not a.satellite:
            a.parcel_id = f"PP-P-{i:04d}"
        if i == 1:
            a.name, a.service_address, a.email, a.story = (
                "Ada Demo",
                "1 Lake Rd",
                "ada@example.org",
                "rollover",
            )
            a.rented, a.owner_name, a.owner_address = True, "Olive Owner", "9 Harbor Way, Kenosha, WI 53140"
            a.daily_gal, a.digits = 150, 5
            first_use = a.daily_gal * (self.periods[PP][0][1] - self.periods[PP][0][0]).days
            a.initial = 10**5 - first_use // 2
        elif i == 2:
            a.name, a.service_address, a.story, a.rented = "Ben Demo", "2 Lake Rd", "exchange", False
            a.owner_name = a.owner_address = None
        elif i == 3:
            a.story = "missed_read"
        elif i == 4:
            a.story = "category_b_returns_to_a"
        elif i == 5:
            a.story = "enters_category_b"
        elif a.satellite:
            a.story = "satellite"
        if kind in ("industrial", "satellite") or i <= 11:
            a.story = a.story or "special"
        return a

    def _ppw(self, i: int, r: random.Random) -> Acct:
        begin = self.begin[PPW]
        sewer = self.account(PP, i) if i <= self.paired else None
        a = Acct(
            PPW, i, f"PPW-{i:04d}", "residential", "residential", self._person(r), self._address(r, i), begin
        )
        a.parcel_id = f"PP-P-{i:04d}"
        if sewer is not None and not sewer.satellite:
            a.name, a.service_address, a.klass = sewer.name, sewer.service_address, sewer.klass
            a.rented, a.owner_name, a.owner_address = sewer.rented, sewer.owner_name, sewer.owner_address
            a.email = sewer.email
            a.kind = "residential" if sewer.klass == "residential" else "nonresidential"
        else:
            x = {1: 0.0, 2: 0.2, 3: 0.4, 4: 0.9}.get(i - self.paired, r.random())
            if x < 0.15:
                a.kind = "farmstead"
                a.name = f"{r.choice(LAST)} Farm"
            elif x < 0.35:
                a.kind, a.klass = "vacant", "nonresidential"
                a.name = f"{r.choice(LAST)} Land Co"
            elif x < 0.55:
                a.kind, a.klass = "nonresidential", "nonresidential"
                a.name = f"{r.choice(LAST)} {r.choice(BUSINESSES)}"
            else:
                a.kind = "residential"  # a house on a private well and septic
                self._rent(a, r)
        if i == 1:
            a.story = "demo_customer_parcel"
        return a

    def _gr(self, i: int, r: random.Random) -> Acct:
        a = Acct(
            GR,
            i,
            f"GR-{i:04d}",
            "residential",
            "residential",
            self._person(r),
            self._address(r, i),
            self.begin[GR],
        )
        a.parcel_id = f"GR-P-{i:04d}"
        a.meter_size, a.daily_gal = "5/8", r.randrange(110, 220)
        kind = {
            1: "residential",
            2: "unmetered",
            3: "unmetered_commercial",
            4: "industrial",
            5: "septage_hauler",
            6: "residential",
        }.get(i)
        if kind is None:
            x = r.random()
            kind = (
                "residential" if x < 0.65 else "unmetered" if x < 0.80 else "unmetered_commercial" if x < 0.85
                else "commercial"
            )  # fmt: skip
        a.kind = kind
        if kind == "unmetered":
            a.meter_size, a.estimated_gallons, a.daily_gal = None, r.randrange(10, 25) * 1000, 0
        elif kind == "unmetered_commercial":
            a.klass, a.meter_size, a.daily_gal = "nonresidential", None, 0
            a.estimated_gallons = r.randrange(20, 36) * 1000
            a.name = f"{r.choice(LAST)} {r.choice(BUSINESSES)}"
        elif kind == "commercial":
            a.klass, a.meter_size, a.daily_gal = (
                "nonresidential",
                r.choice(("1", "1-1/2", "2")),
                r.randrange(300, 2000),
            )
            a.name = f"{r.choice(LAST)} {r.choice(BUSINESSES)}"
        elif kind == "industrial":
            a.klass, a.meter_size, a.daily_gal = "nonresidential", "2", r.randrange(5000, 15000)
            a.name = "Grafton Dairy Foods Inc"
            a.story = "high_strength"
        elif kind == "septage_hauler":
            a.klass, a.meter_size, a.daily_gal = "nonresidential", "1", r.randrange(200, 600)
            a.name = "Ozaukee Septic Service LLC"
            a.story = "septage_hauler"
        if a.meter_size is not None and a.meter_size not in self.gr_sizes:
            a.meter_size = "5/8"
        self._rent(a, r)
        if i == 6:
            a.rented, a.owner_name, a.owner_address = (
                True,
                "Harbor Rentals LLC",
                "40 Harbor Way, Kenosha, WI 53140",
            )
        if i <= 6:
            a.story = a.story or "special"
        return a

    def _su(self, i: int, r: random.Random) -> Acct:
        a = Acct(
            SU,
            i,
            f"SU-{i:04d}",
            "residential",
            "residential",
            self._person(r),
            self._address(r, i),
            self.begin[SU],
        )
        a.meter_size, a.daily_gal = "5/8", r.randrange(110, 220)
        kind = {1: "residential", 2: "duplex", 3: "commercial", 4: "industrial"}.get(i)
        if kind is None:
            x = r.random()
            kind = "residential" if x < 0.75 else "duplex" if x < 0.85 else "commercial"
        a.kind = kind
        if kind == "duplex":
            a.dwelling_units, a.meter_size, a.daily_gal = 2, "3/4", r.randrange(250, 400)
        elif kind == "commercial":
            a.klass, a.meter_size, a.daily_gal = (
                "nonresidential",
                r.choice(("5/8", "1")),
                r.randrange(200, 1200),
            )
            a.rec_units = Decimal(r.choice(("1.5", "2.0", "2.5", "3.0", "4.0")))
            a.sic = r.choice(("5812", "5411", "7542", "8011"))
            a.name = f"{r.choice(LAST)} {r.choice(BUSINESSES)}"
        elif kind == "industrial":
            a.klass, a.meter_size, a.daily_gal = "nonresidential", "2", 6000
            a.rec_units, a.sic, a.name, a.story = Decimal("12.0"), "2026", "Sullivan Creamery Inc", "bod900"
        self._rent(a, r)
        if i <= 4:
            a.story = a.story or "special"
        return a

    # -- registers ------------------------------------------------------------------------------
    def gallons(self, a: Acct, start: date, end: date) -> int:
        """Gallons used over [start, end): a whole number a month, so the sum over a span
        cut at the first of a month is the sum of its parts (the readings add up)."""
        total = 0
        day = start
        while day < end:
            month_end = date(day.year + day.month // 12, day.month % 12 + 1, 1)
            stop = min(end, month_end)
            days = (stop - day).days
            season = 1.15 if day.month in (6, 7, 8) else 0.95 if day.month in (12, 1, 2) else 1.0
            noise = 0.9 + ((a.index * 2654435761 + day.year * 12 + day.month + self.seed * 97) % 1000) / 5000
            total += int(a.daily_gal * days * season * noise)
            day = stop
        return total

    @staticmethod
    def units_of(units: str, gallons: int) -> int:
        return gallons if units == "gal" else int(Decimal(gallons) / CF_GAL)

    def meters(self, a: Acct) -> list[dict[str, Any]]:
        """The account's meters: id, units, digits, installed/removed and readings by date."""
        if not a.metered:
            return []
        kind = "waste" if a.satellite else "water"
        first = {
            "meter_id": f"{a.account_id}-M1",
            "kind": kind,
            "units": a.units,
            "digits": a.digits,
            "installed_on": a.opened_on,
            "initial": a.initial,
            "size": a.meter_size,
            "removed_on": a.closed_on,
        }
        if a.story != "exchange":
            return [first]
        on = self.periods[PP][self.exchange_period][0] + timedelta(days=9)
        first["removed_on"] = on
        second = {
            "meter_id": f"{a.account_id}-M2",
            "kind": "water",
            "units": "cf",
            "digits": 5,
            "installed_on": on,
            "initial": 0,
            "size": a.meter_size,
            "removed_on": None,
        }
        return [first, second]

    def reading(self, a: Acct, meter: Mapping[str, Any], on: date) -> int:
        used = self.use_units_for(a, meter, meter["installed_on"], on)
        return (int(meter["initial"]) + used) % 10 ** int(meter["digits"])

    def use_units_for(self, a: Acct, meter: Mapping[str, Any], start: date, end: date) -> int:
        return self.units_of(meter["units"], self.gallons(a, start, end))

    def flow_monitor(self, a: Acct) -> str:
        return f"{a.account_id}-FM1"


def _period_start(day: date, months: int) -> date:
    month0 = (day.month - 1) // months * months
    return date(day.year, month0 + 1, 1)


def _d(value: date | None) -> str:
    return "" if value is None else value.isoformat()


# --- files -----------------------------------------------------------------------------------


def generate(size: int, seed: int, start: date, months: int, book: TariffBook) -> DemoUtility:
    """The demo utility of ``size`` accounts in all, from ``seed``, for ``months`` from ``start``."""
    plan = Plan(size, seed, start, months, book)
    files: list[DemoFile] = []
    files += _account_files(plan)
    files += _meter_files(plan)
    files += _read_files(plan)
    files += _interval_files(plan)
    files += _gis_files(plan)
    files += _lab_files(plan)
    order = {"accounts": 0, "gis": 1, "meters": 2, "reads": 3, "interval": 4, "lab": 5, "payments": 6}
    files.sort(key=lambda f: (f.on, order[f.kind], f.key))
    calls = _api_calls(plan)
    calls.sort(key=lambda c: c.on)
    return DemoUtility(
        size=size,
        seed=seed,
        start=start,
        months=months,
        files=files,
        api_calls=calls,
        payment_intents=lambda: _intents(plan),
        expected=_expected(plan, files, calls),
    )


def _account_files(plan: Plan) -> list[DemoFile]:
    """The first day's accounts of all tenants, then one file per day an account opens or closes."""
    changes: dict[date, list[tuple[str, int]]] = {}
    for t in TENANTS:
        for i in plan.account_ids(t):
            a = plan.account(t, i)
            if a.opened_on > plan.begin[t]:
                changes.setdefault(a.opened_on, []).append((t, i))
            if a.closed_on is not None:
                changes.setdefault(a.closed_on, []).append((t, i))

    def initial(tenant_day: date) -> Iterator[tuple[str, ...]]:
        for t in TENANTS:
            if max(plan.start, plan.begin[t]) != tenant_day:
                continue
            for i in plan.account_ids(t):
                a = plan.account(t, i)
                if a.opened_on <= tenant_day:
                    closed, a.closed_on = a.closed_on, None
                    yield a.row()
                    a.closed_on = closed

    def changed(day: date, keys: list[tuple[str, int]]) -> Iterator[tuple[str, ...]]:
        for t, i in keys:
            a = plan.account(t, i)
            if a.closed_on is not None and a.closed_on > day:
                a.closed_on = None
            yield a.row()

    days = sorted({max(plan.start, plan.begin[t]) for t in TENANTS})
    out = [
        DemoFile(d, f"accounts/demo-{d.isoformat()}.csv", "accounts", ACCOUNT_COLUMNS, partial(initial, d))
        for d in days
    ]
    for day, keys in sorted(changes.items()):
        out.append(
            DemoFile(
                day,
                f"accounts/demo-changes-{day.isoformat()}.csv",
                "accounts",
                ACCOUNT_COLUMNS,
                partial(changed, day, keys),
            )
        )
    return out


def _meter_row(a: Acct, m: Mapping[str, Any], plan: Plan, *, removed: bool) -> tuple[str, ...]:
    removed_on = m["removed_on"] if removed else None
    return (
        a.tenant,
        m["meter_id"],
        a.account_id,
        m["kind"],
        m["units"],
        str(m["digits"]),
        m["installed_on"].isoformat(),
        str(m["initial"]),
        m["size"] or "",
        _d(removed_on),
        "" if removed_on is None else str(plan.reading(a, m, removed_on)),
    )


def _meter_files(plan: Plan) -> list[DemoFile]:
    """Meters on each tenant's first day (flow monitors too); installs and removals later."""
    later: dict[date, list[tuple[str, int]]] = {}
    for t in (PP, GR, SU):
        for i in plan.account_ids(t):
            a = plan.account(t, i)
            if not a.metered:
                continue
            for m in plan.meters(a):
                if m["installed_on"] > plan.begin[t]:
                    later.setdefault(m["installed_on"], []).append((t, i))
                if m["removed_on"] is not None:
                    later.setdefault(m["removed_on"], []).append((t, i))

    def initial(day: date) -> Iterator[tuple[str, ...]]:
        for t in (PP, GR, SU):
            if max(plan.start, plan.begin[t]) != day:
                continue
            for i in plan.account_ids(t):
                a = plan.account(t, i)
                for m in plan.meters(a):
                    if m["installed_on"] <= plan.begin[t]:
                        yield _meter_row(a, m, plan, removed=False)
                if a.satellite:
                    yield (t, plan.flow_monitor(a), a.account_id, "flow-monitor", "cf", "9",
                           a.opened_on.isoformat(), "0", "", "", "")  # fmt: skip

    def changed(day: date, keys: list[tuple[str, int]]) -> Iterator[tuple[str, ...]]:
        seen = set()
        for t, i in keys:
            if (t, i) in seen:
                continue
            seen.add((t, i))
            a = plan.account(t, i)
            for m in plan.meters(a):
                if m["installed_on"] == day or m["removed_on"] == day:
                    yield _meter_row(a, m, plan, removed=m["removed_on"] == day)

    days = sorted({max(plan.start, plan.begin[t]) for t in (PP, GR, SU)})
    out = [
        DemoFile(d, f"meters/demo-{d.isoformat()}.csv", "meters", METER_COLUMNS, partial(initial, d))
        for d in days
    ]
    for day, keys in sorted(later.items()):
        out.append(
            DemoFile(
                day,
                f"meters/demo-changes-{day.isoformat()}.csv",
                "meters",
                METER_COLUMNS,
                partial(changed, day, keys),
            )  # fmt: skip
        )
    return out


def _read_meters(plan: Plan, a: Acct, k: int) -> list[dict[str, Any]]:
    """The meters of ``a`` read at the end of its tenant's period ``k`` (none for PP-0003's
    missed read; a meter removed by then had its final reading in the meters file)."""
    start, end = plan.periods[a.tenant][k]
    if not a.metered or not a.active_in(start, end):
        return []
    if a.story == "missed_read" and k == plan.missed_period:
        return []
    return [
        m
        for m in plan.meters(a)
        if m["installed_on"] < end and (m["removed_on"] is None or m["removed_on"] > end)
    ]


def _read_rows(plan: Plan, tenant: str, k: int) -> Iterator[tuple[str, ...]]:
    end = plan.periods[tenant][k][1]
    for i in plan.account_ids(tenant):
        a = plan.account(tenant, i)
        for m in _read_meters(plan, a, k):
            yield (tenant, m["meter_id"], end.isoformat(), str(plan.reading(a, m, end)), "actual")


def _read_files(plan: Plan) -> list[DemoFile]:
    out = []
    for t in (PP, GR, SU):
        for k, (_, end) in enumerate(plan.periods[t]):
            out.append(
                DemoFile(
                    end,
                    f"reads/demo-{t}-{end.isoformat()}.csv",
                    "reads",
                    READ_COLUMNS,
                    partial(_read_rows, plan, t, k),
                )  # fmt: skip
            )
    return out


def _months(plan: Plan) -> list[tuple[date, date]]:
    return list(plan.periods[PP])


def _slug_at(plan: Plan) -> tuple[str, datetime]:
    a = plan.account(PP, 6)
    start, _ = _months(plan)[0]
    at = datetime(start.year, start.month, 10, 14, 0, tzinfo=LOCAL).astimezone(UTC)
    return plan.flow_monitor(a), at


def _interval_rows(plan: Plan, start: date, end: date) -> Iterator[tuple[str, ...]]:
    """Each satellite flow monitor's 5-minute volumes (cf) over the local days [start, end),
    stamped in UTC; a day's shape follows DIURNAL by local hour. Volumes are formatted once
    per monitor and hour (a month is about 8,900 rows a monitor)."""
    slug_meter, slug_at = _slug_at(plan)
    first = datetime(start.year, start.month, start.day, tzinfo=LOCAL).astimezone(UTC)
    last = datetime(end.year, end.month, end.day, tzinfo=LOCAL).astimezone(UTC)
    step = timedelta(minutes=5)
    for i in plan.satellite_ids:
        a = plan.account(PP, i)
        meter = plan.flow_monitor(a)
        per_interval = Decimal(a.daily_gal) / CF_GAL / 288
        by_hour = [str((per_interval * f).quantize(Decimal("0.001"))) for f in DIURNAL]
        slug = str((per_interval * 8).quantize(Decimal("0.001")))
        t = first
        while t < last:  # a UTC day at a time: its prefix and its local hours computed once
            midnight = datetime(t.year, t.month, t.day, tzinfo=UTC)
            prefix = f"{t:%Y-%m-%d}T"
            local_hour = [(midnight + timedelta(hours=h)).astimezone(LOCAL).hour for h in range(24)]
            stop = min(last, midnight + timedelta(days=1))
            first_slot = (t - midnight) // step
            for slot in range(first_slot, first_slot + (stop - t) // step):
                volume = by_hour[local_hour[slot // 12]]
                if meter == slug_meter and slug_at <= midnight + slot * step < slug_at + 5 * step:
                    volume = slug
                yield (PP, meter, prefix + _SLOTS[slot], volume)
            t = stop


_SLOTS = tuple(f"{m // 60:02d}:{m % 60:02d}:00+00:00" for m in range(0, 1440, 5))


def _interval_files(plan: Plan) -> list[DemoFile]:
    return [
        DemoFile(
            end,
            f"reads/interval/demo-{start:%Y-%m}.csv",
            "interval",
            INTERVAL_COLUMNS,
            partial(_interval_rows, plan, start, end),
        )  # fmt: skip
        for start, end in _months(plan)
    ]


def _parcel(plan: Plan, i: int) -> tuple[str, ...]:
    a = plan.account(PPW, i)
    r = plan.rng(PPW, i, salt=1)
    owner = a.owner_name or a.name
    woods = excluded = Decimal(0)
    farmstead = ""
    if i == 1:
        return (PPW, a.parcel_id or "", "Olive Owner", "residential", "15100", "1999.71", "", "", "")
    if a.kind in ("residential", "farmstead"):
        area = Decimal(r.randrange(7000, 30000))
        impervious = Decimal(r.randrange(1200, 3600))
        if area > 20000 and r.random() < 0.5:
            woods = Decimal(r.randrange(2000, 6000))
        if a.kind == "farmstead":
            area, farmstead = Decimal(r.randrange(40000, 90000)), "true"
        use = "residential"
    elif a.kind == "vacant":
        area, impervious, use = Decimal(r.randrange(10000, 60000)), Decimal(0), "nonresidential"
        if r.random() < 0.5:
            woods = (area * Decimal("0.4")).to_integral_value()
    else:
        area = Decimal(r.randrange(20000, 250000))
        impervious = (area * Decimal(r.randrange(40, 85)) / 100).to_integral_value()
        use = "nonresidential"
        if r.random() < 0.3 or i == _credit_parcel(plan):
            excluded = (area * Decimal("0.08")).to_integral_value()  # a wet detention pond
    return (PPW, a.parcel_id or "", owner, use, str(area), str(impervious),
            "" if not woods else str(woods), "" if not excluded else str(excluded), farmstead)  # fmt: skip


def _credit_parcel(plan: Plan) -> int:
    """The first nonresidential parcel paired with a commercial sewer account (PP-0010's)."""
    return 10


def _farms(plan: Plan) -> list[dict[str, Any]]:
    """The farms' agricultural land (exempt) beside their farmsteads, and a right-of-way."""
    out = []
    for i in plan.account_ids(PPW):
        a = plan.account(PPW, i)
        if a.kind == "farmstead":
            r = plan.rng(PPW, i, salt=2)
            out.append({"parcel_id": f"PP-P-{i:04d}-AG", "owner_name": a.name, "use": "agricultural",
                        "area_sqft": str(r.randrange(800_000, 3_000_000)), "impervious_sqft": str(r.randrange(0, 5000)),
                        "farmstead": False})  # fmt: skip
    out.append({"parcel_id": "PP-P-ROW-1", "owner_name": "Village of Pleasant Prairie", "use": "right_of_way",
                "area_sqft": "420000", "impervious_sqft": "260000", "farmstead": False})  # fmt: skip
    return out


def _gis_files(plan: Plan) -> list[DemoFile]:
    day = max(plan.start, plan.begin[PPW])

    def rows() -> Iterator[tuple[str, ...]]:
        for i in plan.account_ids(PPW):
            yield _parcel(plan, i)

    def features() -> Iterator[tuple[str, ...]]:
        for f in _farms(plan):
            yield (
                PPW,
                f["parcel_id"],
                f["owner_name"],
                f["use"],
                f["area_sqft"],
                f["impervious_sqft"],
                "",
                "",
                "",
            )

    return [
        DemoFile(day, f"gis/demo-parcels-{day.isoformat()}.csv", "gis", GIS_COLUMNS, rows),
        DemoFile(day, f"gis/demo-farms-{day.isoformat()}.geojson", "gis", GIS_COLUMNS, features, "geojson"),
    ]


def _geojson_chunks(f: DemoFile) -> Iterator[bytes]:
    yield b'{"type": "FeatureCollection", "features": ['
    for n, row in enumerate(f.rows()):
        props: dict[str, Any] = {c: v for c, v in zip(f.columns, row, strict=True) if v}
        for key in ("area_sqft", "impervious_sqft", "woods_sqft", "excluded_sqft"):
            if key in props:
                props[key] = int(props[key])
        side = int(Decimal(props["area_sqft"]).sqrt()) / 364000  # feet to degrees, roughly
        x, y = -87.93 + n * 0.02, 42.53
        ring = [[x, y], [x + side, y], [x + side, y + side], [x, y + side], [x, y]]
        feature = {
            "type": "Feature",
            "properties": props,
            "geometry": {"type": "Polygon", "coordinates": [ring]},
        }
        yield ((", " if n else "") + json.dumps(feature)).encode()
    yield b"]}\n"


# --- lab results -----------------------------------------------------------------------------

COMPLIANT = {
    PP: {"bod": "150", "tss": "170", "phosphorus": "4.2", "fog": "60"},
    GR: {"bod": "180", "tss": "220", "phosphorus": "5", "tkn": "18"},
    SU: {"bod": "350", "tss": "220", "phosphorus": "9"},
}
EXCEEDING = {
    PP: {"bod": "260", "tss": "240", "phosphorus": "7.5", "fog": "80"},
    GR: {"bod": "340", "tss": "310", "phosphorus": "8", "tkn": "28"},
    SU: {"bod": "950", "tss": "240", "phosphorus": "10"},
}


def _samples(plan: Plan) -> list[dict[str, Any]]:
    """Every sample of the demo (before ``start``: the history file), as dicts."""
    out: list[dict[str, Any]] = []
    window_end = plan.end

    def add(tenant: str, account: str, collected: date, values: Mapping[str, str], why: str) -> None:
        out.append({"tenant": tenant, "account_id": account, "collected_on": collected,
                    "analysed_on": collected + timedelta(days=2), "file_on": collected + timedelta(days=3),
                    "values": dict(values), "why": why})  # fmt: skip

    first_month = date(plan.start.year, plan.start.month, 1)
    months = [add_months(first_month, m) for m in range(plan.months)]
    # PP-0004: exceeding 23 months before start, compliant every month since (history first).
    for m in range(-23, 0):
        add(
            PP,
            "PP-0004",
            add_months(first_month, m) + timedelta(days=14),
            EXCEEDING[PP] if m == -23 else COMPLIANT[PP],
            "history",
        )
    for month in months:
        day = month + timedelta(days=14)
        add(PP, "PP-0004", day, COMPLIANT[PP], "compliant")
        add(
            PP,
            "PP-0005",
            day,
            EXCEEDING[PP] if month == months[0] else COMPLIANT[PP],
            "enters_b" if month == months[0] else "compliant",
        )
        for i in plan.satellite_ids:
            add(PP, f"PP-{i:04d}", day, COMPLIANT[PP], "satellite")
    for t, account, values in ((GR, "GR-0004", EXCEEDING[GR]), (SU, "SU-0004", COMPLIANT[SU])):
        for q, (s, _) in enumerate(plan.periods[t]):
            day = add_months(s, 1) + timedelta(days=14)
            add(t, account, day, values, "high_strength" if t == GR else "normal")
            if t == SU and q == min(1, len(plan.periods[t]) - 1):
                add(t, account, day + timedelta(days=1), EXCEEDING[SU], "bod900")
    return [s for s in out if s["file_on"] < window_end]


def _lab_rows(plan: Plan, day: date) -> Iterator[tuple[str, ...]]:
    for s in _samples(plan):
        on = s["file_on"] if s["file_on"] > plan.start else plan.start
        if on != day:
            continue
        sample_id = f"{s['account_id']}-{s['collected_on']:%Y%m%d}"
        for param, value in s["values"].items():
            yield (s["tenant"], sample_id, s["account_id"], s["collected_on"].isoformat(), param, value, "mg/l",
                   s["analysed_on"].isoformat(), "Great Lakes Analytical", "routine")  # fmt: skip


def _lab_files(plan: Plan) -> list[DemoFile]:
    days = sorted({max(s["file_on"], plan.start) for s in _samples(plan)})
    return [
        DemoFile(d, f"lab/demo-{d.isoformat()}.csv", "lab", LAB_COLUMNS, partial(_lab_rows, plan, d))
        for d in days
    ]


# --- staff calls -----------------------------------------------------------------------------


def _api_calls(plan: Plan) -> list[ApiCall]:
    calls: list[ApiCall] = []

    def point(tenant: str, account: str, body: dict[str, Any], why: str) -> None:
        day = max(plan.start, plan.begin[tenant])  # sampling needs the tenant's tariff in force
        calls.append(ApiCall(day, "PUT", f"/staff/{tenant}/sampling-points/{account}", tenant, body, why))

    point(PP, "PP-0004", {"sampling_point": "MH-04"}, "PP-SEW-CAT-B-EXIT: sampled monthly")
    point(PP, "PP-0005", {"sampling_point": "MH-05"}, "PP-SEW-CAT-B: sampled monthly")
    for i in plan.satellite_ids:
        point(PP, f"PP-{i:04d}", {"sampling_point": f"SAT-{i:02d}", "satellite": True}, "PP-SEW-SAT-SAMPLE")
    point(GR, "GR-0004", {"sampling_point": "GR-MH-4"}, "GR-HIGH: sampled quarterly")
    point(SU, "SU-0004", {"sampling_point": "SU-MH-4", "sic_division": "D", "avg_daily_flow_gal": "6000"},
          "SU-INDUSTRIAL, SU-BOD900")  # fmt: skip
    gr_day = max(plan.start, plan.begin[GR])
    permits = (
        {"permit_id": "GR-SEP-1", "name": "Ozaukee Septic Service LLC", "address": "5 Hauler Rd Grafton WI 53024",
         "units": [{"make": "Freightliner", "model": "M2 106", "licence_number": "WI-ST-1001"},
                   {"make": "International", "model": "HV607", "licence_number": "WI-ST-1002"}],
         "insurance_amount": "250000.00", "account_id": "GR-0005"},
        {"permit_id": "GR-SEP-2", "name": "Kettle Moraine Pumping Inc", "address": "88 County Rd H West Bend WI 53095",
         "units": [{"make": "Peterbilt", "model": "348", "licence_number": "WI-ST-2001"}],
         "insurance_amount": "150000.00"},
    )  # fmt: skip
    for p in permits:
        calls.append(ApiCall(gr_day, "POST", f"/staff/{GR}/septage/permits", GR, p, "GR-SEPTAGE-PERMIT"))
    r = plan.rng(GR, 0, salt=3)
    n = 0
    for month_start, month_end in _months(plan):
        for permit, unit, times in (
            ("GR-SEP-1", "WI-ST-1001", 2),
            ("GR-SEP-1", "WI-ST-1002", 1),
            ("GR-SEP-2", "WI-ST-2001", 1),
        ):
            for _ in range(times):
                on = month_start + timedelta(days=r.randrange(0, (month_end - month_start).days))
                if on < gr_day or on < plan.start or on >= plan.end:
                    continue
                n += 1
                body = {"permit_id": permit, "licence_number": unit, "gallons": str(r.randrange(15, 45) * 100),
                        "disposed_on": on.isoformat(), "reference": f"GR-DISP-{n:05d}"}  # fmt: skip
                calls.append(
                    ApiCall(on, "POST", f"/staff/{GR}/septage/disposals", GR, body, "GR-SEPTAGE-CHARGE")
                )
    return calls


# --- payments --------------------------------------------------------------------------------


def _intents(plan: Plan) -> Iterator[PaymentIntent]:
    """One intent per expected bill: most on time, some late, some partial, some missing."""
    for t in TENANTS:
        for i in plan.account_ids(t):
            a = plan.account(t, i)
            habit = plan.rng(t, i, salt=4).random()  # a customer's habit: mostly on time
            for k, (s, e) in enumerate(plan.periods[t]):
                if not a.active_in(s, e):
                    continue
                x = ((i * 40503 + k * 7919 + plan.seed * 31) % 1000) / 1000
                if a.story == "rollover" or i == 2:
                    kind = "on_time"
                elif habit > 0.85:  # a late payer
                    kind = "late" if x < 0.6 else "missing" if x < 0.8 else "on_time"
                elif habit > 0.75:
                    kind = "partial" if x < 0.5 else "on_time"
                else:
                    kind = "missing" if x < 0.02 else "late" if x < 0.06 else "on_time"
                channel = (
                    "none"
                    if kind == "missing"
                    else "portal"
                    if (a.email and kind == "on_time")
                    else "lockbox"
                )
                offset = -3 - (i + k) % 10 if kind in ("on_time", "partial") else 5 + (i + k) % 20
                fraction = (
                    Decimal("1")
                    if kind in ("on_time", "late")
                    else Decimal("0.5")
                    if kind == "partial"
                    else Decimal(0)
                )
                yield PaymentIntent(t, a.account_id, s, e, kind, channel, "due_date", offset, fraction,
                                    f"DEMO-{PREFIX[t]}-{i:06d}-{s:%Y%m}")  # fmt: skip


# --- expectations ----------------------------------------------------------------------------


def _expected(plan: Plan, files: list[DemoFile], calls: list[ApiCall]) -> dict[str, Any]:
    """The figures a year's run must arrive at, from the generator's own choices."""
    accounts: dict[str, dict[str, int]] = {}
    bills: dict[str, dict[str, int]] = {}
    reads: dict[str, dict[str, int]] = {t: {} for t in (PP, GR, SU)}
    unmetered = {t: 0 for t in TENANTS}
    rented = {t: 0 for t in TENANTS}
    opened = {t: 0 for t in TENANTS}
    closed = {t: 0 for t in TENANTS}
    meters = {t: 0 for t in (PP, GR, SU)}
    rollovers: list[dict[str, str]] = []
    parcels: dict[str, int] = {}
    for t in TENANTS:
        by_kind: dict[str, int] = {}
        per_period = {s.isoformat(): 0 for s, _ in plan.periods[t]}
        for i in plan.account_ids(t):
            a = plan.account(t, i)
            by_kind[a.kind] = by_kind.get(a.kind, 0) + 1
            by_kind[f"class:{a.klass}"] = by_kind.get(f"class:{a.klass}", 0) + 1
            unmetered[t] += t != PPW and not a.metered
            rented[t] += a.rented
            opened[t] += a.opened_on > plan.begin[t]
            closed[t] += a.closed_on is not None
            for s, e in plan.periods[t]:
                per_period[s.isoformat()] += a.active_in(s, e)
            if t == PPW:
                row = _parcel(plan, i)
                key = "farmstead" if row[8] == "true" else row[3]
                parcels[key] = parcels.get(key, 0) + 1
                parcels["with_woods"] = parcels.get("with_woods", 0) + bool(row[6])
                parcels["with_pond"] = parcels.get("with_pond", 0) + bool(row[7])
                parcels["rented"] = parcels.get("rented", 0) + (row[2] != a.name)
                continue
            meters[t] += len(plan.meters(a))
            previous: dict[str, int] = {}
            used: dict[str, tuple[date, int]] = {}  # gallons to a day, summed a period at a time
            for k, (s, e) in enumerate(plan.periods[t]):
                for m in _read_meters(plan, a, k):
                    reads[t][e.isoformat()] = reads[t].get(e.isoformat(), 0) + 1
                    since, gallons = used.get(m["meter_id"], (m["installed_on"], 0))
                    gallons += plan.gallons(a, since, e)
                    used[m["meter_id"]] = (e, gallons)
                    now = (int(m["initial"]) + plan.units_of(m["units"], gallons)) % 10 ** int(m["digits"])
                    before = previous.get(m["meter_id"], int(m["initial"]))
                    if now < before:
                        rollovers.append({"tenant": t, "account_id": a.account_id, "meter_id": m["meter_id"],
                                          "period_start": s.isoformat()})  # fmt: skip
                    previous[m["meter_id"]] = now
            if a.satellite:
                meters[t] += 1
        accounts[t] = dict(sorted(by_kind.items()))
        bills[t] = per_period
    farms = _farms(plan)
    for f in farms:
        parcels[f["use"]] = parcels.get(f["use"], 0) + 1
    parcels["total"] = plan.count[PPW] + len(farms)
    parcels["exempt"] = len(farms)
    samples = _samples(plan)
    exchange = plan.periods[PP][plan.exchange_period][0] + timedelta(days=9)
    missed = plan.periods[PP][plan.missed_period]
    compliant_since = add_months(date(plan.start.year, plan.start.month, 1), -22) + timedelta(days=14)
    su_period = plan.periods[SU][min(1, len(plan.periods[SU]) - 1)]
    slug_meter, slug_at = _slug_at(plan)
    intents: dict[str, dict[str, int]] = {t: {} for t in TENANTS}
    for p in _intents(plan):
        bucket = intents[p.tenant]
        bucket[p.kind] = bucket.get(p.kind, 0) + 1
        bucket[f"channel:{p.channel}"] = bucket.get(f"channel:{p.channel}", 0) + 1
    disposals = [c for c in calls if c.path.endswith("/septage/disposals")]
    return {
        "generator": {
            "size": plan.size,
            "seed": plan.seed,
            "start": plan.start.isoformat(),
            "months": plan.months,
            "end": plan.end.isoformat(),
        },  # fmt: skip
        "tenants": {
            t: {
                "first_period_start": plan.begin[t].isoformat(),
                "period_months": plan.period_months[t],
                "periods": [[s.isoformat(), e.isoformat()] for s, e in plan.periods[t]],
            }
            for t in TENANTS
        },
        "accounts": {t: plan.count[t] for t in TENANTS} | {"total": plan.size},
        "accounts_by_kind": accounts,
        "unmetered": unmetered,
        "rented": rented,
        "opened_during_year": opened,
        "closed_during_year": closed,
        "satellites": plan.satellites,
        "meters": meters,
        "bills_per_period": bills,
        "bills_total": {t: sum(v.values()) for t, v in bills.items()},
        "reads_per_period": reads,
        "rollovers": rollovers,
        "exchange": {
            "tenant": PP,
            "account_id": "PP-0002",
            "on": exchange.isoformat(),
            "removed": "PP-0002-M1",
            "installed": "PP-0002-M2",
        },  # fmt: skip
        "estimated": [
            {
                "tenant": PP,
                "account_id": "PP-0003",
                "period_start": missed[0].isoformat(),
                "period_end": missed[1].isoformat(),
                "estimate_on": (missed[1] + timedelta(days=READ_WINDOW_DAYS)).isoformat(),
                "replaced_by_read_on": plan.periods[PP][plan.missed_period + 1][1].isoformat(),
            }
        ],  # fmt: skip
        "interval": {
            "monitors": plan.satellites,
            "files": sum(1 for f in files if f.kind == "interval"),
            "slugs": [{"meter_id": slug_meter, "interval_start": slug_at.isoformat()}],
            "satellite_flow_months": plan.satellites * len(_months(plan)),
        },
        "parcels": dict(sorted(parcels.items())),
        "lab": {
            "samples": len(samples),
            "rows": sum(len(s["values"]) for s in samples),
            "samples_by_account": _count(s["account_id"] for s in samples),
            "pp_samples_charged_by_period": _pp_sample_periods(plan, samples),
            "category": [
                {
                    "tenant": PP,
                    "account_id": "PP-0004",
                    "category": "A",
                    "from": add_months(compliant_since, 24).isoformat(),
                    "rule": "PP-SEW-CAT-B-EXIT",
                    "entered_b_on": add_months(compliant_since, -1).isoformat(),
                    "compliant_since": compliant_since.isoformat(),
                },
                {
                    "tenant": PP,
                    "account_id": "PP-0005",
                    "category": "B",
                    "from": (date(plan.start.year, plan.start.month, 15)).isoformat(),
                    "rule": "PP-SEW-CAT-B",
                },
                {"tenant": GR, "account_id": "GR-0004", "category": "high", "rule": "GR-HIGH"},
            ],  # fmt: skip
            "bod900_violation_days": [
                {
                    "tenant": SU,
                    "account_id": "SU-0004",
                    "period_start": su_period[0].isoformat(),
                    "days": 1,
                    "rule": "SU-BOD900",
                }
            ],  # fmt: skip
        },
        "septage": {
            "permits": sum(1 for c in calls if c.path.endswith("/septage/permits")),
            "disposals": len(disposals),
            "gallons": str(sum(Decimal(c.body["gallons"]) for c in disposals)),
            "charged_to_account": {"GR-0005": sum(1 for c in disposals if c.body["permit_id"] == "GR-SEP-1")},
        },
        "sampling_points": sum(1 for c in calls if "/sampling-points/" in c.path),
        "payment_intents": intents,
        "files": {kind: sum(1 for f in files if f.kind == kind) for kind in sorted({f.kind for f in files})},
        "identities": {
            "ada": {
                "accounts": {PP: "PP-0001", PPW: "PPW-0001"},
                "parcels": ["PP-P-0001"],
                "renter_of": "Olive Owner",
            },
            "ben": {"accounts": {PP: "PP-0002"}},
            "olive": {"parcels": ["PP-P-0001"], "role": "owner"},
            "credit_candidate": {
                "parcel_id": f"PP-P-{_credit_parcel(plan):04d}",
                "account_id": f"PPW-{_credit_parcel(plan):04d}",
            },
        },  # fmt: skip
    }


def _count(values: Iterator[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def _pp_sample_periods(plan: Plan, samples: list[dict[str, Any]]) -> dict[str, int]:
    """PP-SEW-SAMPLE-COST: samples collected in each PP period (one charge each)."""
    out = {s.isoformat(): 0 for s, _ in plan.periods[PP]}
    for s in samples:
        if s["tenant"] != PP:
            continue
        for start, end in plan.periods[PP]:
            if start <= s["collected_on"] < end:
                out[start.isoformat()] += 1
    return out
