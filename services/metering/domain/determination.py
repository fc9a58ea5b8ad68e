"""Consumption per billing period from the register series (X-READS, X-PERIOD, PP-SEW-FLOW).

Periods are half-open ``[start, end)`` and follow the tenant's cycle: one month for the
Pleasant Prairie tenants, three (January, April, July, October) for Grafton and Sullivan
(``billing_period_months`` of the tariff). An account's first period is the one holding
its earliest meter install; a period is determined once every meter that counts in it has
a point on or after its end (or was removed with its final reading inside it).

Each meter's use in a period is ``cum(min(end, removed)) - cum(max(start, installed))``.
A boundary that falls between two points is prorated by days (interpolated on the
cumulative gallons) and kept as a ``prorated`` point, so the next period starts from the
very same value: consecutive periods sum to the register's total advance (the property
test checks it). Across an exchange the old meter's final reading and the new meter's
initial one are points like any other, so the sum over both meters is the account's use.

PP-SEW-FLOW: where the account has a waste-discharge meter in the period, its volume
replaces the water meters'. Flow monitors (satellite systems) never count here; their
interval data is aggregated separately (``interval``).

X-PERIOD: a period with no usable read ``read_window_days`` after its end is estimated:
the average daily use of the same period last year, else of the last three periods,
times the period's days; the estimate becomes an ``estimated`` point at the period's end
and the consumption is marked estimated. Without any history nothing can be estimated and
the period stays open (reported by the caller). When a real reading later arrives after
the estimate, the estimate is replaced by proration between the real readings around it
(``readings``) and ``redetermine`` publishes the estimated periods again, corrected.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

from common.dates import add_months
from metering.domain.model import AccountMetering, MeterSeries, PeriodUse, Point
from metering.domain.readings import daily_average, insert_point

INTERPOLATION_QUANTUM = Decimal("0.001")  # a prorated boundary is carried to 1/1000 gallon


@dataclass(frozen=True)
class TenantSettings:
    """The tariff's metering settings for a tenant (infra/tariffs, ``metering`` section)."""

    period_months: int
    read_window_days: int = 5
    high_low_factor: Decimal = Decimal(3)
    winter_average: bool = False


@dataclass(frozen=True)
class MeterShare:
    meter_id: str
    kind: str
    volume_gal: Decimal
    quality: str
    start: Point
    end: Point


@dataclass(frozen=True)
class Determined:
    """One period's consumption, ready to become ``ConsumptionDetermined``."""

    tenant: str
    account_id: str
    period_start: date
    period_end: date
    volume_gal: Decimal
    quality: str
    shares: tuple[MeterShare, ...]
    flags: tuple[str, ...]
    winter_average_gal: Decimal | None


def period_containing(day: date, months: int) -> tuple[date, date]:
    month0 = (day.month - 1) // months * months
    start = date(day.year, month0 + 1, 1)
    return start, add_months(start, months)


def _counting(account: AccountMetering, start: date, end: date) -> list[MeterSeries]:
    active = [
        s for s in account.series.values() if s.meter.active_in(start, end) and s.meter.kind != "flow-monitor"
    ]
    waste = [s for s in active if s.meter.kind == "waste"]
    return waste or active


def cum_at(series: MeterSeries, day: date) -> tuple[Point, bool] | None:
    """The register at ``day``: an existing point, or one interpolated by days (prorated)."""
    exact = series.point_on(day)
    if exact is not None:
        return exact, False
    before, after = series.before(day), series.after(day)
    if before is None or after is None:
        return None
    span = (after.on - before.on).days
    cum = before.cum_gal + (after.cum_gal - before.cum_gal) * (day - before.on).days / span
    cum = cum.quantize(INTERPOLATION_QUANTUM, rounding=ROUND_HALF_UP)
    meter = series.meter
    reading = (before.reading + (cum - before.cum_gal) / meter.gallons_per_unit) % meter.capacity
    return Point(day, reading.quantize(INTERPOLATION_QUANTUM, rounding=ROUND_HALF_UP), "prorated", cum), True


def determine(
    account: AccountMetering, settings: TenantSettings, *, today: date, estimate: bool = False
) -> list[Determined]:
    """Every period that can now be determined, in order; updates ``account`` in place.

    With ``estimate`` (the daily estimation run), a period still without a usable read
    ``read_window_days`` after its end is estimated; a file's reads never estimate.
    """
    found: list[Determined] = []
    for start, end in _open_periods(account, settings):
        counting = _counting(account, start, end)
        if not counting:
            break
        uncovered = [s for s in counting if not s.covers(min(end, s.meter.removed_on or end))]
        if uncovered:
            if (
                not estimate
                or today < end + timedelta(days=settings.read_window_days)
                or not _estimate(account, uncovered, start, end)
            ):
                break
        found.append(_determine_period(account, counting, start, end, settings))
    account.trim()
    return found


def next_estimate_on(account: AccountMetering, settings: TenantSettings, *, today: date) -> date | None:
    """The first day after ``today`` on which the daily run's ``determine(estimate=True)``
    can determine a period of this account as it stands after today's run, or None until
    something is written to it (a read, a meter): its first open period, read to its end by
    no meter, is estimated once ``read_window_days`` have passed; one whose window passed
    and could not be estimated waits for a write (a read, the history an estimate needs)."""
    for start, end in _open_periods(account, settings):
        counting = _counting(account, start, end)
        if not counting:
            return None
        if all(s.covers(min(end, s.meter.removed_on or end)) for s in counting):
            return today + timedelta(days=1)  # determinable now (not after a run: be safe)
        due = end + timedelta(days=settings.read_window_days)
        return due if due > today else None
    return None


def _open_periods(account: AccountMetering, settings: TenantSettings) -> Iterator[tuple[date, date]]:
    installs = [s.meter.installed_on for s in account.series.values()]
    if not installs:
        return
    start = account.last_period_end or period_containing(min(installs), settings.period_months)[0]
    while True:
        end = add_months(start, settings.period_months)
        yield start, end
        start = end


def _estimate(account: AccountMetering, uncovered: list[MeterSeries], start: date, end: date) -> bool:
    last_year = add_months(start, -12), add_months(end, -12)
    same = [h for h in account.history if (h.start, h.end) == last_year]
    daily = same[0].volume_gal / same[0].days if same and same[0].days else daily_average(account.history)
    if daily is None:
        return False
    for series in uncovered:
        last = series.last()
        if last is None:
            return False
        gallons = daily * (end - last.on).days
        meter = series.meter
        cum = (last.cum_gal + gallons).quantize(INTERPOLATION_QUANTUM, rounding=ROUND_HALF_UP)
        units = (cum - last.cum_gal) / meter.gallons_per_unit
        reading = ((last.reading + units) % meter.capacity).quantize(
            INTERPOLATION_QUANTUM, rounding=ROUND_HALF_UP
        )
        rolled = last.reading + units >= meter.capacity
        insert_point(series, Point(end, reading, "estimated", cum, rolled))
    return True


def redetermine(
    account: AccountMetering, settings: TenantSettings, replaced: Iterable[tuple[str, date, date]]
) -> list[Determined]:
    """X-PERIOD, X-IMMUTABLE: the determined periods whose estimates a real reading replaced.

    ``replaced`` holds (meter id, last real reading before the estimates, the new reading's
    day), from ``readings.Accepted.replaced_after``. Each period of the account's history
    that the meter counts in and that overlaps that span is measured again from the
    re-derived (prorated) points and returned flagged ``estimate_replaced``: the same
    business key as the estimated determination, which it supersedes (billing books the
    difference on the issued bill as an adjustment). The history keeps the corrected
    volume, so later estimates and high/low checks use it.
    """
    spans = list(replaced)
    found: list[Determined] = []
    for i, period in enumerate(account.history):
        counting = _counting(account, period.start, period.end)
        ids = {s.meter.meter_id for s in counting}
        if not any(m in ids and period.end > since and period.start < until for m, since, until in spans):
            continue
        again = _measure(account, counting, period.start, period.end, settings, account.history[:i])
        found.append(replace(again, flags=tuple(sorted({*again.flags, "estimate_replaced"}))))
        account.history[i] = PeriodUse(period.start, period.end, again.volume_gal)
    return found


def _determine_period(
    account: AccountMetering, counting: list[MeterSeries], start: date, end: date, settings: TenantSettings
) -> Determined:
    found = _measure(account, counting, start, end, settings, account.history)
    account.history.append(PeriodUse(start, end, found.volume_gal))
    account.last_period_end = end
    return found


def _measure(
    account: AccountMetering,
    counting: list[MeterSeries],
    start: date,
    end: date,
    settings: TenantSettings,
    history: list[PeriodUse],
) -> Determined:
    """The period's consumption from the series' points (inserting interpolated boundaries)."""
    shares: list[MeterShare] = []
    flags: set[str] = set()
    for series in counting:
        meter = series.meter
        lo = max(start, meter.installed_on)
        hi = min(end, meter.removed_on) if meter.removed_on else end
        at_lo, at_hi = cum_at(series, lo), cum_at(series, hi)
        if at_lo is None or at_hi is None:  # cannot happen once covered; fail loudly if it does
            raise ValueError(f"meter {meter.meter_id} has no register value for {lo} or {hi}")
        (p_lo, interp_lo), (p_hi, interp_hi) = at_lo, at_hi
        for point, interpolated in ((p_lo, interp_lo), (p_hi, interp_hi)):
            if interpolated:
                insert_point(series, point)
        used = [p for p in series.points if lo <= p.on <= hi]
        if any(p.rollover for p in used if p.on > lo):
            flags.add("rollover")
        types = {p.type for p in used}
        quality = (
            "estimated"
            if "estimated" in types
            else "prorated"
            if interp_lo or interp_hi or "prorated" in {p_lo.type, p_hi.type}
            else "actual"
        )
        volume = p_hi.cum_gal - p_lo.cum_gal
        if volume < 0:  # not reachable since a real read replaces the estimates before it; never negative
            volume = Decimal(0)
        shares.append(MeterShare(meter.meter_id, meter.kind, volume, quality, p_lo, p_hi))
    volume = sum((s.volume_gal for s in shares), Decimal(0))
    quality = next((q for q in ("estimated", "prorated") if any(s.quality == q for s in shares)), "actual")
    if len(shares) > 1 or any(s.meter.removed_on and start < s.meter.removed_on < end for s in counting):
        flags.add("exchange")
    if any(s.kind == "waste" for s in shares):
        flags.add("waste_meter")
    days = (end - start).days
    average = daily_average(history)
    if volume == 0:
        flags.add("zero_use")
    elif average is not None and average > 0:
        daily = volume / days
        if daily > average * settings.high_low_factor:
            flags.add("high_use")
        elif daily < average / settings.high_low_factor:
            flags.add("low_use")
    winter = winter_average(account, start) if settings.winter_average else None
    return Determined(
        tenant=account.tenant,
        account_id=account.account_id,
        period_start=start,
        period_end=end,
        volume_gal=volume,
        quality=quality,
        shares=tuple(shares),
        flags=tuple(sorted(flags)),
        winter_average_gal=winter,
    )


def winter_average(account: AccountMetering, before: date) -> Decimal | None:
    """PP-SEW-WINTER: average monthly use of the most recent January-March ending by ``before``."""
    by_start = {h.start: h.volume_gal for h in account.history if (h.end - h.start).days <= 31}
    for year in range(before.year, before.year - 2, -1):
        months = [date(year, m, 1) for m in (1, 2, 3)]
        if date(year, 4, 1) <= before and all(m in by_start for m in months):
            return sum((by_start[m] for m in months), Decimal(0)) / 3
    return None
