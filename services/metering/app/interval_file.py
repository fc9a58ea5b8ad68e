"""An interval file (``reads/interval/``): 5-minute volumes are facts, kept per meter-day.

The file is streamed into open meter-days (``metering.domain.interval.aggregate``); every
``flush_days`` of them are merged with what the table holds and written. Per interval:

- not held yet: ``accepted``, stored with this file, its pass and the line;
- held with the same volume: ``repeated``, unless this pass of this file stored it from this
  very line (its crashed delivery): then ``accepted``, as the run without the crash says;
- held with another volume: ``rejected`` with both values.

A day's sums (gallons, intervals, peak) are derived from all of its stored intervals: a
second file adds to the first, never replaces it. Refusals that can change (an interval in
the future, a meter not registered yet) make the file's record not final (``core``).
Rejections are reported as they are found (``Run.report_now``): none are held in memory.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from metering.app.core import (
    IDS,
    MAX_INTERVAL_FILE_BYTES,
    FieldRules,
    IngestResult,
    MeteringRepository,
    ObjectMissing,
    RejectionReport,
    Run,
    UploadedFile,
    duplicate,
    file_rejected,
    finish,
    start,
)
from metering.domain import csvinput as cin
from metering.domain.interval import (
    FLUSH_DAYS,
    UTILITY_TZ,
    DayIntervals,
    DayKey,
    StoredDay,
    aggregate,
    conflict,
    month_of,
    previous_month,
)
from metering.events import LineRejection, SatelliteFlowReady, SlugDetected

SAT_FLOW_DAYS = 18  # PP-SEW-SAT-FLOW: provided to the satellite system within 18 days of download


def take_in_interval_file(
    file: UploadedFile,
    *,
    chunks: Iterable[bytes],
    repo: MeteringRepository,
    report: RejectionReport,
    tenants: Sequence[str],
    now: datetime,
    rules: FieldRules | None = None,
    flush_days: int = FLUSH_DAYS,
) -> IngestResult:
    """An interval file: its intervals merged into the stored days, ``SlugDetected``, a report."""
    is_duplicate, before = start(file, repo)
    if is_duplicate:
        return duplicate(file, before)
    run = Run(file, report, pass_=before.passes if before else 0)
    if file.size > MAX_INTERVAL_FILE_BYTES:
        file_rejected(run, f"larger than {MAX_INTERVAL_FILE_BYTES} bytes")
    else:
        source = f"{file.file_id}@{run.pass_}"

        def reject(found: LineRejection) -> None:
            changeable = found.column == "meter_id" and found.reason.startswith("unknown meter")
            changeable |= found.column == "interval_start" and "in the future" in found.reason
            run.report_now(found, may_change=changeable)

        def merge(days: dict[DayKey, DayIntervals]) -> None:
            stored = repo.interval_days(days)
            changed: dict[DayKey, StoredDay] = {}
            for key, given in days.items():
                day = stored.get(key) or StoredDay(given.units)
                new = False
                for slot, (volume, line) in given.intervals.items():
                    have = day.intervals.get(slot)
                    if have is None:
                        day.intervals[slot] = (volume, source, line)
                        run.counts.accepted += 1
                        new = True
                    elif have[0] == volume:
                        if have[1] == source and have[2] == line:
                            run.counts.accepted += 1  # this pass's crashed delivery stored it
                        else:
                            run.counts.repeated += 1
                    else:
                        had_line = have[2] if have[1].startswith(f"{file.file_id}@") else None
                        run.report_now(conflict(line, key[1], slot, have[0], had_line, volume))
                if new:
                    changed[key] = day
            repo.save_days(changed, file_id=file.file_id, now=now)

        try:
            result = aggregate(
                chunks,
                meters=repo.interval_meters,
                tenants=tenants,
                now=now,
                reject=reject,
                first={t: rules.first(t) for t in tenants} if rules else None,
                flush=merge,
                flush_days=flush_days,
                flush_slugs=lambda slugs: repo.save_events([slug_event(s, now) for s in slugs], now=now),
            )
            run.counts.lines += result.rows
            run.counts.repeated += result.repeated
        except (cin.FileRejected, ObjectMissing) as exc:
            # the file stops here: the lines decided so far stand, the rest is the one rejection
            c = run.counts
            c.lines = c.accepted + c.repeated + c.changed + c.rejected + c.waiting + len(run.pending)
            if isinstance(exc, cin.FileRejected):
                file_rejected(run, exc.rejection.reason, exc.rejection.line, exc.rejection.column)
            else:
                file_rejected(run, str(exc))
    run.flush()
    return finish(file, "interval", run, repo, report, now, before)


def slug_event(slug: Any, now: datetime) -> SlugDetected:
    first = slug.first.isoformat()
    return SlugDetected(
        event_id=str(uuid.uuid5(IDS, f"slug#{slug.tenant}#{slug.meter_id}#{first}")),
        occurred_at=now,
        tenant=slug.tenant,
        meter_id=slug.meter_id,
        account_id=slug.account_id or None,
        interval_start=first,
        interval_end=slug.last.isoformat(),
        intervals=slug.intervals,
        volume_gal=slug.volume_gal,
        threshold_gal=slug.threshold_gal.quantize(Decimal("0.001")),
    )


def publish_satellite_flow(*, repo: MeteringRepository, now: datetime) -> int:
    """PP-SEW-SAT-FLOW: last month's flow of every flow monitor, as ``SatelliteFlowReady``.

    Run daily; the month's totals are published on the first run of the next month (the
    download) and are due 18 days later. Deterministic event ids make later runs no-ops.
    """
    today = now.astimezone(UTILITY_TZ).date()
    first, end = previous_month(today)
    events = []
    for meter in repo.flow_monitors():
        volume, days = repo.month_volume(meter, first, end)
        if days == 0:
            continue
        month = month_of(first)
        events.append(
            SatelliteFlowReady(
                event_id=str(uuid.uuid5(IDS, f"satflow#{meter.tenant}#{meter.meter_id}#{month}")),
                occurred_at=now,
                tenant=meter.tenant,
                meter_id=meter.meter_id,
                account_id=meter.account_id,
                month=month,
                volume_gal=volume,
                days_with_data=days,
                downloaded_on=today,
                provide_by=today + timedelta(days=SAT_FLOW_DAYS),
            )
        )
    repo.save_events(events, now=now)
    return len(events)
