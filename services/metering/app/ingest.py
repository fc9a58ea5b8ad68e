"""Use cases: take in a meters file, a register read file or one read (DESIGN "Flow").

A file is streamed and taken in ``batch_rows`` rows at a time: each batch reads the meters
and account states it needs (batched gets), applies its rows, determines every period that
became complete and writes the results (batched writes), so memory holds one batch whatever
the file's size (issue 7).

Write pattern (STYLE 17 and 18, for the services that follow). No transaction: every item
written is either a fact on its own or a projection of one, and the order makes a crash
harmless. Per batch: (1) each chunk of at most ``CHUNK_MAX`` consumptions as ONE outbox item
(``ConsumptionsDetermined``; the table's stream publishes it, and the item stays as the record
of the determinations: no second item per period), (2) the reads (accepted ones and failed
ones, flagged), (3) the meters' history, then the meters, (4) the account states. Event ids are derived from the file and the business key, so a
retry after a crash rewrites identical items: the stream sees a MODIFY, not an INSERT, and
publishes nothing twice. A file is recorded last, with its ``ReadsRejected`` summary; a
file already recorded (same content digest: S3's ETag of the same bytes) changes nothing.

A redelivery after a crash (issue 26) ends as the run without the crash would have, because
what it derives comes from what is stored, not from what the crashed delivery happened to
write first:

- a read that the account's state already holds, and that this file's own record of its
  lines (``READS#<file_id>``, written before the states) shows accepted at that line, was
  taken in by the crashed delivery: it is counted accepted again and recorded again, not
  "repeated"; its consumptions are stored already (chunks are written first);
- a meter whose item this file's same line wrote is counted accepted again, its history
  not written twice, and registered on its account if the crashed delivery stopped before
  the account's state;
- a chunk's number is its batch's (``batch * CHUNKS_PER_BATCH`` plus its place in the
  batch), not a count of what this delivery determined, so a batch that determines nothing
  again (its states were written) does not shift the next batch's chunks onto the numbers
  (and event ids) of chunks already published; and a batch that finds itself taken in
  before keeps the chunks already stored (``BatchOutput.redelivered``), which hold all of
  its consumptions, rather than rewrite them with the part it determines again.

Files of one function are taken in one at a time (the template feeds the function from a
FIFO queue with one message group), so account states are written without version conditions.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from itertools import islice
from typing import Any, Protocol

from common.errors import PermanentError
from common.events import Event
from common.ids import name_based_id
from common.tariffs import METER_SIZES
from metering.domain import csvinput as cin
from metering.domain.determination import (
    Determined,
    TenantSettings,
    determine,
    next_estimate_on,
    redetermine,
)
from metering.domain.interval import (
    UTILITY_TZ,
    DaySum,
    IntervalMeter,
    aggregate,
    month_of,
    previous_month,
)
from metering.domain.model import AccountMetering, Meter, MeterSeries, Point
from metering.domain.readings import Accepted, Duplicate, Reading, Refused, apply_reading
from metering.events import (
    CHUNK_MAX,
    REJECTIONS_IN_EVENT_MAX,
    ConsumptionDetermined,
    ConsumptionsDetermined,
    LineRejection,
    MeterUse,
    ReadsRejected,
    ReadUsed,
    SatelliteFlowReady,
    SlugDetected,
)

SAT_FLOW_DAYS = 18  # PP-SEW-SAT-FLOW: provided to the satellite system within 18 days of download

BATCH_ROWS = 1_000
# Chunk numbers a batch may use: a batch's chunks are numbered from ``batch * CHUNKS_PER_BATCH``
# (5 million consumptions a batch, far above what 1,000 rows determine; a 200 MB file's last
# chunk numbers stay under the 10**9 of metering's event-size bound).
CHUNKS_PER_BATCH = 100_000
MAX_FILE_BYTES = 200 * 1024 * 1024
MAX_INTERVAL_FILE_BYTES = 2 * 1024 * 1024 * 1024
MAX_DIGITS = 12
_IDS = uuid.UUID("6f0c3d52-5b0e-4c6e-9a43-0d8f1c2b7e11")

METERS_HEADER = cin.Header(
    columns=(
        "tenant",
        "meter_id",
        "account_id",
        "kind",
        "units",
        "digits",
        "installed_on",
        "initial_reading",
        "size",
        "removed_on",
        "final_reading",
    ),
    required=frozenset(
        {"tenant", "meter_id", "account_id", "kind", "units", "digits", "installed_on", "initial_reading"}
    ),
)
READS_HEADER = cin.Header(
    columns=("tenant", "meter_id", "read_on", "reading", "read_type"),
    required=frozenset({"tenant", "meter_id", "read_on", "reading"}),
)

AccountKey = tuple[str, str]
MeterKey = tuple[str, str]


class ObjectMissing(PermanentError):
    """The uploaded object is gone (deleted before we read it)."""


@dataclass(frozen=True)
class UploadedFile:
    bucket: str
    key: str
    etag: str
    size: int = 0

    @property
    def file_id(self) -> str:
        return f"etag-{self.etag}" if self.etag else f"key-{self.key}"


@dataclass(frozen=True)
class FailedRead:
    reading: Reading
    account_id: str
    column: str
    reason: str


@dataclass
class BatchOutput:
    """What one batch writes, in the order it is written (module doc)."""

    chunks: list[ConsumptionsDetermined] = field(default_factory=list)
    consumptions: list[ConsumptionDetermined] = field(default_factory=list)
    reads: list[tuple[Reading, str]] = field(default_factory=list)  # (read, account_id)
    failed_reads: list[FailedRead] = field(default_factory=list)
    meters: list[tuple[Meter, int]] = field(default_factory=list)  # (meter, line)
    accounts: list[AccountMetering] = field(default_factory=list)
    # an earlier delivery took some of this batch in (and so stored all of its chunks first):
    # chunks already stored are kept, not rewritten (module doc)
    redelivered: bool = False


class MeteringRepository(Protocol):
    def file_seen(self, file_id: str) -> bool: ...

    def meters(self, keys: Iterable[MeterKey]) -> dict[MeterKey, Meter]: ...

    def meters_taken_in(self, keys: Iterable[MeterKey], file_id: str) -> dict[MeterKey, int]:
        """The line of file ``file_id`` that wrote each of these meters as it is now, for the
        meters an earlier delivery of that file registered (a redelivery after a crash)."""
        ...

    def reads_taken_in(self, file_id: str, first_line: int, last_line: int) -> set[int]:
        """The lines in [first_line, last_line] of file ``file_id`` whose read an earlier
        delivery of the file accepted (its record of its lines, ``READS#<file_id>``)."""
        ...

    def meter_accounts(self, keys: Iterable[MeterKey]) -> dict[MeterKey, str]:
        """The account each registered meter is on (a read needs no more of the meter: the
        account's state holds its series)."""
        ...

    def accounts(self, keys: Iterable[AccountKey]) -> dict[AccountKey, AccountMetering]: ...

    def save(self, batch: BatchOutput, *, file_id: str, now: datetime) -> None:
        """Write the batch in the module's order (batched, idempotent)."""
        ...

    def record_file(
        self, file: UploadedFile, kind: str, accepted: int, rejected: ReadsRejected | None, now: datetime
    ) -> None: ...

    def all_account_keys(self) -> Iterator[AccountKey]: ...

    def interval_meters(self, keys: Iterable[MeterKey]) -> dict[MeterKey, IntervalMeter]: ...

    def save_days(self, days: dict[tuple[str, str, date], DaySum], *, file_id: str, now: datetime) -> None:
        """One item per meter per local day (replacing the day's earlier item)."""
        ...

    def save_events(self, events: Sequence[Event], *, now: datetime) -> None:
        """Outbox items (deterministic ids: rewriting one publishes nothing twice)."""
        ...

    def flow_monitors(self) -> Iterator[IntervalMeter]: ...

    def month_volume(self, meter: IntervalMeter, start: date, end: date) -> tuple[Decimal, int]:
        """Gallons and days with data of ``meter`` from its daily items in [start, end)."""
        ...


class RejectionReport(Protocol):
    def add(self, rejection: LineRejection) -> None: ...

    def finish(self) -> str | None:
        """Store the full report (if anything was added) and return its key."""
        ...


@dataclass(frozen=True)
class IngestResult:
    file_id: str
    duplicate_file: bool = False
    accepted: int = 0
    repeated: int = 0
    rejected: int = 0
    consumptions: int = 0
    report_key: str | None = None
    first_rejections: tuple[LineRejection, ...] = ()


Settings = Callable[[str], TenantSettings]


@dataclass
class _Run:
    """One file's progress: counts, the first rejections, chunk numbering."""

    file: UploadedFile
    report: RejectionReport
    accepted: int = 0
    repeated: int = 0
    rejected: int = 0
    consumptions: int = 0
    chunk_index: int = 0
    first: list[LineRejection] = field(default_factory=list)
    pending: list[LineRejection] = field(default_factory=list)

    def reject(self, rejection: LineRejection) -> None:
        self.pending.append(rejection)

    def flush(self) -> None:
        """Report the batch's rejections in line order."""
        for rejection in sorted(self.pending, key=lambda r: r.line):
            self.rejected += 1
            if len(self.first) < REJECTIONS_IN_EVENT_MAX:
                self.first.append(rejection)
            self.report.add(rejection)
        self.pending.clear()


# ---------------------------------------------------------------- the use cases


def take_in_file(
    file: UploadedFile,
    *,
    kind: str,
    chunks: Iterable[bytes],
    repo: MeteringRepository,
    report: RejectionReport,
    settings: Settings,
    tenants: Sequence[str],
    now: datetime,
    today: date,
    batch_rows: int = BATCH_ROWS,
) -> IngestResult:
    """Take in a ``meters`` or ``reads`` file (CONTRACTS.md "Import files")."""
    if repo.file_seen(file.file_id):
        return IngestResult(file_id=file.file_id, duplicate_file=True)
    run = _Run(file, report)
    header = METERS_HEADER if kind == "meters" else READS_HEADER
    if file.size > MAX_FILE_BYTES:
        run.reject(LineRejection(line=0, column="(file)", reason=f"larger than {MAX_FILE_BYTES} bytes"))
    else:
        try:
            rows = cin.rows(chunks, header)
            number = 0
            while batch := list(islice(rows, batch_rows)):
                run.chunk_index = number * CHUNKS_PER_BATCH  # the batch's own numbers (module doc)
                number += 1
                parsed = [r for r in batch if isinstance(r, cin.Row)]
                for r in batch:
                    if isinstance(r, LineRejection):
                        run.reject(r)
                if kind == "meters":
                    out = _meters_batch(parsed, run, repo, settings, tenants, now, today)
                else:
                    out = _reads_batch(
                        _parse_reads(parsed, run, tenants), run, repo, settings, now, today, file.file_id
                    )
                _publish(out, run, now)
                repo.save(out, file_id=file.file_id, now=now)
                run.flush()
        except cin.FileRejected as exc:
            run.reject(exc.rejection)
        except ObjectMissing as exc:
            run.reject(LineRejection(line=0, column="(file)", reason=str(exc)[:300]))
    run.flush()
    return _finish(file, kind, run, repo, report, now)


def _finish(
    file: UploadedFile, kind: str, run: _Run, repo: MeteringRepository, report: RejectionReport, now: datetime
) -> IngestResult:
    report_key = report.finish() if run.rejected else None
    summary = (
        ReadsRejected(
            event_id=str(uuid.uuid5(_IDS, f"rejected#{file.file_id}")),
            occurred_at=now,
            file_key=file.key[:1024],
            etag=file.etag[:128],
            file_id=file.file_id[:128],
            rejections=tuple(run.first),
            rejected_count=run.rejected,
            accepted_count=run.accepted,
            report_key=report_key,
        )
        if run.rejected
        else None
    )
    repo.record_file(file, kind, run.accepted, summary, now)
    return IngestResult(
        file_id=file.file_id,
        accepted=run.accepted,
        repeated=run.repeated,
        rejected=run.rejected,
        consumptions=run.consumptions,
        report_key=report_key,
        first_rejections=tuple(run.first),
    )


def take_in_read(
    read: Reading, *, source: str, repo: MeteringRepository, settings: Settings, now: datetime, today: date
) -> tuple[str, IngestResult]:
    """One read from the HTTP API: ``accepted``, ``duplicate`` or ``rejected`` (reason in the result)."""
    file = UploadedFile(bucket="", key=source, etag="")
    run = _Run(file, _NoReport())
    out = _reads_batch([read], run, repo, settings, now, today)
    _publish(out, run, now)
    repo.save(out, file_id=f"api-{source}", now=now)
    run.flush()
    status = "rejected" if run.rejected else "duplicate" if run.repeated else "accepted"
    return status, IngestResult(
        file_id=source,
        accepted=run.accepted,
        repeated=run.repeated,
        rejected=run.rejected,
        consumptions=run.consumptions,
        first_rejections=tuple(run.first),
    )


def estimate_missing(
    *,
    repo: MeteringRepository,
    settings: Settings,
    now: datetime,
    today: date,
    run_id: str,
    next_on: list[date | None] | None = None,
) -> int:
    """X-PERIOD: determine (estimating where the read window has passed) every open period.
    With ``next_on``, each account's next day with work is added to it (``next_estimate_on``)."""
    run = _Run(UploadedFile(bucket="", key=f"schedule:estimate/{run_id}", etag=""), _NoReport())
    keys = repo.all_account_keys()
    total = 0
    number = 0
    while batch := list(islice(keys, BATCH_ROWS)):
        run.chunk_index = number * CHUNKS_PER_BATCH  # the batch's own numbers (module doc)
        number += 1
        out = BatchOutput()
        for account in repo.accounts(batch).values():
            found = determine(account, settings(account.tenant), today=today, estimate=True)
            if next_on is not None:
                next_on.append(next_estimate_on(account, settings(account.tenant), today=today))
            if found:
                out.consumptions.extend(_event(d, run.file.key, f"estimate#{run_id}", now) for d in found)
                out.accounts.append(account)
        total += len(out.consumptions)
        _publish(out, run, now)
        repo.save(out, file_id=f"estimate-{run_id}", now=now)
    return total


def take_in_interval_file(
    file: UploadedFile,
    *,
    chunks: Iterable[bytes],
    repo: MeteringRepository,
    report: RejectionReport,
    tenants: Sequence[str],
    now: datetime,
) -> IngestResult:
    """An interval file (``reads/interval/``): daily items, ``SlugDetected``, a report."""
    if repo.file_seen(file.file_id):
        return IngestResult(file_id=file.file_id, duplicate_file=True)
    run = _Run(file, report)
    if file.size > MAX_INTERVAL_FILE_BYTES:
        run.reject(
            LineRejection(line=0, column="(file)", reason=f"larger than {MAX_INTERVAL_FILE_BYTES} bytes")
        )
    else:
        try:
            result = aggregate(
                chunks,
                meters=repo.interval_meters,
                tenants=tenants,
                now=now,
                reject=run.reject,
            )
            repo.save_days(result.days, file_id=file.file_id, now=now)
            repo.save_events([_slug_event(s, now) for s in result.slugs], now=now)
            run.accepted = result.accepted
        except cin.FileRejected as exc:
            run.reject(exc.rejection)
        except ObjectMissing as exc:
            run.reject(LineRejection(line=0, column="(file)", reason=str(exc)[:300]))
    run.flush()
    return _finish(file, "interval", run, repo, report, now)


def _slug_event(slug: Any, now: datetime) -> SlugDetected:
    start = slug.first.isoformat()
    return SlugDetected(
        event_id=str(uuid.uuid5(_IDS, f"slug#{slug.tenant}#{slug.meter_id}#{start}")),
        occurred_at=now,
        tenant=slug.tenant,
        meter_id=slug.meter_id,
        account_id=slug.account_id or None,
        interval_start=start,
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
    start, end = previous_month(today)
    events = []
    for meter in repo.flow_monitors():
        volume, days = repo.month_volume(meter, start, end)
        if days == 0:
            continue
        month = month_of(start)
        events.append(
            SatelliteFlowReady(
                event_id=str(uuid.uuid5(_IDS, f"satflow#{meter.tenant}#{meter.meter_id}#{month}")),
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


# ---------------------------------------------------------------- meters files


def _parse_meter(cells: dict[str, str], tenants: Sequence[str]) -> Meter:
    digits_text = cells.get("digits", "")
    if not digits_text.isascii() or not digits_text.isdigit() or not 1 <= int(digits_text) <= MAX_DIGITS:
        raise cin.BadField(
            "digits", f"must be a whole number from 1 to {MAX_DIGITS}, got {digits_text[:20]!r}"
        )
    digits = int(digits_text)
    size = cells.get("size") or None
    if size is not None and size not in METER_SIZES:
        raise cin.BadField("size", f"{size[:20]!r} is not a meter size ({', '.join(METER_SIZES)})")
    meter = Meter(
        tenant=cin.tenant(cells, tenants),
        meter_id=cin.text_id(cells, "meter_id"),
        account_id=cin.text_id(cells, "account_id"),
        kind=cin.choice(cells, "kind", ("water", "waste", "flow-monitor")),  # type: ignore[arg-type]
        units=cin.choice(cells, "units", ("gal", "cf", "ccf")),  # type: ignore[arg-type]
        digits=digits,
        installed_on=cin.a_date(cells, "installed_on"),  # type: ignore[arg-type]
        initial_reading=cin.a_number(cells, "initial_reading"),  # type: ignore[arg-type]
        size=size,
        removed_on=cin.a_date(cells, "removed_on", required=False),
        final_reading=cin.a_number(cells, "final_reading", required=False),
    )
    if meter.initial_reading >= meter.capacity:
        raise cin.BadField("initial_reading", f"more digits than the {digits}-digit register")
    if (meter.removed_on is None) != (meter.final_reading is None):
        raise cin.BadField("final_reading", "removed_on and final_reading go together")
    if meter.removed_on is not None and meter.removed_on <= meter.installed_on:
        raise cin.BadField("removed_on", "must be after installed_on")
    if meter.final_reading is not None and meter.final_reading >= meter.capacity:
        raise cin.BadField("final_reading", f"more digits than the {digits}-digit register")
    return meter


_FIXED = ("account_id", "units", "digits", "installed_on", "initial_reading")


def _meters_batch(
    rows: list[cin.Row],
    run: _Run,
    repo: MeteringRepository,
    settings: Settings,
    tenants: Sequence[str],
    now: datetime,
    today: date,
) -> BatchOutput:
    parsed: list[tuple[int, Meter]] = []
    for row in rows:
        try:
            parsed.append((row.line, _parse_meter(row.cells, tenants)))
        except cin.BadField as exc:
            run.reject(LineRejection(line=row.line, column=exc.column, reason=exc.reason[:300]))
    known = repo.meters({(m.tenant, m.meter_id) for _, m in parsed})
    accounts = repo.accounts({(m.tenant, m.account_id) for _, m in parsed})
    same = {(m.tenant, m.meter_id) for _, m in parsed if known.get((m.tenant, m.meter_id)) == m}
    taken = repo.meters_taken_in(same, run.file.file_id) if same else {}
    out = BatchOutput()
    touched: dict[AccountKey, AccountMetering] = {}
    replaced: dict[AccountKey, list[tuple[str, date, date]]] = {}
    for line, meter in parsed:
        before = known.get((meter.tenant, meter.meter_id))
        if before == meter and taken.get((meter.tenant, meter.meter_id)) == line:
            # taken in by an earlier delivery of this file (a redelivery after a crash): its
            # items are stored; its account holds it unless the crash came before the states
            run.accepted += 1
            out.redelivered = True
            account_key = (meter.tenant, meter.account_id)
            account = accounts.get(account_key) or AccountMetering(meter.tenant, meter.account_id)
            series = account.series.get(meter.meter_id)
            if series is None or series.meter != meter:
                accounts[account_key] = account
                refused = _register(
                    account, meter, today, settings(meter.tenant), replaced.setdefault(account_key, [])
                )
                if refused is None:
                    touched[account_key] = account
            continue
        if before == meter:
            run.repeated += 1
            continue
        if before is not None:
            changed = [f for f in _FIXED if getattr(before, f) != getattr(meter, f)]
            if changed:
                run.reject(
                    LineRejection(
                        line=line,
                        column=changed[0],
                        reason=(
                            f"meter {meter.meter_id} already has {changed[0]} {getattr(before, changed[0])}; "
                            "it cannot change (remove the meter and install a new one)"
                        )[:300],
                    )
                )
                continue
            if before.removed_on is not None and (before.removed_on, before.final_reading) != (
                meter.removed_on,
                meter.final_reading,
            ):
                run.reject(
                    LineRejection(
                        line=line,
                        column="removed_on",
                        reason=(
                            f"meter {meter.meter_id} was removed on {before.removed_on} with final reading "
                            f"{before.final_reading}; got {meter.removed_on} {meter.final_reading}"
                        )[:300],
                    )
                )
                continue
        account_key = (meter.tenant, meter.account_id)
        account = accounts.get(account_key) or AccountMetering(meter.tenant, meter.account_id)
        accounts[account_key] = account
        refused = _register(
            account, meter, today, settings(meter.tenant), replaced.setdefault(account_key, [])
        )
        if refused is not None:
            run.reject(LineRejection(line=line, column=refused.column, reason=refused.reason[:300]))
            continue
        known[(meter.tenant, meter.meter_id)] = meter
        out.meters.append((meter, line))
        touched[account_key] = account
        run.accepted += 1
    # The registry alone determines nothing: periods wait for reads (or the daily run), so a
    # removal registered before the reads that precede it does not close a period early. A
    # final reading that replaced estimates corrects the periods they bounded, though.
    for key, account in touched.items():
        for found in redetermine(account, settings(account.tenant), replaced.get(key, ())):
            out.consumptions.append(_event(found, run.file.key, run.file.file_id, now))
    out.accounts.extend(touched.values())
    return out


def _register(
    account: AccountMetering,
    meter: Meter,
    today: date,
    settings: TenantSettings,
    replaced: list[tuple[str, date, date]],
) -> Refused | None:
    series = account.series.get(meter.meter_id)
    if series is None:
        if meter.installed_on > today:
            return Refused("installed_on", f"{meter.installed_on} is in the future (today is {today})")
        series = MeterSeries(
            replace(meter, removed_on=None, final_reading=None),
            [Point(meter.installed_on, meter.initial_reading, "initial", Decimal(0))],
        )
        account.series[meter.meter_id] = series
    else:
        series.meter = replace(meter, removed_on=None, final_reading=None)
    if meter.removed_on is not None and series.meter.removed_on is None:
        assert meter.final_reading is not None
        later = series.after(meter.removed_on)
        if later is not None:
            return Refused(
                "removed_on", f"meter {meter.meter_id} has a reading on {later.on}, after {meter.removed_on}"
            )
        outcome = apply_reading(
            account,
            series,
            Reading(meter.tenant, meter.meter_id, meter.removed_on, meter.final_reading, "final"),
            today=today,
            factor=settings.high_low_factor,
        )
        if isinstance(outcome, Refused):
            return Refused("final_reading", outcome.reason)
        if isinstance(outcome, Accepted) and outcome.replaced_after is not None:
            replaced.append((meter.meter_id, outcome.replaced_after, meter.removed_on))
    series.meter = meter
    return None


# ---------------------------------------------------------------- read files


def _parse_reads(rows: list[cin.Row], run: _Run, tenants: Sequence[str]) -> list[Reading]:
    reads = []
    for row in rows:
        cells = row.cells
        try:
            reads.append(
                Reading(
                    tenant=cin.tenant(cells, tenants),
                    meter_id=cin.text_id(cells, "meter_id"),
                    read_on=cin.a_date(cells, "read_on"),  # type: ignore[arg-type]
                    reading=cin.a_number(cells, "reading"),  # type: ignore[arg-type]
                    read_type=cin.choice(cells, "read_type", ("actual", "customer", "estimated"), "actual"),  # type: ignore[arg-type]
                    line=row.line,
                )
            )
        except cin.BadField as exc:
            run.reject(LineRejection(line=row.line, column=exc.column, reason=exc.reason[:300]))
    return reads


def _reads_batch(
    reads: list[Reading],
    run: _Run,
    repo: MeteringRepository,
    settings: Settings,
    now: datetime,
    today: date,
    file_id: str | None = None,
) -> BatchOutput:
    """The batch's reads applied to their accounts' states. ``file_id``: the file they come
    from, whose earlier delivery may have taken some of them in (module doc)."""
    out = BatchOutput()
    repeats: list[tuple[Reading, str]] = []
    registered = repo.meter_accounts({(r.tenant, r.meter_id) for r in reads})
    accounts = repo.accounts({(tenant, account_id) for (tenant, _), account_id in registered.items()})
    touched: dict[AccountKey, AccountMetering] = {}
    replaced: dict[AccountKey, list[tuple[str, date, date]]] = {}
    for read in sorted(reads, key=lambda r: (r.tenant, r.meter_id, r.read_on, r.line)):
        account_id = registered.get((read.tenant, read.meter_id))
        if account_id is None:
            run.reject(
                LineRejection(
                    line=read.line,
                    column="meter_id",
                    reason=f"unknown meter {read.meter_id} of {read.tenant}",
                )
            )
            continue
        account = accounts.get((read.tenant, account_id))
        series = account.series.get(read.meter_id) if account else None
        if account is None or series is None:
            run.reject(
                LineRejection(
                    line=read.line,
                    column="meter_id",
                    reason=f"meter {read.meter_id} is not registered on an account",
                )
            )
            continue
        outcome = apply_reading(
            account, series, read, today=today, factor=settings(read.tenant).high_low_factor
        )
        if isinstance(outcome, Duplicate):
            repeats.append((read, account.account_id))
        elif isinstance(outcome, Refused):
            run.reject(LineRejection(line=read.line, column=outcome.column, reason=outcome.reason[:300]))
            out.failed_reads.append(
                FailedRead(read, account.account_id, outcome.column, outcome.reason[:300])
            )
        else:
            run.accepted += 1
            out.reads.append((read, account.account_id))
            touched[(account.tenant, account.account_id)] = account
            if isinstance(outcome, Accepted) and outcome.replaced_after is not None:
                replaced.setdefault((account.tenant, account.account_id), []).append(
                    (read.meter_id, outcome.replaced_after, read.read_on)
                )
    lines = [r.line for r in reads]
    taken = repo.reads_taken_in(file_id, min(lines), max(lines)) if file_id and repeats else set()
    for read, account_id in repeats:
        if read.line in taken:  # this file's own, taken in by a delivery that crashed after
            run.accepted += 1
            out.reads.append((read, account_id))
            out.redelivered = True
        else:
            run.repeated += 1
    _determine(touched, out, run, settings, now, today, replaced)
    return out


# ---------------------------------------------------------------- consumption and events


def _determine(
    accounts: dict[AccountKey, AccountMetering],
    out: BatchOutput,
    run: _Run,
    settings: Settings,
    now: datetime,
    today: date,
    replaced: dict[AccountKey, list[tuple[str, date, date]]],
) -> None:
    """Corrected determinations of replaced estimates first, then the periods now complete."""
    for key, account in accounts.items():
        tenant_settings = settings(account.tenant)
        corrected = redetermine(account, tenant_settings, replaced.get(key, ()))
        for found in [*corrected, *determine(account, tenant_settings, today=today)]:
            out.consumptions.append(_event(found, run.file.key, run.file.file_id, now))
        out.accounts.append(account)


def _event(found: Determined, source: str, file_id: str, now: datetime) -> ConsumptionDetermined:
    reads: list[ReadUsed] = []
    for share in found.shares:
        for point in (share.start, share.end):
            reads.append(
                ReadUsed(
                    meter_id=share.meter_id, read_on=point.on, reading=point.reading, read_type=point.type
                )
            )
    business = f"{found.tenant}#{found.account_id}#{found.period_start}#{found.period_end}"
    return ConsumptionDetermined(
        event_id=name_based_id(_IDS, f"{file_id}#{business}"),
        occurred_at=now,
        tenant=found.tenant,
        account_id=found.account_id,
        period_start=found.period_start,
        period_end=found.period_end,
        volume_gal=found.volume_gal,
        quality=found.quality,
        estimated=found.quality == "estimated",
        meters=tuple(
            MeterUse(meter_id=s.meter_id, kind=s.kind, volume_gal=s.volume_gal, quality=s.quality)
            for s in found.shares
        ),
        reads_used=tuple(reads),
        flags=found.flags,
        winter_average_gal=found.winter_average_gal,
        source_file=source[:1024],
    )


def _publish(out: BatchOutput, run: _Run, now: datetime) -> None:
    """Cut the batch's consumptions into chunk events (one per CHUNK_MAX)."""
    stamped = out.consumptions
    for start in range(0, len(stamped), CHUNK_MAX):
        out.chunks.append(
            ConsumptionsDetermined(
                event_id=name_based_id(_IDS, f"chunk#{run.file.file_id}#{run.chunk_index}"),
                occurred_at=now,
                file_id=run.file.file_id[:64],
                chunk=run.chunk_index,
                consumptions=tuple(stamped[start : start + CHUNK_MAX]),
            )
        )
        run.chunk_index += 1
    run.consumptions += len(stamped)


class _NoReport:
    def add(self, rejection: LineRejection) -> None:
        pass

    def finish(self) -> str | None:
        return None


def reading_from_request(tenant: str, meter_id: str, body: dict[str, Any], tenants: Sequence[str]) -> Reading:
    """A single read posted to the API, checked like a file's row (raises cin.BadField)."""
    cells = {k: str(v).strip() for k, v in body.items() if v is not None and k in READS_HEADER.columns}
    unknown = sorted(set(body) - set(READS_HEADER.columns) - {"tenant", "meter_id"})
    if unknown:
        raise cin.BadField(unknown[0], "unknown field")
    cells.update(tenant=tenant, meter_id=meter_id)
    return _single(cells, tenants)


def _single(cells: dict[str, str], tenants: Sequence[str]) -> Reading:
    return Reading(
        tenant=cin.tenant(cells, tenants),
        meter_id=cin.text_id(cells, "meter_id"),
        read_on=cin.a_date(cells, "read_on"),  # type: ignore[arg-type]
        reading=cin.a_number(cells, "reading"),  # type: ignore[arg-type]
        read_type=cin.choice(cells, "read_type", ("actual", "customer", "estimated"), "actual"),  # type: ignore[arg-type]
        line=0,
    )
