"""Interval data (AMI meters, satellite flow monitors): 5-minute volumes (CONTRACTS.md
``reads/interval/``), aggregated to one item per meter per local day (X-READS: the tenant's
local day, America/Chicago), with slug detection (X-SLUG).

The file is streamed: memory holds the open daily sums (meters x days in the file, never
rows), for slug detection the trailing 24 hours of the meter being read, and a bounded memo
of the distinct time and volume cells already decided (``_Batcher``). Interval
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

import csv
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from operator import itemgetter
from typing import Any
from zoneinfo import ZoneInfo

from metering.domain import csvinput as cin
from metering.domain.model import GALLONS_PER
from metering.events import ID_MAX, LineRejection

# X-READS: interval data belongs to the tenant's local day; all four tenants are in Wisconsin.
UTILITY_TZ = ZoneInfo("America/Chicago")
INTERVAL = timedelta(minutes=5)
WINDOW = 288  # 24 hours of 5-minute intervals
SLUG_FACTOR = 5
EARLIEST_YEAR = cin.EARLIEST_DATE.year
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


# A row read: line, tenant and meter cells as written, its time's and volume's verdicts.
_Row = tuple[int, str, str, tuple[datetime, datetime, date] | str, Decimal | str]
MEMO_MAX = 20_000  # cells memoised per column: 69 days of 5-minute times; a few MiB at most


@dataclass
class Aggregation:
    """The result of one file: daily sums by (tenant, meter, local day), slugs, counts."""

    days: dict[tuple[str, str, date], DaySum] = field(default_factory=dict)
    slugs: list[Slug] = field(default_factory=list)
    rows: int = 0
    accepted: int = 0


MeterLookup = Callable[[Iterable[tuple[str, str]]], dict[tuple[str, str], IntervalMeter]]


def aggregate(
    chunks: Iterable[bytes],
    *,
    meters: MeterLookup,
    tenants: Iterable[str],
    now: datetime,
    reject: Callable[[LineRejection], None],
    batch: int = 5_000,
    memo: int = MEMO_MAX,
) -> Aggregation:
    """Validate and aggregate an interval file (the hot path: a few microseconds a row).

    Rows are read into batches of ``batch`` so the meters they name are looked up together
    (one batched read per batch, cached for the file). Raises ``csvinput.FileRejected`` for
    an empty file or a bad header. ``memo`` bounds each per-cell memo (tests make it small).
    """
    index, reader = cin.opened(chunks, INTERVAL_HEADER)
    cols = (index["tenant"], index["meter_id"], index["interval_start"], index["volume"])
    out = Aggregation()
    state = _Batcher(cols, tuple(tenants), meters, reject, now, memo)
    for good, bad in state.read(reader, len(index), batch):
        out.rows += len(bad)
        for rejection in bad:
            reject(rejection)
        state.run(good, out)
    state.finish(out)
    return out


def _plain_id(value: str) -> bool:
    return 0 < len(value) <= ID_MAX and not value.startswith(cin.FORMULA_STARTS)


class _Batcher:
    """The per-row work, with its state in locals while a batch runs (module doc).

    An interval file repeats few distinct cells: a day of 5-minute data has 288 times,
    whatever the number of meters, and volumes repeat too. So a cell's verdict (its parsed
    time, local day and zone conversion, or its decimal; else the reason it is refused) is
    worked out once and memoised by the cell as written: a row costs dict lookups, not a
    parse. Each memo is emptied when it holds ``memo`` cells, so a file of all-distinct
    cells keeps memory flat (it is then parsed row by row, as without the memo).
    """

    def __init__(
        self,
        cols: tuple[int, int, int, int],
        tenants: tuple[str, ...],
        meters: MeterLookup,
        reject: Callable[[LineRejection], None],
        now: datetime,
        memo: int,
    ) -> None:
        self.cols = cols
        self.tenants = tenants
        self.meters = meters
        self.reject = reject
        # Compared in the utility's zone: datetimes with the SAME tzinfo compare without
        # calling utcoffset (several times faster than across offsets on this hot path).
        self.latest = (now + INTERVAL).astimezone(UTILITY_TZ)
        self.memo = memo
        self.cache: dict[tuple[str, str], IntervalMeter | None] = {}
        self.named: dict[tuple[str, str], tuple[tuple[str, str], IntervalMeter | None]] = {}
        # cell as written -> its verdict: the parsed value, or why it is refused (a str)
        self.times: dict[str, tuple[datetime, datetime, date] | str] = {}
        self.local_days: dict[date, date] = {}  # one date object a day: compared by identity first
        self.volumes: dict[str, Decimal | str] = {}
        self.sums: dict[tuple[str, str, date], list[Any]] = {}  # [gallons, intervals, peak]
        self.window = _Window()

    def read(self, reader: Any, width: int, size: int) -> Iterator[tuple[list[_Row], list[LineRejection]]]:
        """The file in batches: up to ``size`` rows, each with its time and volume decided
        (memo) while its cells are fresh in the CPU's cache, and the rejections of the lines
        read meanwhile (CSV errors, wrong field counts, over-long lines, bad bytes), as
        ``csvinput.records`` gives them. A batch keeps its rows' meter cells and verdicts,
        not their cells: less memory to come back to when the batch's meters are known.
        """
        ti, mi, si, vi = self.cols
        times, volumes, time_of, volume_of = self.times, self.volumes, self._time, self._volume
        good: list[_Row] = []
        bad: list[LineRejection] = []
        append = good.append
        while True:
            try:
                for cells in reader:
                    if len(cells) == width and not cells[-1].endswith(cin.TOO_LONG):
                        stamp = times.get(cells[si])
                        volume = volumes.get(cells[vi])
                        append(
                            (
                                reader.line_num,
                                cells[ti],
                                cells[mi],
                                time_of(cells[si]) if stamp is None else stamp,
                                volume_of(cells[vi]) if volume is None else volume,
                            )
                        )
                        if len(good) >= size:
                            yield good, bad
                            good, bad = [], []
                            append = good.append
                    elif rejection := cin.bad_row(cells, width, reader.line_num):
                        bad.append(rejection)
                break
            except csv.Error as exc:
                reason = f"not CSV: {str(exc)[:200]}"
                bad.append(LineRejection(line=reader.line_num, column="(row)", reason=reason))
            except cin.FileRejected as exc:
                bad.append(exc.rejection)  # bad bytes part-way: the lines before stand, the rest cannot
                break
        yield good, bad

    def run(self, pending: list[_Row], out: Aggregation) -> None:
        named = self._named(pending)
        sums, reject, window, tenants = self.sums, self.reject, self.window, self.tenants
        refused = 0  # counted, not the accepted rows: refusals are the rare case
        ident_now, values, total, last = window.meter, window.values, window.total, window.last_start
        # The row before's meter cells, meter and daily sum: rows come grouped by meter and
        # day, so most rows reuse them (identity checks) instead of building and hashing keys.
        tenant_cell: str | None = None
        meter_cell: str | None = None
        ident: tuple[str, str] = ("", "")
        meter: IntervalMeter | None = None
        factor: Decimal | None = None
        sum_ident: tuple[str, str] | None = None
        sum_day: date | None = None
        day: list[Any] = []
        for line, tenant_written, meter_written, stamp, volume in pending:
            if meter_written != meter_cell or tenant_written != tenant_cell:
                tenant_cell, meter_cell = tenant_written, meter_written
                ident, meter = named[(tenant_cell, meter_cell)]
                factor = None if meter is None or meter.units == "gal" else GALLONS_PER[meter.units]
            if meter is None:
                reject(_unknown(line, ident, tenants))
                refused += 1
                continue
            if isinstance(stamp, str):
                reject(LineRejection(line=line, column="interval_start", reason=stamp))
                refused += 1
                continue
            if isinstance(volume, str):
                reject(LineRejection(line=line, column="volume", reason=volume))
                refused += 1
                continue
            start, local, local_day = stamp
            gallons = volume
            if factor is not None:
                gallons = gallons * factor
            if local_day is sum_day and ident is sum_ident:
                day[0] += gallons
                day[1] += 1
                if gallons > day[2]:
                    day[2] = gallons
            else:
                sum_ident, sum_day = ident, local_day
                key = (ident[0], ident[1], local_day)
                found = sums.get(key)
                if found is None:
                    sums[key] = day = [gallons, 1, gallons]
                else:
                    day = found
                    day[0] += gallons
                    day[1] += 1
                    if gallons > day[2]:
                        day[2] = gallons
            # X-SLUG on the trailing 24 hours of this meter (module doc). Local times compare by
            # wall clock (same tzinfo, fold ignored): the hour repeated when clocks fall back
            # reads as going back, so the window restarts there.
            if (ident is not ident_now and ident != ident_now) or (last is not None and local <= last):
                window.total = total
                _close_run(window, out)
                window.meter = ident_now = ident
                window.account = meter.account_id
                total = Decimal(0)
                values.clear()
            last = local
            if len(values) == WINDOW:
                if gallons * WINDOW > total * SLUG_FACTOR:  # above 5x the trailing mean, no division
                    if not window.run:
                        window.threshold = total * SLUG_FACTOR / WINDOW
                    window.run.append((start, gallons))
                elif window.run:
                    _close_run(window, out)
                total = total - values[0] + gallons
            else:
                total += gallons
            values.append(gallons)
        window.total, window.last_start = total, last
        out.rows += len(pending)
        out.accepted += len(pending) - refused

    def _named(
        self, pending: list[_Row]
    ) -> dict[tuple[str, str], tuple[tuple[str, str], IntervalMeter | None]]:
        """Cells as written -> (stripped ident, meter), the batch's new meters looked up at once."""
        named, cache = self.named, self.cache
        # `set - dict.keys()` would walk every key seen in the file (CPython copies the set and
        # iterates the keys view): per batch that grew with the file; test the batch's few instead.
        unseen = [w for w in set(map(itemgetter(1, 2), pending)) if w not in named]
        if unseen:
            idents = {written: (written[0].strip(), written[1].strip()) for written in unseen}
            missing = {k for k in idents.values() if k not in cache}
            if missing:
                found = self.meters(k for k in missing if k[0] in self.tenants and _plain_id(k[1]))
                for k in missing:
                    cache[k] = found.get(k)
            for written, ident in idents.items():
                named[written] = (ident, cache[ident])
        return named

    def _time(self, cell: str) -> tuple[datetime, datetime, date] | str:
        """An interval start as written, not yet in the memo: (start, local time, local day),
        or why it is refused (memoised too, so a file of one bad time is not parsed per row)."""
        times = self.times
        if len(times) >= self.memo:
            times.clear()
            self.local_days.clear()
        text = cell.strip()
        try:
            if len(text) > 40 or "T" not in text:
                raise ValueError
            start = datetime.fromisoformat(text)
        except ValueError:
            verdict: tuple[datetime, datetime, date] | str = f"not an ISO 8601 time: {text[:40]!r}"
        else:
            if start.tzinfo is None:
                verdict = "needs an offset (e.g. -05:00)"
            elif start.minute % 5 or start.second or start.microsecond:
                verdict = "not on a 5-minute boundary"
            else:
                try:
                    local = start.astimezone(UTILITY_TZ)
                except OverflowError:  # year 1 or 9999 with an offset that crosses the calendar's end
                    local = datetime.min.replace(tzinfo=UTILITY_TZ)
                if local >= self.latest or local.year < EARLIEST_YEAR:
                    verdict = f"{text} is in the future or before 1990"
                else:
                    day = local.date()
                    verdict = (start, local, self.local_days.setdefault(day, day))
        times[cell] = verdict
        return verdict

    def _volume(self, cell: str) -> Decimal | str:
        """A volume as written, not yet in the memo: a Decimal (in the meter's units), or why
        it is refused."""
        volumes = self.volumes
        if len(volumes) >= self.memo:
            volumes.clear()
        raw = cell.strip()
        # ASCII digits with at most one point: no sign, exponent, underscore or full-width digit.
        if len(raw) > cin.NUMBER_MAX_DIGITS or not raw.isascii() or not raw.replace(".", "", 1).isdigit():
            verdict: Decimal | str = f"not a non-negative decimal: {raw[:30]!r}"
        else:
            verdict = Decimal(raw)
        volumes[cell] = verdict
        return verdict

    def finish(self, out: Aggregation) -> None:
        _close_run(self.window, out)
        out.days = {k: DaySum(v[0], v[1], v[2]) for k, v in self.sums.items()}


def _unknown(line: int, ident: tuple[str, str], tenants: tuple[str, ...]) -> LineRejection:
    named = {"tenant": ident[0], "meter_id": ident[1]}
    try:
        cin.tenant(named, tenants)
        cin.text_id(named, "meter_id")
        reason, column = f"unknown meter {ident[1]} of {ident[0]}", "meter_id"
    except cin.BadField as exc:
        reason, column = exc.reason, exc.column
    return LineRejection(line=line, column=column, reason=reason[:300])


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
