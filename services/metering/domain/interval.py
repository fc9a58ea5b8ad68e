"""Interval data (AMI meters, satellite flow monitors): 5-minute volumes (CONTRACTS.md
``reads/interval/``), aggregated to one item per meter per local day (X-READS: the tenant's
local day, America/Chicago), with slug detection (X-SLUG).

The file is streamed: memory holds at most about ``flush_days`` open meter-days (their
intervals), for slug detection the trailing 24 hours of the meter being read, and bounded
memos of the meters and of the distinct time and volume cells already decided (``_Batcher``). Interval
exports list each meter's intervals in time order (AMI head-ends export by meter); a meter
that reappears later in a file starts a new trailing window, so its first 24 hours there
are the baseline and raise no slug (interpretation: "normal operation" needs 24 hours).

Intervals are facts (issue 26): each meter-day keeps every interval it was given, with the
file, pass and line that gave it (:class:`StoredDay`), and its sums are derived from all of
them. A later file adds intervals and never removes one; an interval given again with the
same volume (in this file or an earlier one) is repeated, with another volume rejected with
both values. Within a file the open meter-days are handed to ``flush`` every ``flush_days``
(the reader merges them with what is stored), so memory holds a bounded number of days
whatever the file's size. The raw file stays in the (versioned) uploads bucket.

X-SLUG: a slug is more than 3 consecutive intervals (over 15 minutes) each above five times
the trailing 24-hour mean interval volume; ``SlugDetected`` names the meter, the first and
last interval and the volume over them. Volumes are gallons (meter units converted once).
"""

from __future__ import annotations

import csv
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from operator import itemgetter
from typing import Any
from zoneinfo import ZoneInfo

from common import fields as safe
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


DayKey = tuple[str, str, date]  # (tenant, meter_id, local day)


def slot_of(instant: datetime) -> int:
    """An interval's number: its start in UTC as 5-minute steps since the epoch."""
    return int(instant.timestamp()) // 300


def slot_time(slot: int) -> str:
    """The interval's start in the utility's zone, as a rejection names it."""
    return datetime.fromtimestamp(slot * 300, UTC).astimezone(UTILITY_TZ).isoformat()


@dataclass
class DayIntervals:
    """A meter-day's intervals read from this file and not yet merged with the store:
    slot -> (volume in the meter's units, line)."""

    units: str
    intervals: dict[int, tuple[Decimal, int]] = field(default_factory=dict)


@dataclass
class StoredDay:
    """A meter-day as stored: every interval given, with the source (``<file_id>@<pass>``)
    and line that gave it; the day's sums derive from all of them."""

    units: str
    intervals: dict[int, tuple[Decimal, str, int]] = field(default_factory=dict)

    def sums(self) -> DaySum:
        factor = GALLONS_PER[self.units]
        gallons = [v * factor if factor != 1 else v for v, _, _ in self.intervals.values()]
        return DaySum(sum(gallons, Decimal(0)), len(gallons), max(gallons, default=Decimal(0)))

    def as_json(self) -> dict[str, Any]:
        sources = sorted({s for _, s, _ in self.intervals.values()})
        index = {s: i for i, s in enumerate(sources)}
        return {
            "units": self.units,
            "sources": sources,
            "intervals": {str(k): [str(v), index[s], n] for k, (v, s, n) in sorted(self.intervals.items())},
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> StoredDay:
        sources = raw["sources"]
        return cls(
            raw["units"],
            {int(k): (Decimal(v), sources[i], int(n)) for k, (v, i, n) in raw["intervals"].items()},
        )


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
_Time = tuple[datetime, datetime, date, int]  # start, its instant in UTC, local day, slot
_Row = tuple[int, str, str, _Time | str, Decimal | str]
MEMO_MAX = 20_000  # cells memoised per column: 69 days of 5-minute times; a few MiB at most
FLUSH_DAYS = 200  # open meter-days handed to the reader at once: about 58,000 intervals
NAMED_MAX = 50_000  # meters remembered per file (a file of all-distinct meters stays flat)


@dataclass
class Aggregation:
    """The result of one file: daily sums by (tenant, meter, local day), slugs, counts."""

    days: dict[tuple[str, str, date], DaySum] = field(default_factory=dict)
    slugs: list[Slug] = field(default_factory=list)
    rows: int = 0
    accepted: int = 0  # rows given to a day (without ``flush``: taken in)
    repeated: int = 0  # the same interval again in the file, with the same volume


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
    first: Mapping[str, date] | None = None,
    flush: Callable[[dict[DayKey, DayIntervals]], None] | None = None,
    flush_days: int = FLUSH_DAYS,
    flush_slugs: Callable[[list[Slug]], None] | None = None,
) -> Aggregation:
    """Validate and aggregate an interval file (the hot path: a few microseconds a row).

    Rows are read into batches of ``batch`` so the meters they name are looked up together
    (one batched read per batch, cached for the file). Raises ``csvinput.FileRejected`` for
    an empty file or a bad header. ``memo`` bounds each per-cell memo (tests make it small).
    ``first``: each tenant's first tariff date (an interval before it is refused).
    ``flush``: given the open meter-days whenever ``flush_days`` are open and at the end
    (module doc); without it the days' sums are in the result. ``flush_slugs``: given the
    slugs found so far at each flush (then not kept in the result).
    """
    index, reader = cin.opened(chunks, INTERVAL_HEADER)
    cols = (index["tenant"], index["meter_id"], index["interval_start"], index["volume"])
    out = Aggregation()
    state = _Batcher(cols, tuple(tenants), meters, reject, now, memo, first or {})
    for good, bad in state.read(reader, len(index), batch):
        out.rows += len(bad)
        for rejection in bad:
            reject(rejection)
        state.run(good, out)
        if flush is not None and len(state.open) >= flush_days:
            flush(state.open)
            state.open = {}
            if flush_slugs is not None and out.slugs:
                flush_slugs(out.slugs)
                out.slugs = []
    state.finish(out)
    if flush is not None:
        if state.open:
            flush(state.open)
        state.open = {}
    if flush_slugs is not None and out.slugs:
        flush_slugs(out.slugs)
        out.slugs = []
    else:
        out.days = {k: _sums(d) for k, d in state.open.items()}
    return out


def _sums(day: DayIntervals) -> DaySum:
    return StoredDay(day.units, {k: (v, "", n) for k, (v, n) in day.intervals.items()}).sums()


def _plain_id(value: str) -> bool:
    """Worth looking up: a safe id (``common.fields.identifier``); others are refused unread."""
    if not 0 < len(value) <= ID_MAX:
        return False
    try:
        safe.identifier("meter_id", value)
    except safe.BadField:
        return False
    return True


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
        first: Mapping[str, date],
    ) -> None:
        self.first = first
        self.open: dict[DayKey, DayIntervals] = {}
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
        self.times: dict[str, _Time | str] = {}
        self.local_days: dict[date, date] = {}  # one date object a day: compared by identity first
        self.volumes: dict[str, Decimal | str] = {}
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
        days, reject, window, tenants, firsts = self.open, self.reject, self.window, self.tenants, self.first
        refused = 0  # counted, not the accepted rows: refusals are the rare case
        repeated = 0
        ident_now, values, total, last = window.meter, window.values, window.total, window.last_start
        # The row before's meter cells, meter and open day: rows come grouped by meter and
        # day, so most rows reuse them (identity checks) instead of building and hashing keys.
        tenant_cell: str | None = None
        meter_cell: str | None = None
        ident: tuple[str, str] = ("", "")
        meter: IntervalMeter | None = None
        factor: Decimal | None = None
        first: date | None = None
        sum_ident: tuple[str, str] | None = None
        sum_day: date | None = None
        day: dict[int, tuple[Decimal, int]] = {}
        for line, tenant_written, meter_written, stamp, volume in pending:
            if meter_written != meter_cell or tenant_written != tenant_cell:
                tenant_cell, meter_cell = tenant_written, meter_written
                ident, meter = named[(tenant_cell, meter_cell)]
                factor = None if meter is None or meter.units == "gal" else GALLONS_PER[meter.units]
                first = firsts.get(ident[0])
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
            start, instant, local_day, slot = stamp
            if first is not None and local_day < first:
                reason = f"{start.isoformat()} is before the first tariff of {ident[0]} ({first.isoformat()})"
                reject(LineRejection(line=line, column="interval_start", reason=reason[:300]))
                refused += 1
                continue
            gallons = volume
            if factor is not None:
                gallons = gallons * factor
            # X-SLUG on the trailing 24 hours of this meter (module doc). Intervals are ordered by
            # instant, so the hour repeated when clocks fall back moves on like any other; an
            # interval given again is back in time and starts a new window.
            if (ident is not ident_now and ident != ident_now) or (last is not None and instant <= last):
                window.total = total
                _close_run(window, out)
                window.meter = ident_now = ident
                window.account = meter.account_id
                total = Decimal(0)
                values.clear()
            last = instant
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
            # the day's intervals: an interval given again is repeated, or a conflict
            if local_day is not sum_day or ident is not sum_ident:
                sum_ident, sum_day = ident, local_day
                key = (ident[0], ident[1], local_day)
                found = days.get(key)
                if found is None:
                    found = days[key] = DayIntervals(meter.units)
                day = found.intervals
            have = day.get(slot)
            if have is None:
                day[slot] = (volume, line)
            elif have[0] == volume:
                repeated += 1
            else:
                reject(conflict(line, ident[1], slot, have[0], have[1], volume))
                refused += 1
        window.total, window.last_start = total, last
        out.rows += len(pending)
        out.accepted += len(pending) - refused - repeated
        out.repeated += repeated

    def _named(
        self, pending: list[_Row]
    ) -> dict[tuple[str, str], tuple[tuple[str, str], IntervalMeter | None]]:
        """Cells as written -> (stripped ident, meter), the batch's new meters looked up at once."""
        if len(self.named) > NAMED_MAX:  # a file of ever new meters: memory stays flat
            self.named.clear()
            self.cache.clear()
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

    def _time(self, cell: str) -> _Time | str:
        """An interval start as written, not yet in the memo: (start, its instant in UTC, local day),
        or why it is refused (memoised too, so a file of one bad time is not parsed per row)."""
        times = self.times
        if len(times) >= self.memo:
            times.clear()
            self.local_days.clear()
        text = cell.strip()
        try:
            # a NUL first: datetime.fromisoformat stops at one and takes the time before it
            if len(text) > 40 or "T" not in text or "\x00" in text:
                raise ValueError
            start = datetime.fromisoformat(text)
        except ValueError:
            verdict: _Time | str = (
                "holds a NUL character (U+0000)" if "\x00" in text else f"not an ISO 8601 time: {text[:40]!r}"
            )
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
                    # ordered by instant (all in UTC: one tzinfo, compared without utcoffset calls)
                    instant = start.astimezone(UTC)
                    verdict = (start, instant, self.local_days.setdefault(day, day), slot_of(instant))
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
        if "\x00" in raw:
            verdict: Decimal | str = "holds a NUL character (U+0000)"
        elif len(raw) > cin.NUMBER_MAX_DIGITS or not raw.isascii() or not raw.replace(".", "", 1).isdigit():
            verdict = f"not a non-negative decimal: {raw[:30]!r}"
        else:
            verdict = Decimal(raw)
        volumes[cell] = verdict
        return verdict

    def finish(self, out: Aggregation) -> None:
        _close_run(self.window, out)


def conflict(
    line: int, meter_id: str, slot: int, had: Decimal, had_line: int | None, got: Decimal
) -> LineRejection:
    """An interval given again with another volume: both values (CONTRACTS.md)."""
    where = f" (line {had_line})" if had_line is not None else ""
    reason = f"interval {slot_time(slot)} of meter {meter_id} already has volume {had}{where}; got {got}"
    return LineRejection(line=line, column="volume", reason=reason[:300])


def _unknown(line: int, ident: tuple[str, str], tenants: tuple[str, ...]) -> LineRejection:
    named = {"tenant": ident[0], "meter_id": ident[1]}
    try:
        cin.tenant(named, tenants)
        cin.safe_id(named, "meter_id")
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
