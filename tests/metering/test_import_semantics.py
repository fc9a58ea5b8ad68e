"""What a repeated or changed line means, for metering's kinds (issue 26), and every field
checked against its world (issue 27). Each test is a row of the issues' tables; each fails
on the code before them (noted per test)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from support import METERS_HEADER, READS_HEADER, Crash, CrashingRepo, Utility

from common.tariff_files import load_tariff_book
from metering import composition
from metering.app.ingest import FieldRules, IngestResult

PP = "pleasant-prairie-sewer"
GR = "grafton-sewer"
HEADER = "tenant,meter_id,interval_start,volume\n"
T0 = datetime(2026, 4, 1, 5, 0, tzinfo=UTC)  # 00:00 in Chicago (CDT)
TARIFFS = Path(__file__).resolve().parents[2] / "infra" / "tariffs"


def stamp(i: int) -> str:
    return (T0 + timedelta(minutes=5 * i)).isoformat()


def utility(today: date = date(2026, 4, 10)) -> Utility:
    u = Utility(today=today)
    u.meters(
        f"{PP},AMI-1,PP-1,water,gal,9,2026-01-01,0,,,", f"{GR},GR-M1,GR-1,water,gal,6,2026-01-01,1000,5/8,,"
    )
    return u


def adds_up(result: IngestResult, lines: int) -> None:
    """One set of counters for every kind, adding up to the file's data lines."""
    assert result.counts.check().lines == lines, result.counts


def day_of(u: Utility, meter: str = "AMI-1") -> tuple[Decimal, int]:
    [(volume, intervals)] = [
        (d.volume_gal, d.intervals) for (_, m, _), d in u.repo.days.items() if m == meter
    ]
    return volume, intervals


# ---------------------------------------------------------------- issue 26


def test_an_interval_listed_three_times_is_one_interval_a_repeat_and_a_conflict() -> None:
    """Before: accepted 4 rows, the day 8.5 gal over 4 intervals."""
    u = utility()
    result = u.interval(
        HEADER + f"{PP},AMI-1,{stamp(0)},1.5\n" + "".join(f"{PP},AMI-1,{stamp(1)},{v}\n" for v in "223")
    )
    assert (result.accepted, result.repeated, result.rejected) == (2, 1, 1)
    adds_up(result, 4)
    assert day_of(u) == (Decimal("3.5"), 2)
    [conflict] = result.first_rejections
    assert (conflict.line, conflict.column) == (5, "volume")
    assert "already has volume 2 (line 3); got 3" in conflict.reason


def test_a_second_interval_file_for_the_same_day_adds_and_never_removes() -> None:
    """Before: the second file's day replaced the first's (its intervals lost)."""
    u = utility()
    first = u.interval(HEADER + "".join(f"{PP},AMI-1,{stamp(i)},2\n" for i in range(3)))
    assert (first.accepted, first.lines) == (3, 3)
    second = u.interval(
        HEADER + f"{PP},AMI-1,{stamp(1)},2\n{PP},AMI-1,{stamp(2)},9\n{PP},AMI-1,{stamp(3)},4\n"
    )
    assert (second.accepted, second.repeated, second.rejected) == (1, 1, 1)
    adds_up(second, 3)
    assert day_of(u) == (Decimal(10), 4)  # 2 + 2 + 2 from the first file, 4 new
    [conflict] = second.first_rejections
    assert conflict.line == 3 and "already has volume 2; got 9" in conflict.reason


def test_a_read_file_refused_for_future_dates_is_taken_in_when_sent_again_later() -> None:
    """Before: the second upload was a "duplicate file": nothing taken in, nothing rejected."""
    u = utility(today=date(2026, 3, 20))
    text = READS_HEADER + f"{GR},GR-M1,2026-04-01,5000,\n{GR},GR-M1,2026-05-01,9000,\n"
    early = u.upload("reads", text)
    assert (early.accepted, early.rejected, early.duplicate_file) == (0, 2, False)
    assert all("in the future" in r.reason for r in early.first_rejections)
    u.today = date(2026, 5, 2)
    later = u.upload("reads", text)
    assert (later.duplicate_file, later.accepted, later.rejected) == (False, 2, 0)
    adds_up(later, 2)
    assert [p.reading for p in u.repo.accounts([(GR, "GR-1")])[(GR, "GR-1")].series["GR-M1"].points] == [
        Decimal(1000),
        Decimal(5000),
        Decimal(9000),
    ]
    # now every line is taken in: the same file again is a duplicate, counted repeated
    again = u.upload("reads", text)
    assert (again.duplicate_file, again.repeated, again.lines) == (True, 2, 2)


def test_a_file_whose_refusals_cannot_change_is_a_duplicate_when_sent_again() -> None:
    u = utility()
    text = READS_HEADER + f"{GR},GR-M1,2026-03-01,9000,\n{GR},GR-M1,2025-12-01,900,\n"  # before the install
    first = u.upload("reads", text)
    assert (first.accepted, first.rejected) == (1, 1)
    again = u.upload("reads", text)
    assert (again.duplicate_file, again.repeated, again.rejected, again.lines) == (True, 1, 1, 2)


def test_a_meter_line_that_changes_the_meter_is_counted_changed_and_kept_as_history() -> None:
    """Before: a changed meter was counted accepted, like a new one."""
    u = utility()
    result = u.meters(
        f"{GR},GR-M1,GR-1,water,gal,6,2026-01-01,1000,1,,",  # its size changed: a new version
        f"{GR},GR-M2,GR-2,water,gal,6,2026-01-01,0,5/8,,",  # new
        f"{GR},GR-M2,GR-2,water,gal,6,2026-01-01,0,5/8,,",  # the same again in the file
        f"{GR},GR-M1,GR-9,water,gal,6,2026-01-01,1000,1,,",  # another account: cannot change
    )
    assert (result.accepted, result.changed, result.repeated, result.rejected) == (1, 1, 1, 1)
    adds_up(result, 4)
    [moved] = result.first_rejections
    assert moved.column == "account_id" and "already has account_id GR-1; got GR-9" in moved.reason


def test_the_counters_add_up_to_the_lines_for_every_kind() -> None:
    u = utility()
    reads = u.reads(
        f"{GR},GR-M1,2026-03-01,9000,",
        f"{GR},GR-M1,2026-03-01,9000,",  # repeated in the file
        f"{GR},GR-M1,2026-03-01,9500,",  # conflict: rejected with both values
        f"{GR},NOPE,2026-03-01,1,",  # unknown meter
        "only,three,cells",
    )
    assert (reads.accepted, reads.repeated, reads.rejected) == (1, 1, 3)
    adds_up(reads, 5)
    [event] = [e for _, e, _ in u.repo.files.values() if e is not None and e.rejected_count == 3]
    assert (event.accepted_count, event.repeated_count, event.changed_count, event.lines_count) == (
        1,
        1,
        0,
        5,
    )
    header_only = u.upload("reads", "tenant,meter_id,read_on,nope\n")
    adds_up(header_only, 1)
    assert header_only.rejected == 1 and header_only.first_rejections[0].column == "(header)"


def reads_file(meters: int = 30) -> tuple[str, str]:
    meters_text = METERS_HEADER + "".join(
        f"{GR},C-{n:03d},CA-{n:03d},water,gal,7,2026-01-01,0,5/8,,\n" for n in range(meters)
    )
    reads_text = READS_HEADER + "".join(
        f"{GR},C-{n:03d},{day},{(k + 1) * 1000 + n},\n"
        for n in range(meters)
        for k, day in enumerate(("2026-02-01", "2026-03-01", "2026-04-01"))
    )
    return meters_text, reads_text + f"{GR},C-000,2026-02-01,1000,\n"  # and one repeat of line 2


@pytest.mark.parametrize("crash_after", [1, 2, 3])
def test_a_read_file_redelivered_after_a_crash_reports_what_a_run_without_it_would(crash_after: int) -> None:
    meters_text, reads_text = reads_file()
    clean = Utility(today=date(2026, 7, 10))
    clean.upload("meters", meters_text)
    expected = clean.upload("reads", reads_text, batch_rows=25)
    u = Utility(today=date(2026, 7, 10))
    u.upload("meters", meters_text)
    store = u.repo
    u.repo = CrashingRepo(store, after=crash_after)  # type: ignore[assignment]
    with pytest.raises(Crash):
        u.upload("reads", reads_text, batch_rows=25)
    u.repo = store
    got = u.upload("reads", reads_text, batch_rows=25)
    assert got.counts == expected.counts and (got.accepted, got.repeated) == (90, 1)
    assert store.volumes("CA-007") == clean.repo.volumes("CA-007")
    assert len(store.consumptions) == len(clean.repo.consumptions)


@pytest.mark.parametrize("crash_after", [1, 2])
def test_an_interval_file_redelivered_after_a_crash_reports_what_a_run_without_it_would(
    crash_after: int,
) -> None:
    # 20 days: more rows than the reader's batch of 5,000, so it flushes days twice
    text = HEADER + "".join(f"{PP},AMI-1,{stamp(i + 288 * d)},1\n" for d in range(20) for i in range(288))
    text += f"{PP},AMI-1,{stamp(5)},1\n"  # the same interval again, after a flush
    clean = utility(date(2026, 5, 1))
    expected = clean.interval(text, flush_days=1)
    u = utility(date(2026, 5, 1))
    store = u.repo
    u.repo = CrashingRepo(store, after=crash_after)  # type: ignore[assignment]
    with pytest.raises(Crash):
        u.interval(text, flush_days=1)
    u.repo = store
    got = u.interval(text, flush_days=1)
    assert (expected.accepted, expected.repeated) == (5760, 1)
    assert got.counts == expected.counts
    assert store.days == clean.repo.days


# ---------------------------------------------------------------- issue 27


@pytest.mark.parametrize(
    ("value", "cause"),
    [
        ("M\x00X", "control character (U+0000)"),
        ("../../etc/passwd", "slash"),
        ("M/../../etc/passwd", "slash"),  # before: accepted (metering's ids allowed '/')
        ("M" * 2000, "2000 characters"),
    ],
)
def test_hostile_ids_are_rejected_with_line_column_and_cause(value: str, cause: str) -> None:
    """Before: an id holding a slash was accepted (NUL and over-long ids were refused already)."""
    u = utility()
    meters = u.meters(
        f"{GR},{value},GR-1,water,gal,6,2026-01-01,0,,,", f"{GR},GR-M9,{value},water,gal,6,2026-01-01,0,,,"
    )
    assert [(r.line, r.column) for r in meters.first_rejections] == [(2, "meter_id"), (3, "account_id")]
    assert all(cause in r.reason for r in meters.first_rejections)
    reads = u.reads(f"{GR},{value},2026-03-01,5,")
    [read] = reads.first_rejections
    assert (read.line, read.column) == (2, "meter_id") and cause in read.reason


def test_a_nul_in_an_interval_row_is_reported_as_what_it_is() -> None:
    """Before: "line longer than 8192 characters"."""
    u = utility()
    result = u.interval(
        HEADER + f"{PP},AMI\x00,{stamp(0)},1\n{PP},AMI-1,{stamp(1)},1\x00\n{PP},AMI-1,{stamp(2)}\x00,1\n"
    )
    assert [(r.line, r.column) for r in result.first_rejections] == [
        (2, "meter_id"),
        (3, "volume"),
        (4, "interval_start"),
    ]
    for r in result.first_rejections:
        assert "U+0000" in r.reason and "longer" not in r.reason, r.reason
    adds_up(result, 3)


def rules(today: date) -> FieldRules:
    book = load_tariff_book(TARIFFS)
    return FieldRules(
        first=book.first_effective,
        today=today,
        sizes=lambda tenant: composition.tariff_sizes(book.in_force(tenant, today)),
    )


def test_dates_of_facts_lie_between_the_first_tariff_and_today() -> None:
    """Before: a read or an interval dated before any tariff of the tenant was accepted."""
    u = Utility(today=date(2026, 4, 10))
    u.rules = rules(u.today)
    u.meters(
        f"{GR},GR-M1,GR-1,water,gal,6,2024-06-01,1000,5/8,,", f"{PP},AMI-1,PP-1,water,gal,9,2014-01-01,0,,,"
    )
    reads = u.reads(f"{GR},GR-M1,2024-12-01,1500,", f"{GR},GR-M1,2026-03-01,2000,")
    [early] = reads.first_rejections
    assert (early.line, early.column) == (2, "read_on")
    assert "before the first tariff of grafton-sewer (2025-01-01)" in early.reason
    intervals = u.interval(HEADER + f"{PP},AMI-1,2015-05-31T12:00:00-05:00,1\n{PP},AMI-1,{stamp(0)},1\n")
    [old] = intervals.first_rejections
    assert (
        old.column == "interval_start" and "before the first tariff of pleasant-prairie-sewer" in old.reason
    )
    assert intervals.accepted == 1


def test_install_and_removal_dates_and_sizes_are_those_the_world_allows() -> None:
    """Before: a size the tenant's tariff does not list, or an install years ahead, was accepted."""
    u = Utility(today=date(2026, 4, 10))
    u.rules = rules(u.today)
    result = u.meters(
        f"{GR},GR-M1,GR-1,water,gal,6,2028-01-01,0,5/8,,",  # installed beyond a year ahead
        f"{GR},GR-M2,GR-2,water,gal,6,2026-01-01,0,5/8,2025-12-01,10",  # removed before installed
        f"{GR},GR-M3,GR-3,water,gal,6,2026-01-01,0,7/8,,",  # no such size
        f"{PP},PP-M4,PP-4,water,gal,6,2026-01-01,0,3/4,,",  # in the tariff in force
        f"{GR},GR-M5,GR-5,water,gal,6,2026-01-01,0,1-1/2,,",
    )
    assert [(r.line, r.column) for r in result.first_rejections] == [
        (2, "installed_on"),
        (3, "removed_on"),
        (4, "size"),
    ]
    assert "more than 366 days after today" in result.first_rejections[0].reason
    assert "grafton-sewer's tariff" in result.first_rejections[2].reason
    assert result.accepted == 2


def test_the_tariffs_meter_sizes_include_zones_and_aliases() -> None:
    book = load_tariff_book(TARIFFS)
    pp_2015 = composition.tariff_sizes(book.in_force(PP, date(2016, 1, 1)))
    assert "3/4" in pp_2015 and "7/8" not in pp_2015  # 3/4 is an alias of 5/8 in 2015
    assert composition.tariff_sizes(book.in_force(GR, date(2026, 1, 1))) >= {"5/8", "6"}


def test_an_interval_file_refused_for_the_future_is_taken_in_when_sent_again_later() -> None:
    """Before: the second upload was a duplicate file, its intervals never taken in."""
    u = utility(today=date(2026, 4, 1))
    text = HEADER + f"{PP},AMI-1,{stamp(0)},1\n{PP},AMI-1,{stamp(1)},2\n"
    early = u.interval(text, now=T0 - timedelta(hours=1))
    assert (early.accepted, early.rejected) == (0, 2) and "in the future" in early.first_rejections[0].reason
    later = u.interval(text, now=T0 + timedelta(days=1))
    assert (later.duplicate_file, later.accepted, later.rejected) == (False, 2, 0)
    assert day_of(u) == (Decimal(3), 2)
    again = u.interval(text, now=T0 + timedelta(days=2))
    assert (again.duplicate_file, again.repeated) == (True, 2)


def test_a_meter_installed_after_today_is_registered_when_the_file_is_sent_again() -> None:
    u = utility(today=date(2026, 4, 10))
    text = METERS_HEADER + f"{GR},GR-M7,GR-7,water,gal,6,2026-05-01,0,5/8,,\n"
    early = u.upload("meters", text)
    assert (early.accepted, early.rejected) == (0, 1) and early.first_rejections[0].column == "installed_on"
    u.today = date(2026, 5, 2)
    later = u.upload("meters", text)
    assert (later.duplicate_file, later.accepted) == (False, 1)
