"""Metering's import kinds under hostile files (issue 27): meters, register reads, interval
reads, and the daily estimate run over whatever they stored.

Each property runs metering's own use cases (``ingest.take_in_file``,
``take_in_interval_file``, ``estimate_missing``) on the in-memory repository of
tests/metering/support.py, with the tariff book's field rules, and checks: nothing raises
(a raise retries the file to the DLQ); the counts add up; every stored meter, read and
interval day keeps the README's column rules (``fuzz_cells``, not the readers' code); a file
of refused lines stores nothing; the same file again takes nothing new in.
"""

from __future__ import annotations

import copy
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import fuzz_cells as fc
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import METERS_HEADER as METERS_TEXT
from support import TENANTS, MemoryReport, Utility
from support import settings as tenant_settings

from common.tariff_files import default_tariffs_dir, load_tariff_book
from metering import composition
from metering.app import ingest
from metering.app.ingest import FieldRules, IngestResult, UploadedFile

TODAY = date(2026, 4, 10)
BOOK = load_tariff_book(default_tariffs_dir())
FIRST = {t: BOOK.first_effective(t) for t in TENANTS}
SIZES = {t: composition.tariff_sizes(BOOK.in_force(t, TODAY)) for t in TENANTS}
METERS_HEADER = tuple(METERS_TEXT.strip().split(","))
READS_HEADER = ("tenant", "meter_id", "read_on", "reading", "read_type")
INTERVAL_HEADER = ("tenant", "meter_id", "interval_start", "volume")
EXAMPLES = fc.examples(60)


def utility() -> Utility:
    u = Utility(today=TODAY)
    u.rules = FieldRules(first=FIRST.__getitem__, today=TODAY, sizes=SIZES.__getitem__)
    return u


def upload(u: Utility, kind: str, data: bytes, etag: str) -> IngestResult:
    """``Utility.upload`` with the etag given: the same bytes under a new etag are read
    again (a new object), under the same etag they are the duplicate of the last run."""
    u.uploads += 1
    u.last_report = MemoryReport()
    now = datetime.combine(u.today, datetime.min.time(), UTC)
    if kind == "interval":
        return ingest.take_in_interval_file(
            UploadedFile("b", f"reads/interval/{u.uploads}.csv", etag, len(data)),
            chunks=[data[i : i + 61] for i in range(0, len(data), 61)] or [b""],
            repo=u.repo,
            report=u.last_report,
            tenants=TENANTS,
            now=now,
            rules=u.rules,
            flush_days=3,
        )
    return ingest.take_in_file(
        UploadedFile("b", f"{kind}/{u.uploads}.csv", etag, len(data)),
        kind=kind,
        chunks=[data[i : i + 61] for i in range(0, len(data), 61)] or [b""],
        repo=u.repo,
        report=u.last_report,
        settings=tenant_settings,
        tenants=TENANTS,
        now=now,
        today=TODAY,
        batch_rows=3,  # several batches a file
        rules=u.rules,
    )


def stored(u: Utility) -> dict[str, Any]:
    """What a file can change, but the file records (a refused file is still recorded)."""
    r = u.repo
    return copy.deepcopy(
        {
            "meters": r.meters_,
            "accounts": r.accounts_,
            "reads": [(x.tenant, x.meter_id, x.read_on, x.reading, a) for x, a in r.reads],
            "failed": len(r.failed),
            "consumptions": sorted(map(repr, r.consumptions)),
            "days": r.stored_days,
        }
    )


def counted(result: IngestResult, drawn: fc.Drawn, kind: str) -> None:
    counts = result.counts.check()
    fc.TAKEN[kind] += counts.accepted + counts.changed
    if drawn.plain:
        assert counts.lines == len(drawn.rows), (result.counts, drawn.rows)


def meters_keep_the_rules(u: Utility) -> None:
    for (tenant, meter_id), m in u.repo.meters_.items():
        assert tenant in TENANTS and m["tenant"] == tenant and m["meter_id"] == meter_id
        assert fc.safe_id(meter_id) and fc.safe_id(m["account_id"]), m
        installed = date.fromisoformat(m["installed_on"])
        assert fc.started(installed, TODAY), m
        if m["removed_on"] is not None:
            assert fc.ended(date.fromisoformat(m["removed_on"]), installed, TODAY), m
        assert m["size"] is None or m["size"] in SIZES[tenant], m
        assert m["kind"] in ("water", "waste", "flow-monitor") and m["units"] in ("gal", "cf", "ccf")
        assert 1 <= m["digits"] <= 12
        for number in (m["initial_reading"], m["final_reading"]):
            assert number is None or Decimal(number).is_finite() and Decimal(number) >= 0, m
    for tenant, account_id in u.repo.accounts_:
        assert tenant in TENANTS and fc.safe_id(account_id)


def reads_keep_the_rules(u: Utility) -> None:
    for read, account_id in u.repo.reads:
        assert read.tenant in TENANTS and fc.safe_id(read.meter_id) and fc.safe_id(account_id), read
        assert fc.happened(read.read_on, FIRST[read.tenant], TODAY), read
        assert (
            read.reading.is_finite()
            and read.reading >= 0
            and read.read_type in ("actual", "estimated", "final")
        )


def days_keep_the_rules(u: Utility) -> None:
    for (tenant, meter_id, day), sums in u.repo.days.items():
        assert tenant in TENANTS and fc.safe_id(meter_id)
        assert fc.happened(day, FIRST[tenant], TODAY), (tenant, meter_id, day)
        assert sums.volume_gal.is_finite() and sums.volume_gal >= 0 and 0 < sums.intervals <= 300


# --- meters ---------------------------------------------------------------------------------
@st.composite
def meter_row(draw: st.DrawFn) -> tuple[str, ...]:
    tenant = draw(st.sampled_from(TENANTS))
    size = draw(st.sampled_from(["", *sorted(SIZES[tenant])]))
    installed = draw(st.dates(date(1995, 1, 1), date(2027, 3, 1)))
    removed = draw(st.none() | st.dates(installed, date(2027, 6, 1)))
    return (
        tenant,
        draw(fc.ids("M-")),
        draw(fc.ids("A-", 3)),
        draw(st.sampled_from(("water", "waste", "flow-monitor"))),
        draw(st.sampled_from(("gal", "cf", "ccf"))),
        str(draw(st.integers(4, 9))),
        installed.isoformat(),
        str(draw(st.integers(0, 999))),
        size,
        "" if removed is None else removed.isoformat(),
        "" if removed is None else str(draw(st.integers(0, 999))),
    )


REFUSE_METER = fc.refuse_with(
    {
        0: ("=pleasant-prairie-sewer", "unknown-sewer", ""),
        1: fc.UNSAFE_IDS,
        2: fc.UNSAFE_IDS,
        5: ("0", "13", "-4", "1e1", "٤"),
        6: ("2030-01-01", "2026-02-30", "1900-01-01", ""),
        7: ("-1", "1e400", "=1", "9" * 40),
        8: ("7/8", "=5/8", "5/8\x00"),
    }
)


@EXAMPLES
@given(fc.csv_file(METERS_HEADER, meter_row()))
def test_a_meters_file_never_raises_and_keeps_the_rules(drawn: fc.Drawn) -> None:
    fc.TRIED["metering meters/"] += 1
    u = utility()
    first = upload(u, "meters", drawn.data, "e1")
    counted(first, drawn, "metering meters/")
    meters_keep_the_rules(u)
    after = stored(u)
    assert upload(u, "meters", drawn.data, "e1").accepted == 0  # the same object: a duplicate
    again = upload(u, "meters", drawn.data, "e2")  # the same bytes as a new object
    counted(again, drawn, "metering meters/")
    assert again.accepted == 0, again.counts
    assert stored(u)["meters"] == after["meters"]  # each meter's version in force is the same


@EXAMPLES
@given(fc.csv_file(METERS_HEADER, meter_row(), all_mutated=True, refusing=REFUSE_METER))
def test_a_meters_file_of_refused_lines_stores_nothing(drawn: fc.Drawn) -> None:
    fc.TRIED["metering meters/ refused"] += 1
    u = utility()
    u.meters("grafton-sewer,M-1,A-1,water,gal,6,2025-01-01,0,5/8,,")
    before = stored(u)
    result = upload(u, "meters", drawn.data, "e1")
    counted(result, drawn, "metering meters/ refused")
    assert (result.accepted, result.changed, result.rejected) == (0, 0, len(drawn.rows)), result.counts
    assert stored(u) == before


# --- register reads (and the estimate run over them) -----------------------------------------
REGISTERED = [
    "pleasant-prairie-sewer,M-1,A-1,water,gal,9,2015-06-01,0,5/8,,",
    "pleasant-prairie-sewer,M-2,A-2,water,cf,6,2020-01-01,100,1,,",
    "grafton-sewer,M-1,A-1,water,gal,6,2025-01-01,1000,5/8,,",
    "grafton-sewer,M-3,A-3,waste,ccf,5,2025-02-01,0,,2026-03-01,40",
    "sullivan-sewer,M-1,A-1,water,gal,7,2025-01-01,0,,,",
]


@st.composite
def read_row(draw: st.DrawFn) -> tuple[str, ...]:
    return (
        draw(st.sampled_from(TENANTS)),
        draw(fc.ids("M-", 3)),
        draw(fc.days(date(2024, 10, 1), date(2026, 4, 15))),
        str(draw(st.integers(0, 99_999))),
        draw(st.sampled_from(("", "actual", "estimated", "final"))),
    )


REFUSE_READ = fc.refuse_with(
    {
        0: ("=grafton-sewer", "GRAFTON-SEWER", "x"),
        1: fc.UNSAFE_IDS,
        2: ("1900-01-01", "2999-12-31", "2026-02-30", "2024-12-31T00:00", ""),
        3: ("-5", "1e400", "NaN", "9" * 40, "@1", ""),
        4: ("=actual", "guess"),
    }
)


@EXAMPLES
@given(fc.csv_file(READS_HEADER, read_row(), max_rows=10))
def test_a_reads_file_never_raises_and_keeps_the_rules(drawn: fc.Drawn) -> None:
    fc.TRIED["metering reads/"] += 1
    u = utility()
    u.meters(*REGISTERED)
    first = upload(u, "reads", drawn.data, "e1")
    counted(first, drawn, "metering reads/")
    reads_keep_the_rules(u)
    u.estimate()  # the daily run over whatever the file left: never raises
    reads_keep_the_rules(u)
    after = stored(u)
    again = upload(u, "reads", drawn.data, "e2")
    counted(again, drawn, "metering reads/")
    assert (again.accepted, again.changed) == (0, 0), again.counts
    assert stored(u)["reads"] == after["reads"]


@EXAMPLES
@given(fc.csv_file(READS_HEADER, read_row(), all_mutated=True, refusing=REFUSE_READ))
def test_a_reads_file_of_refused_lines_stores_nothing(drawn: fc.Drawn) -> None:
    fc.TRIED["metering reads/ refused"] += 1
    u = utility()
    u.meters(*REGISTERED)
    before = stored(u)
    result = upload(u, "reads", drawn.data, "e1")
    counted(result, drawn, "metering reads/ refused")
    assert result.accepted == 0 and result.rejected == len(drawn.rows), result.counts
    assert stored(u) == before


# --- interval reads --------------------------------------------------------------------------
INTERVAL_METERS = [
    "pleasant-prairie-sewer,AMI-1,A-1,water,gal,9,2015-06-01,0,,,",
    "pleasant-prairie-sewer,FM-1,A-2,flow-monitor,gal,9,2015-06-01,0,,,",
    "grafton-sewer,AMI-1,A-1,water,cf,9,2025-01-01,0,,,",
]
T0 = datetime(2026, 4, 1, 5, 0, tzinfo=UTC)  # 00:00 in Chicago
CDT = timezone(timedelta(hours=-5))


@st.composite
def interval_row(draw: st.DrawFn) -> tuple[str, ...]:
    stamp = T0 + timedelta(minutes=5 * draw(st.integers(-300, 3_000)))
    zone = draw(st.sampled_from((UTC, CDT)))
    text = stamp.astimezone(zone).isoformat()
    if zone is UTC and draw(st.booleans()):
        text = text.replace("+00:00", "Z")
    return (
        draw(st.sampled_from(("pleasant-prairie-sewer", "grafton-sewer"))),
        draw(st.sampled_from(("AMI-1", "FM-1", "AMI-2"))),
        text,
        str(draw(st.decimals(0, 50, places=2))),
    )


REFUSE_INTERVAL = fc.refuse_with(
    {
        0: ("=pleasant-prairie-sewer", ""),
        1: fc.UNSAFE_IDS,
        2: fc.HOSTILE_STAMP,
        3: ("-1", "1e400", "NaN", "9" * 40, "+1", ""),
    }
)


@EXAMPLES
@given(fc.csv_file(INTERVAL_HEADER, interval_row(), max_rows=12))
def test_an_interval_file_never_raises_and_keeps_the_rules(drawn: fc.Drawn) -> None:
    fc.TRIED["metering reads/interval/"] += 1
    u = utility()
    u.meters(*INTERVAL_METERS)
    first = upload(u, "interval", drawn.data, "e1")
    counted(first, drawn, "metering reads/interval/")
    days_keep_the_rules(u)
    after = stored(u)
    again = upload(u, "interval", drawn.data, "e2")
    counted(again, drawn, "metering reads/interval/")
    assert (again.accepted, again.changed) == (0, 0), again.counts
    assert stored(u)["days"] == after["days"]


@EXAMPLES
@given(fc.csv_file(INTERVAL_HEADER, interval_row(), all_mutated=True, refusing=REFUSE_INTERVAL))
def test_an_interval_file_of_refused_lines_stores_nothing(drawn: fc.Drawn) -> None:
    fc.TRIED["metering reads/interval/ refused"] += 1
    u = utility()
    u.meters(*INTERVAL_METERS)
    before = stored(u)
    result = upload(u, "interval", drawn.data, "e1")
    counted(result, drawn, "metering reads/interval/ refused")
    assert result.accepted == 0 and result.rejected == len(drawn.rows), result.counts
    assert stored(u) == before


# --- every column given a control character or a formula start ------------------------------
COLUMN = fc.examples(6)


@pytest.mark.parametrize("column", range(len(METERS_HEADER)), ids=METERS_HEADER)
@COLUMN
@given(data=st.data())
def test_no_meters_column_keeps_a_control_character_or_a_formula(column: int, data: st.DataObject) -> None:
    fc.TRIED["metering meters/ spoiled column"] += 1
    drawn = data.draw(fc.csv_file(METERS_HEADER, meter_row(), all_mutated=True, refusing=fc.spoil(column)))
    u = utility()
    counted(upload(u, "meters", drawn.data, "e1"), drawn, "metering meters/ spoiled column")
    meters_keep_the_rules(u)


@pytest.mark.parametrize("column", range(len(READS_HEADER)), ids=READS_HEADER)
@COLUMN
@given(data=st.data())
def test_no_reads_column_keeps_a_control_character_or_a_formula(column: int, data: st.DataObject) -> None:
    fc.TRIED["metering reads/ spoiled column"] += 1
    drawn = data.draw(fc.csv_file(READS_HEADER, read_row(), all_mutated=True, refusing=fc.spoil(column)))
    u = utility()
    u.meters(*REGISTERED)
    counted(upload(u, "reads", drawn.data, "e1"), drawn, "metering reads/ spoiled column")
    reads_keep_the_rules(u)


@pytest.mark.parametrize("column", range(len(INTERVAL_HEADER)), ids=INTERVAL_HEADER)
@COLUMN
@given(data=st.data())
def test_no_interval_column_keeps_a_control_character_or_a_formula(column: int, data: st.DataObject) -> None:
    fc.TRIED["metering reads/interval/ spoiled column"] += 1
    drawn = data.draw(
        fc.csv_file(INTERVAL_HEADER, interval_row(), all_mutated=True, refusing=fc.spoil(column))
    )
    u = utility()
    u.meters(*INTERVAL_METERS)
    result = upload(u, "interval", drawn.data, "e1")
    counted(result, drawn, "metering reads/interval/ spoiled column")
    days_keep_the_rules(u)
