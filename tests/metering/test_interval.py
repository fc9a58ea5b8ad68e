"""Interval data: one item per meter per local day (X-READS), slugs (X-SLUG), satellite flow (PP-SEW-SAT-FLOW)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from support import Utility

from metering.app.ingest import publish_satellite_flow
from metering.events import SatelliteFlowReady, SlugDetected

PP = "pleasant-prairie-sewer"
HEADER = "tenant,meter_id,interval_start,volume\n"
T0 = datetime(2026, 4, 1, 0, 0, tzinfo=UTC)


def utility(today: date = date(2026, 4, 10)) -> Utility:
    u = Utility(today=today)
    u.meters(
        f"{PP},FM-1,SAT-1,flow-monitor,cf,9,2026-01-01,0,,,", f"{PP},AMI-1,PP-1,water,gal,9,2026-01-01,0,,,"
    )
    return u


def rows(meter: str, volumes: list[str], start: datetime = T0) -> str:
    return "".join(
        f"{PP},{meter},{(start + timedelta(minutes=5 * i)).isoformat()},{v}\n" for i, v in enumerate(volumes)
    )


def test_intervals_sum_to_one_item_per_meter_per_local_day() -> None:
    u = utility()
    # 2026-04-01T04:55Z is 23:55 CDT on March 31; 05:00Z is midnight April 1 in Chicago
    result = u.interval(HEADER + rows("AMI-1", ["1"] * 12, start=T0 + timedelta(hours=4, minutes=5)))
    assert result.accepted == 12 and result.rejected == 0
    days = {day: (d.volume_gal, d.intervals) for (_, _, day), d in u.repo.days.items()}
    assert days == {date(2026, 3, 31): (Decimal(11), 11), date(2026, 4, 1): (Decimal(1), 1)}


def test_flow_monitor_volumes_are_converted_to_gallons_once() -> None:
    u = utility()
    u.interval(HEADER + rows("FM-1", ["2", "0.5"], start=T0 + timedelta(hours=12)))
    [day] = u.repo.days.values()
    assert day.volume_gal == Decimal("2.5") * Decimal("7.48052")  # 18.7013 gal


def test_bad_interval_rows_are_rejected_by_line_and_the_rest_kept() -> None:
    u = utility()
    result = u.interval(
        HEADER
        + f"{PP},AMI-1,2026-04-01T12:00:00+00:00,1\n"
        + f"{PP},NOPE,2026-04-01T12:05:00+00:00,1\n"
        + f"{PP},AMI-1,2026-04-01T12:07:00+00:00,1\n"
        + f"{PP},AMI-1,2026-04-01T12:10:00,1\n"
        + f"{PP},AMI-1,2100-04-01T12:10:00+00:00,1\n"
        + f"{PP},AMI-1,2026-04-01T12:15:00+00:00,{'9' * 40}\n"
        + f"{PP},AMI-1,2026-04-01T12:20:00+00:00,-3\n"
    )
    assert result.accepted == 1
    assert [(r.line, r.column) for r in result.first_rejections] == [
        (3, "meter_id"),
        (4, "interval_start"),
        (5, "interval_start"),
        (6, "interval_start"),
        (7, "volume"),
        (8, "volume"),
    ]


def test_a_quoted_meter_id_across_two_lines_is_rejected_not_joined_into_another_meter() -> None:
    """ "AMI-<newline>1" is not the meter AMI-1 (csvinput's lines keep their newline)."""
    u = utility()
    result = u.interval(
        HEADER + f'{PP},"AMI-\n1",2026-04-01T12:00:00+00:00,7\n' + f"{PP},AMI-1,2026-04-01T12:05:00+00:00,1\n"
    )
    assert (result.accepted, result.rejected) == (1, 1)
    assert [(r.line, r.column) for r in result.first_rejections] == [(3, "meter_id")]
    assert [d.volume_gal for d in u.repo.days.values()] == [Decimal(1)]


def test_more_than_three_intervals_above_five_times_the_trailing_mean_is_a_slug() -> None:
    u = utility()
    baseline = ["10"] * 288  # 24 hours at 10 gal per 5 minutes
    spike = ["60", "60", "60", "60", "10"]  # 4 intervals (20 minutes) above 5 x 10
    short = ["60", "60", "60", "10"]  # 3 intervals (15 minutes): not a slug
    u.interval(HEADER + rows("AMI-1", baseline + short + spike))
    [slug] = [e for e in u.repo.events if isinstance(e, SlugDetected)]
    first = T0 + timedelta(minutes=5 * (288 + 4))
    assert (slug.meter_id, slug.account_id, slug.intervals) == ("AMI-1", "PP-1", 4)
    assert slug.interval_start == first.isoformat()
    assert slug.interval_end == (first + timedelta(minutes=20)).isoformat()
    assert slug.volume_gal == 240
    # the trailing 288 intervals hold the 3 short spikes: (284 x 10 + 3 x 60 + 10) / 288 x 5 = 52.604
    assert slug.threshold_gal == Decimal("52.604")


def test_a_satellite_systems_month_is_published_once_with_its_deadline() -> None:
    u = utility()
    u.interval(HEADER + rows("FM-1", ["1"] * 3, start=datetime(2026, 3, 10, 12, tzinfo=UTC)))
    now = datetime(2026, 4, 1, 12, tzinfo=UTC)
    assert publish_satellite_flow(repo=u.repo, now=now) == 1
    [flow] = [e for e in u.repo.events if isinstance(e, SatelliteFlowReady)]
    assert (flow.month, flow.volume_gal, flow.days_with_data) == ("2026-03", 3 * Decimal("7.48052"), 1)
    # PP-SEW-SAT-FLOW: provided within 18 days of the download
    assert flow.provide_by == date(2026, 4, 19)
    assert publish_satellite_flow(repo=u.repo, now=now + timedelta(days=1)) == 1
    again = [e for e in u.repo.events if isinstance(e, SatelliteFlowReady)]
    assert len({e.event_id for e in again}) == 1  # the same event id: the outbox publishes it once


def test_a_time_past_the_calendars_end_in_chicago_is_rejected_not_a_crash() -> None:
    u = utility()
    result = u.interval(
        HEADER
        + f"{PP},AMI-1,0001-01-01T00:05:00+01:00,1\n"  # 1 BC in UTC, before Python's calendar
        + f"{PP},AMI-1,9999-12-31T23:55:00-01:00,1\n"  # year 10000 in UTC
        + f"{PP},AMI-1,2026-04-01T12:00:00+00:00,1\n"
    )
    assert result.accepted == 1
    assert [(r.line, r.column, r.reason) for r in result.first_rejections] == [
        (2, "interval_start", "0001-01-01T00:05:00+01:00 is in the future or before 1990"),
        (3, "interval_start", "9999-12-31T23:55:00-01:00 is in the future or before 1990"),
    ]


def test_the_hour_repeated_when_clocks_fall_back_does_not_restart_the_slug_window() -> None:
    u = utility(today=date(2026, 11, 10))
    # 2026-11-01 07:00Z: 02:00 CDT becomes 01:00 CST. The 24-hour baseline runs from
    # 2026-10-31T08:00Z over the change; by wall clock 01:55 CDT is followed by 01:00 CST,
    # but by instant time moves on, so the baseline stands and the spike after it is a slug.
    start = datetime(2026, 10, 31, 8, 0, tzinfo=UTC)
    result = u.interval(HEADER + rows("AMI-1", ["10"] * 288 + ["60"] * 4 + ["10"], start=start))
    assert result.accepted == 293 and result.rejected == 0
    [slug] = [e for e in u.repo.events if isinstance(e, SlugDetected)]
    assert slug.interval_start == (start + timedelta(hours=24)).isoformat()
    assert (slug.intervals, slug.volume_gal) == (4, 240)
    assert slug.threshold_gal == 50  # 288 x 10 / 288 x 5
