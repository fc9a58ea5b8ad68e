"""Validating a register reading against its meter and the account's history (X-READS).

Utilities' practice, rule by rule:

- a reading before the meter's install date, after its removal, or in the future is
  rejected; so is one with more digits than the register;
- the same meter, day and reading again is a duplicate: ignored; the same meter and day
  with another reading is rejected with both values (CONTRACTS.md: conflicts are reported
  with both values);
- a reading below the previous one is a rollover when ``10^digits - previous + new`` is a
  plausible use: within the account's high bound (the tenant's factor times the account's
  own average daily use, over the days between the reads). Without history
  (interpretation) a wrap of at most a tenth of the register's capacity is plausible.
  Anything else below the previous reading is rejected, never turned into negative use;
- a reading dated between two points of a period not yet determined is inserted in date
  order; one dated on or before the end of a period already determined is rejected (a
  correction is an adjustment on the bill, X-IMMUTABLE, not a silent change of use);
- an estimate is replaced, as utilities do, by the next actual reading (X-PERIOD): a real
  reading dated after estimated points (or on the date of the last one) is measured from
  the last real reading before them, and every estimated or prorated point in between is
  re-derived by proration on days between those two real readings (quality ``prorated``).
  The caller re-determines the periods those points bound (``Accepted.replaced_after``), so
  an over-estimate is given back to the estimated periods instead of being lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from metering.domain.model import AccountMetering, MeterSeries, PeriodUse, Point, PointType

NO_HISTORY_WRAP_SHARE = Decimal("0.1")
INTERPOLATION_QUANTUM = Decimal("0.001")  # a prorated point is carried to 1/1000 gallon
# Points a real reading replaces: estimates, and the values interpolated from them.
REPLACEABLE: frozenset[str] = frozenset({"estimated", "prorated"})


@dataclass(frozen=True)
class Reading:
    tenant: str
    meter_id: str
    read_on: date
    reading: Decimal
    read_type: PointType = "actual"
    line: int = 0


@dataclass(frozen=True)
class Refused:
    column: str
    reason: str


@dataclass(frozen=True)
class Duplicate:
    pass


@dataclass(frozen=True)
class Accepted:
    point: Point
    # the last real reading before ``point`` when estimates after it were replaced by proration
    replaced_after: date | None = None


Outcome = Accepted | Duplicate | Refused


def daily_average(history: Sequence[PeriodUse], periods: int = 3) -> Decimal | None:
    """Average daily gallons of the last ``periods`` determined periods of ``history``."""
    recent = history[-periods:]
    days = sum(h.days for h in recent)
    if not recent or days == 0:
        return None
    return sum((h.volume_gal for h in recent), Decimal(0)) / days


def advance_units(
    series: MeterSeries, previous: Point, reading: Decimal, days: int, high_daily_gal: Decimal | None
) -> tuple[Decimal, bool] | Refused:
    """Register units used from ``previous`` to ``reading``, and whether it rolled over."""
    if reading >= previous.reading:
        return reading - previous.reading, False
    meter = series.meter
    wrapped = meter.capacity - previous.reading + reading
    wrapped_gal = wrapped * meter.gallons_per_unit
    if high_daily_gal is not None:
        plausible = wrapped_gal <= high_daily_gal * max(days, 1)
        bound = f"the account's high bound of {high_daily_gal * max(days, 1):.0f} gal for {days} days"
    else:
        plausible = wrapped <= meter.capacity * NO_HISTORY_WRAP_SHARE
        bound = f"a tenth of the {meter.digits}-digit register without history"
    if plausible:
        return wrapped, True
    return Refused(
        "reading",
        f"{reading} is below the previous reading {previous.reading} on {previous.on} and a rollover "
        f"({meter.capacity} - {previous.reading} + {reading} = {wrapped}) exceeds {bound}",
    )


def apply_reading(
    account: AccountMetering, series: MeterSeries, read: Reading, *, today: date, factor: Decimal
) -> Outcome:
    """Check ``read`` and, if it is accepted, insert its point into ``series`` (in place)."""
    meter = series.meter
    if read.read_on > today:
        return Refused("read_on", f"{read.read_on} is in the future (today is {today})")
    if read.read_on < meter.installed_on:
        return Refused("read_on", f"{read.read_on} is before the meter was installed on {meter.installed_on}")
    if meter.removed_on is not None and read.read_on > meter.removed_on:
        return Refused("read_on", f"{read.read_on} is after the meter was removed on {meter.removed_on}")
    if read.reading >= meter.capacity:
        return Refused(
            "reading", f"{read.reading} has more digits than the meter's {meter.digits}-digit register"
        )
    existing = series.point_on(read.read_on)
    real = read.read_type != "estimated"
    # an actual read on the day of the latest estimate takes its place (X-PERIOD)
    replaces_estimate = (
        real and existing is not None and existing.type == "estimated" and series.after(read.read_on) is None
    )
    if existing is not None and existing.type not in ("prorated",) and not replaces_estimate:
        if existing.reading == read.reading:
            return Duplicate()
        return Refused(
            "reading",
            f"conflicts with the reading already recorded for {read.read_on}: got {read.reading}, "
            f"recorded {existing.reading} ({existing.type})",
        )
    if (
        account.last_period_end is not None
        and read.read_on <= account.last_period_end
        and not replaces_estimate
    ):
        return Refused(
            "read_on",
            f"{read.read_on} falls in a period already determined (through {account.last_period_end}); "
            "a correction is an adjustment",
        )
    average = daily_average(account.history)
    high = average * factor if average is not None and average > 0 else None
    previous = series.before(read.read_on, readings_only=True)
    anchor = _last_real(series, read.read_on) if real else None
    if anchor is not None:
        previous = anchor  # measured from the last real reading, never from an estimate
    if previous is None:
        return Refused("read_on", f"no earlier reading of meter {meter.meter_id} to measure from")
    step = advance_units(series, previous, read.reading, (read.read_on - previous.on).days, high)
    if isinstance(step, Refused):
        return step
    units, rolled = step
    following = series.after(read.read_on)
    if following is not None:
        nxt = advance_units(
            series,
            Point(read.read_on, read.reading, read.read_type, Decimal(0)),
            following.reading,
            (following.on - read.read_on).days,
            high,
        )
        if isinstance(nxt, Refused):
            return Refused(
                "reading", f"{read.reading} is above the later reading {following.reading} on {following.on}"
            )
    point = Point(
        read.read_on, read.reading, read.read_type, previous.cum_gal + units * meter.gallons_per_unit, rolled
    )
    replaced = anchor is not None and _replace_estimates(series, anchor, point)
    if replaced:  # the wrap, if any, now falls in the segment from the point just before
        before = series.before(read.read_on)
        point = replace(point, rollover=before is not None and point.reading < before.reading)
    insert_point(series, point, high)
    return Accepted(point, anchor.on if replaced and anchor is not None else None)


def _last_real(series: MeterSeries, day: date) -> Point | None:
    found = None
    for p in series.points:
        if p.on >= day:
            break
        if p.type not in REPLACEABLE:
            found = p
    return found


def _replace_estimates(series: MeterSeries, anchor: Point, actual: Point) -> bool:
    """Re-derive every estimated or prorated point between two real readings by days.

    ``actual.cum_gal`` is measured from ``anchor``, so the points in between telescope: the
    periods they bound sum to the register's advance between the two readings. Returns
    whether an estimate was replaced (a prorated point alone changes nothing: it was
    interpolated between these same readings).
    """
    between = [p for p in series.points if anchor.on < p.on < actual.on]
    on_day = series.point_on(actual.on)
    if not any(p.type == "estimated" for p in between) and (on_day is None or on_day.type != "estimated"):
        return False
    meter = series.meter
    span = (actual.on - anchor.on).days
    advance = actual.cum_gal - anchor.cum_gal
    derived: dict[date, Point] = {}
    previous_reading = anchor.reading
    for p in between:
        cum = (anchor.cum_gal + advance * (p.on - anchor.on).days / span).quantize(
            INTERPOLATION_QUANTUM, rounding=ROUND_HALF_UP
        )
        reading = (
            (anchor.reading + (cum - anchor.cum_gal) / meter.gallons_per_unit) % meter.capacity
        ).quantize(INTERPOLATION_QUANTUM, rounding=ROUND_HALF_UP)
        derived[p.on] = Point(p.on, reading, "prorated", cum, reading < previous_reading)
        previous_reading = reading
    series.points = [derived.get(p.on, p) for p in series.points]
    return True


def insert_point(series: MeterSeries, point: Point, high: Decimal | None = None) -> None:
    """Insert ``point`` in date order and recompute the cumulative gallons after it."""
    points = [p for p in series.points if p.on != point.on]
    points.append(point)
    points.sort(key=lambda p: p.on)
    i = points.index(point)
    for j in range(i + 1, len(points)):
        prev, cur = points[j - 1], points[j]
        step = advance_units(series, prev, cur.reading, (cur.on - prev.on).days, high)
        units, rolled = step if not isinstance(step, Refused) else (cur.reading - prev.reading, False)
        points[j] = Point(
            cur.on, cur.reading, cur.type, prev.cum_gal + units * series.meter.gallons_per_unit, rolled
        )
    series.points = points
