"""The interval hot path (memoised cells, batched meter lookups, reused daily sums) decides
every row exactly as a plain row-by-row reading of X-READS and X-SLUG does: the same daily
items (to the digit), slugs, counts and rejections (line, column, reason).

The reference below parses each row afresh (no memo, no batch); the files are generated
with bad rows of every kind mixed in, several meters in gallons and cubic feet, and both
time changes of America/Chicago in 2026 (March 8 springs forward, November 1 falls back).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from metering.domain import csvinput as cin
from metering.domain.interval import (
    EARLIEST_YEAR,
    INTERVAL,
    INTERVAL_HEADER,
    SLUG_FACTOR,
    SLUG_MIN_INTERVALS,
    UTILITY_TZ,
    WINDOW,
    Aggregation,
    DaySum,
    IntervalMeter,
    Slug,
    _unknown,
    aggregate,
    conflict,
    slot_of,
)
from metering.domain.model import GALLONS_PER
from metering.events import LineRejection

PP = "pleasant-prairie-sewer"
GR = "grafton-sewer"
TENANTS = (PP, GR)
NOW = datetime(2026, 11, 3, 12, tzinfo=UTC)
METERS = {
    (PP, "AMI-1"): IntervalMeter(PP, "AMI-1", "PP-1", "gal", "water"),
    (PP, "AMI-2"): IntervalMeter(PP, "AMI-2", "PP-2", "gal", "water"),
    (PP, "FM-1"): IntervalMeter(PP, "FM-1", "SAT-1", "cf", "flow-monitor"),
    (GR, "GR-9"): IntervalMeter(GR, "GR-9", "GR-A9", "ccf", "water"),
}


def lookup(keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], IntervalMeter]:
    return {k: METERS[k] for k in keys if k in METERS}


def reference(data: bytes) -> tuple[Aggregation, list[LineRejection]]:
    """Each row on its own, in line order: meter, time, volume, daily sum, slug window."""
    rejections: list[LineRejection] = []
    out = Aggregation()
    index, records = cin.records([data], INTERVAL_HEADER)
    latest = (NOW + INTERVAL).astimezone(UTILITY_TZ)
    sums: dict[tuple[str, str, date], DaySum] = {}
    meter_now: tuple[str, str] | None = None
    window: deque[Decimal] = deque(maxlen=WINDOW)
    last: datetime | None = None
    run: list[tuple[datetime, Decimal]] = []
    threshold = Decimal(0)
    given: dict[tuple[tuple[str, str], datetime], tuple[Decimal, int]] = {}

    def refuse(line: int, column: str, reason: str) -> None:
        rejections.append(LineRejection(line=line, column=column, reason=reason))

    def close() -> None:
        if len(run) >= SLUG_MIN_INTERVALS and meter_now is not None:
            out.slugs.append(
                Slug(
                    tenant=meter_now[0],
                    meter_id=meter_now[1],
                    account_id=METERS[meter_now].account_id,
                    first=run[0][0],
                    last=run[-1][0] + INTERVAL,
                    intervals=len(run),
                    volume_gal=sum((v for _, v in run), Decimal(0)),
                    threshold_gal=threshold,
                )
            )
        run.clear()

    for record in records:
        out.rows += 1
        if isinstance(record, LineRejection):
            rejections.append(record)
            continue
        line, cells = record
        ident = (cells[index["tenant"]].strip(), cells[index["meter_id"]].strip())
        meter = METERS.get(ident) if ident[0] in TENANTS else None
        if meter is None:
            rejections.append(_unknown(line, ident, TENANTS))
            continue
        text = cells[index["interval_start"]].strip()
        try:
            if len(text) > 40 or "T" not in text:
                raise ValueError
            start = datetime.fromisoformat(text)
        except ValueError:
            refuse(line, "interval_start", f"not an ISO 8601 time: {text[:40]!r}")
            continue
        if start.tzinfo is None:
            refuse(line, "interval_start", "needs an offset (e.g. -05:00)")
            continue
        if start.minute % 5 or start.second or start.microsecond:
            refuse(line, "interval_start", "not on a 5-minute boundary")
            continue
        try:
            local = start.astimezone(UTILITY_TZ)
        except OverflowError:
            refuse(line, "interval_start", f"{text} is in the future or before 1990")
            continue
        if local >= latest or local.year < EARLIEST_YEAR:
            refuse(line, "interval_start", f"{text} is in the future or before 1990")
            continue
        raw = cells[index["volume"]].strip()
        if len(raw) > cin.NUMBER_MAX_DIGITS or not raw.isascii() or not raw.replace(".", "", 1).isdigit():
            refuse(line, "volume", f"not a non-negative decimal: {raw[:30]!r}")
            continue
        gallons = Decimal(raw) if meter.units == "gal" else Decimal(raw) * GALLONS_PER[meter.units]
        # a new meter, or time not moving on (compared as instants), restarts the window
        if ident != meter_now or (last is not None and start <= last):
            close()
            meter_now = ident
            window.clear()
        last = start
        total = sum(window, Decimal(0))
        if len(window) == WINDOW:
            if gallons * WINDOW > total * SLUG_FACTOR:
                if not run:
                    threshold = total * SLUG_FACTOR / WINDOW
                run.append((start, gallons))
            else:
                close()
        window.append(gallons)
        # issue 26: an interval given again is repeated (same volume) or rejected (another)
        slot = (ident, start.astimezone(UTC))
        if slot in given:
            had, had_line = given[slot]
            if had == Decimal(raw):
                out.repeated += 1
            else:
                rejections.append(conflict(line, ident[1], slot_of(slot[1]), had, had_line, Decimal(raw)))
            continue
        given[slot] = (Decimal(raw), line)
        key = (ident[0], ident[1], local.date())
        if key in sums:
            day = sums[key]
            sums[key] = DaySum(day.volume_gal + gallons, day.intervals + 1, max(day.peak_gal, gallons))
        else:
            sums[key] = DaySum(gallons, 1, gallons)
        out.accepted += 1
    close()
    out.days = sums
    return out, rejections


def fast(data: bytes, *, batch: int, memo: int, chunk: int = 4096) -> tuple[Aggregation, list[LineRejection]]:
    rejections: list[LineRejection] = []
    chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    out = aggregate(
        chunks, meters=lookup, tenants=TENANTS, now=NOW, reject=rejections.append, batch=batch, memo=memo
    )
    return out, rejections


def exact(out: Aggregation) -> tuple[object, ...]:
    """Everything an aggregation says, Decimals by their digits (1.50 is not 1.5 here)."""
    days = sorted((k, str(d.volume_gal), d.intervals, str(d.peak_gal)) for k, d in out.days.items())
    slugs = [
        (
            s.tenant,
            s.meter_id,
            s.account_id,
            s.first,
            s.last,
            s.intervals,
            str(s.volume_gal),
            str(s.threshold_gal),
        )
        for s in out.slugs
    ]
    return out.rows, out.accepted, out.repeated, days, slugs


BAD_TIMES = (
    "2026-04-01 12:00",  # no T
    "2026-04-01T12:00:00",  # no offset
    "2026-04-01T12:07:00-05:00",  # off the 5-minute grid
    "2026-04-01T12:05:30-05:00",
    "2099-04-01T12:00:00-05:00",  # future
    "1989-12-31T23:55:00-06:00",  # before 1990
    "2026-02-30T12:00:00-06:00",  # no such day
    "2026-04-01T12:00:00+24:00",
    "0001-01-01T00:05:00+01:00",  # past the calendar's ends once in Chicago time
    "9999-12-31T23:55:00-01:00",
    "x" * 60,
    "=NOW()",
    "",
)
BAD_VOLUMES = ("-3", "+3", "=1+2", "@SUM(A1)", "9" * 21, "1e3", "1_000", "１２", "1.2.3", ".", "", " ", "NaN")
BAD_LINES = (
    '"a\nb",c,d,e',  # a quoted field over two lines: one row, two line numbers
    'x"y,1,2,3',  # not CSV (strict)
    "only,three,fields",
    "",  # a blank line: skipped, still counted as a line
    f"{PP},AMI-1,2026-04-01T12:00:00-05:00,1,extra",
    "z" * 9000,  # longer than a line may be
)


def generated(seed: int, meters: int = 6, per_meter: int = 420) -> bytes:
    """Meters' runs of 5-minute rows over a time change, bad rows mixed in (about 1 in 12)."""
    rnd = random.Random(seed)
    lines = ["tenant,meter_id,interval_start,volume"]
    starts = (
        datetime(2026, 3, 7, 2, 0, tzinfo=UTILITY_TZ),  # 1 1/2 days from before the spring change
        datetime(2026, 10, 31, 9, 0, tzinfo=UTILITY_TZ),  # over the fall change (01:00-02:00 twice)
        datetime(2026, 4, 1, 0, 0, tzinfo=UTC),
    )
    known = [(PP, "AMI-1"), (PP, "AMI-2"), (PP, "FM-1"), (GR, "GR-9")]
    odd = [(PP, " AMI-1 "), (PP, "NOPE"), ("elsewhere", "AMI-1"), (PP, "=cmd()"), (PP, "-1")]
    blocks = rnd.sample(known, len(known)) + [rnd.choice(odd) for _ in range(meters - len(known))]
    rnd.shuffle(blocks)
    for tenant, meter in blocks:
        begin = rnd.choice(starts)
        offset = rnd.choice(("utc", "local", "fixed"))
        base = rnd.choice(("2", "0.5", "10.25", "3"))
        for i in range(per_meter):
            at = begin.astimezone(UTC) + timedelta(minutes=5 * i)  # real time, not wall-clock
            if offset == "utc":
                stamp = at.astimezone(UTC).isoformat()
            elif offset == "local":
                stamp = at.astimezone(UTILITY_TZ).isoformat()
            else:
                stamp = at.astimezone(UTC).replace(tzinfo=None).isoformat() + "-00:00"
            volume = base if rnd.random() < 0.9 else rnd.choice(("60", "80.5", "0", "0.00", "125"))
            if 370 <= i < 376 or 395 <= i < 398:
                volume = "99"  # runs of 6 and 3 intervals above five times the trailing mean
            roll = rnd.random()
            if roll < 0.03:
                stamp = rnd.choice(BAD_TIMES)
            elif roll < 0.06:
                volume = rnd.choice(BAD_VOLUMES)
            elif roll < 0.07:
                lines.append(rnd.choice(BAD_LINES))
                continue
            elif roll < 0.08:
                stamp, volume = f" {stamp} ", f" {volume}"  # spaces around cells are stripped
            lines.append(f"{tenant},{meter},{stamp},{volume}")
        if rnd.random() < 0.3:
            lines.append(f"{tenant},{meter},{begin.isoformat()},1")  # back in time: a new window
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize(("batch", "memo"), [(1, 3), (7, 50), (5_000, 20_000)])
def test_the_fast_path_decides_every_row_as_the_plain_reference_does(
    seed: int, batch: int, memo: int
) -> None:
    data = generated(seed)
    expected, expected_rejections = reference(data)
    got, rejections = fast(data, batch=batch, memo=memo)
    assert exact(got) == exact(expected)
    assert expected.accepted > 500 and len(expected_rejections) > 50
    if batch == 1:  # each row decided as it is read: rejections in line order
        assert rejections == expected_rejections
    else:  # a batch's CSV-level rejections are reported before its rows are decided
        assert sorted(rejections, key=lambda r: r.line) == sorted(expected_rejections, key=lambda r: r.line)


def test_the_generated_files_hold_slugs_and_both_time_changes() -> None:
    """The comparison above means something: the files exercise what it compares."""
    seen = [reference(generated(seed))[0] for seed in range(12)]
    days = {day for out in seen for (_, _, day) in out.days}
    assert {date(2026, 3, 8), date(2026, 11, 1)} <= days
    assert sum(len(out.slugs) for out in seen) > 0


def test_a_file_of_distinct_times_keeps_the_memo_bounded() -> None:
    rows = "".join(
        f"{PP},AMI-1,{(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=5 * i)).isoformat()},1\n"
        for i in range(500)
    )
    data = ("tenant,meter_id,interval_start,volume\n" + rows).encode()
    got, rejections = fast(data, batch=100, memo=64)
    expected, _ = reference(data)
    assert exact(got) == exact(expected) and not rejections
