"""Interval data (AMI meters, satellite flow monitors): 5-minute volumes (CONTRACTS.md
``reads/interval/``), aggregated to one item per meter per local day (X-READS: the tenant's
local day, America/Chicago), with slug detection (X-SLUG).

The file is streamed: memory holds the open daily sums (meters x days in the file, never
rows) and, for slug detection, the trailing 24 hours of the meter being read. Interval
exports list each meter's intervals in time order (AMI head-ends export by meter); a meter
that reappears later in a file starts a new trailing window, so its first 24 hours there
are the baseline and raise no slug (interpretation: "normal operation" needs 24 hours).

A file carries whole days: a day's item is replaced by a later file with the same meter and
day (a re-sent day corrects it). The raw file stays in the (versioned) uploads bucket.

X-SLUG: a slug is more than 3 consecutive intervals (over 15 minutes) each above five times
the trailing 24-hour mean interval volume; ``SlugDetected`` names the meter, the first and
last interval and the volume over them. Volumes are gallons (meter units converted once).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from zoneinfo import ZoneInfo

from metering.domain import csvinput as cin
from metering.domain.model import GALLONS_PER
from metering.events import ID_MAX, LineRejection

# X-READS: interval data belongs to the tenant's local day; all four tenants are in Wisconsin.
UTILITY_TZ = ZoneInfo("America/Chicago")
INTERVAL = timedelta(minutes=5)
WINDOW = 288  # 24 hours of 5-minute intervals
SLUG_FACTOR = 5
SLUG_MIN_INTERVALS = 4  # "more than 3 consecutive intervals" (over 15 minutes)
INTERVAL_HEADER = cin.Header(
    columns=("tenant", "meter_id", "interval_start", "volume"),
    required=frozenset({"tenant", "meter_id", "interval_start", "volume"}),
)


@dataclass(frozen=True)
class IntervalMeter:
    """What aggregation needs of a registered meter."""

    tenant: str
    meter_id: str
    account_id: str
    units: str
    kind: str


@dataclass
class DaySum:
    volume_gal: Decimal = Decimal(0)
    intervals: int = 0
    peak_gal: Decimal = Decimal(0)


@dataclass(frozen=True)
class Slug:
    tenant: str
    meter_id: str
    account_id: str
    first: datetime
    last: datetime
    intervals: int
    volume_gal: Decimal
    threshold_gal: Decimal


@dataclass
class _Window:
    meter: tuple[str, str] | None = None
    account: str = ""
    values: deque[Decimal] = field(default_factory=lambda: deque(maxlen=WINDOW))
    total: Decimal = Decimal(0)
    last_start: datetime | None = None
    run: list[tuple[datetime, Decimal]] = field(default_factory=list)
    threshold: Decimal = Decimal(0)


@dataclass
class Aggregation:
    """The result of one file: daily sums by (tenant, meter, local day), slugs, counts."""

    days: dict[tuple[str, str, date], DaySum] = field(default_factory=dict)
    slugs: list[Slug] = field(default_factory=list)
    rows: int = 0
    accepted: int = 0


MeterLookup = Callable[[Iterable[tuple[str, str]]], dict[tuple[str, str], IntervalMeter]]


def aggregate(
    rows: Iterable[cin.Row | LineRejection],
    *,
    meters: MeterLookup,
    tenants: Iterable[str],
    now: datetime,
    reject: Callable[[LineRejection], None],
    batch: int = 5_000,
) -> Aggregation:
    """Validate and aggregate interval rows (the hot path: a few microseconds a row)."""
    known_tenants = frozenset(tenants)
    out = Aggregation()
    window = _Window()
    cache: dict[tuple[str, str], IntervalMeter | None] = {}
    pending: list[cin.Row] = []
    latest = now + INTERVAL

    def run_batch() -> None:
        wanted = {(r.cells["tenant"], r.cells["meter_id"]) for r in pending}
        missing = [k for k in wanted if k not in cache]
        if missing:
            found = meters(k for k in missing if k[0] in known_tenants and _plain_id(k[1]))
            for k in missing:
                cache[k] = found.get(k)
        for row in pending:
            _one(row, cache, out, window, latest, reject, known_tenants)
        pending.clear()

    for row in rows:
        out.rows += 1
        if isinstance(row, LineRejection):
            reject(row)
            continue
        pending.append(row)
        if len(pending) >= batch:
            run_batch()
    run_batch()
    _close_run(window, out)
    return out


def _plain_id(value: str) -> bool:
    return 0 < len(value) <= ID_MAX and not value.startswith(cin.FORMULA_STARTS)


def _one(
    row: cin.Row,
    cache: dict[tuple[str, str], IntervalMeter | None],
    out: Aggregation,
    window: _Window,
    latest: datetime,
    reject: Callable[[LineRejection], None],
    tenants: frozenset[str],
) -> None:
    cells = row.cells
    tenant, meter_id = cells["tenant"], cells["meter_id"]
    meter = cache.get((tenant, meter_id))
    if meter is None:
        try:
            cin.tenant(cells, tuple(tenants))
            cin.text_id(cells, "meter_id")
            reason, column = f"unknown meter {meter_id} of {tenant}", "meter_id"
        except cin.BadField as exc:
            reason, column = exc.reason, exc.column
        reject(LineRejection(line=row.line, column=column, reason=reason[:300]))
        return
    text = cells["interval_start"]
    try:
        if len(text) > 40 or "T" not in text:
            raise ValueError
        start = datetime.fromisoformat(text)
    except ValueError:
        reject(
            LineRejection(
                line=row.line, column="interval_start", reason=f"not an ISO 8601 time: {text[:40]!r}"
            )
        )
        return
    if start.tzinfo is None:
        reject(LineRejection(line=row.line, column="interval_start", reason="needs an offset (e.g. -05:00)"))
        return
    if start.minute % 5 or start.second or start.microsecond:
        reject(LineRejection(line=row.line, column="interval_start", reason="not on a 5-minute boundary"))
        return
    if start >= latest or start.year < cin.EARLIEST_DATE.year:
        reject(
            LineRejection(
                line=row.line, column="interval_start", reason=f"{text} is in the future or before 1990"
            )
        )
        return
    raw = cells["volume"]
    if len(raw) > cin.NUMBER_MAX_DIGITS or not raw.isascii() or not raw[:1].isdigit():
        reject(
            LineRejection(line=row.line, column="volume", reason=f"not a non-negative decimal: {raw[:30]!r}")
        )
        return
    try:
        volume = Decimal(raw)
    except InvalidOperation:
        volume = Decimal(-1)
    if not volume.is_finite() or volume < 0 or not raw.replace(".", "", 1).isdigit():
        reject(
            LineRejection(line=row.line, column="volume", reason=f"not a non-negative decimal: {raw[:30]!r}")
        )
        return
    gallons = volume if meter.units == "gal" else volume * GALLONS_PER[meter.units]
    day = start.astimezone(UTILITY_TZ).date()
    key = (tenant, meter_id, day)
    sums = out.days.get(key)
    if sums is None:
        sums = out.days[key] = DaySum()
    sums.volume_gal += gallons
    sums.intervals += 1
    if gallons > sums.peak_gal:
        sums.peak_gal = gallons
    out.accepted += 1
    _slug_step(window, meter, start, gallons, out)


def _slug_step(
    window: _Window, meter: IntervalMeter, start: datetime, gallons: Decimal, out: Aggregation
) -> None:
    ident = (meter.tenant, meter.meter_id)
    if window.meter != ident or (window.last_start is not None and start <= window.last_start):
        _close_run(window, out)
        window.meter, window.account, window.total, window.last_start = (
            ident,
            meter.account_id,
            Decimal(0),
            None,
        )
        window.values.clear()
        window.run = []
    window.last_start = start
    values = window.values
    if len(values) == WINDOW:
        mean = window.total / WINDOW
        if gallons > mean * SLUG_FACTOR:
            if not window.run:
                window.threshold = mean * SLUG_FACTOR
            window.run.append((start, gallons))
        elif window.run:
            _close_run(window, out)
    if len(values) == WINDOW:
        window.total -= values[0]
    values.append(gallons)
    window.total += gallons


def _close_run(window: _Window, out: Aggregation) -> None:
    run = window.run
    if len(run) >= SLUG_MIN_INTERVALS and window.meter is not None:
        out.slugs.append(
            Slug(
                tenant=window.meter[0],
                meter_id=window.meter[1],
                account_id=window.account,
                first=run[0][0],
                last=run[-1][0] + INTERVAL,
                intervals=len(run),
                volume_gal=sum((v for _, v in run), Decimal(0)),
                threshold_gal=window.threshold,
            )
        )
    window.run = []


def month_of(day: date) -> str:
    return f"{day.year:04d}-{day.month:02d}"


def previous_month(today: date) -> tuple[date, date]:
    end = date(today.year, today.month, 1)
    start = date(end.year - (end.month == 1), (end.month - 2) % 12 + 1, 1)
    return start, end


def days_between(start: date, end: date) -> Iterator[date]:
    day = start
    while day < end:
        yield day
        day += timedelta(days=1)
