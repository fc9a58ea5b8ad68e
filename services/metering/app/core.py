"""What every metering import reader shares: the file, the ports, one file's run and its
counters, and the consumption events a batch publishes (issues 26 and 27).

The readers (``meters_file``, ``reads_file``, ``interval_file``) and the daily run
(``estimates``) build on this; ``metering.app.ingest`` is the entry point the handlers use.

What a repeated or changed line means (README "What a repeated or changed line means"):

- every data line ends in exactly one of :class:`common.imports.ImportCounts`' counts
  (accepted, repeated, changed, rejected, waiting): :meth:`Run.counts` checks they add up;
- a file is skipped as a duplicate only when its earlier run was *final*: every line taken
  in, or refused for a reason that cannot change. A refusal that can (a date in the future,
  a meter not registered yet) makes the file's record not final, so the same file sent
  again is read again (:class:`FileRecord`);
- each run of one file has a *pass* number (the runs of it completed before). What a pass
  takes in is stored with its pass, so a redelivery after a crash (the same pass again)
  counts what the crashed delivery stored as accepted, and a later pass counts what earlier
  passes took in as repeated: derived from what is stored, never from what this delivery
  happened to write first.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Protocol

from common.errors import PermanentError
from common.events import Event
from common.fields import DateWindow
from common.ids import name_based_id
from common.imports import ImportCounts
from common.tariffs import METER_SIZES
from metering.domain import csvinput as cin
from metering.domain.accounts import BilledAccount, WaitingMeter
from metering.domain.determination import Determined, TenantSettings, determine, redetermine
from metering.domain.interval import DayKey, IntervalMeter, StoredDay
from metering.domain.model import AccountMetering, Meter
from metering.domain.readings import Reading
from metering.events import (
    CHUNK_MAX,
    REJECTIONS_IN_EVENT_MAX,
    ConsumptionDetermined,
    ConsumptionsDetermined,
    LineRejection,
    MeterUse,
    ReadsRejected,
    ReadUsed,
)

BATCH_ROWS = 1_000
# Chunk numbers a batch may use: a batch's chunks are numbered from ``batch * CHUNKS_PER_BATCH``
# (5 million consumptions a batch, far above what 1,000 rows determine; a 200 MB file's last
# chunk numbers stay under the 10**9 of metering's event-size bound).
CHUNKS_PER_BATCH = 100_000
MAX_FILE_BYTES = 200 * 1024 * 1024
MAX_INTERVAL_FILE_BYTES = 2 * 1024 * 1024 * 1024
MAX_DIGITS = 12
IDS = uuid.UUID("6f0c3d52-5b0e-4c6e-9a43-0d8f1c2b7e11")

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
class FileRecord:
    """What the table holds of a file's last completed run (``FILE#<file_id>``).

    ``final``: nothing in the file could turn out differently (every line taken in, or
    refused for a reason that cannot change): the file sent again is a duplicate.
    ``passes``: runs completed that took something in; the next run is pass ``passes``.
    A record written before issue 26 has neither: it is taken as final, one pass."""

    final: bool = True
    passes: int = 1
    lines: int = 0
    rejected: int = 0


@dataclass(frozen=True)
class FieldRules:
    """The world a tenant's fields live in (issue 27, ``common.fields``): the dates a fact
    can carry (the tenant's first tariff version to ``today``) and the meter sizes of the
    tariff in force (its own spelling and its aliases)."""

    first: Callable[[str], date]
    today: date
    sizes: Callable[[str], frozenset[str]] = lambda tenant: frozenset(METER_SIZES)

    def window(self, tenant: str) -> DateWindow:
        return DateWindow(first=self.first(tenant), today=self.today)


def any_date_rules(today: date) -> FieldRules:
    """Rules without a tariff book (a test's utility): facts from 1990 to ``today``."""
    return FieldRules(first=lambda tenant: cin.EARLIEST_DATE, today=today)


@dataclass(frozen=True)
class FailedRead:
    reading: Reading
    account_id: str
    column: str
    reason: str


@dataclass
class BatchOutput:
    """What one batch writes, in the order it is written (``ingest``'s module doc)."""

    chunks: list[ConsumptionsDetermined] = field(default_factory=list)
    consumptions: list[ConsumptionDetermined] = field(default_factory=list)
    # (read, account_id, pass that took it in)
    reads: list[tuple[Reading, str, int]] = field(default_factory=list)
    failed_reads: list[FailedRead] = field(default_factory=list)
    # (meter, line, pass, outcome: "accepted" or "changed")
    meters: list[tuple[Meter, int, int, str]] = field(default_factory=list)
    accounts: list[AccountMetering] = field(default_factory=list)
    # an earlier delivery took some of this batch in (and so stored all of its chunks first):
    # chunks already stored are kept, not rewritten
    redelivered: bool = False


@dataclass(frozen=True)
class TakenIn:
    """What a file's earlier delivery stored of one of its lines: the pass it ran in and, for
    a meter, whether that line was a new meter or a change (``accepted`` / ``changed``)."""

    line: int
    pass_: int
    outcome: str = "accepted"


class MeteringRepository(Protocol):
    def file_record(self, file_id: str) -> FileRecord | None: ...

    def meters(self, keys: Iterable[MeterKey]) -> dict[MeterKey, Meter]: ...

    def meters_taken_in(self, keys: Iterable[MeterKey], file_id: str) -> dict[MeterKey, TakenIn]:
        """The line (and pass) of file ``file_id`` that wrote each of these meters as it is now."""
        ...

    def reads_taken_in(self, file_id: str, first_line: int, last_line: int) -> dict[int, int]:
        """Line -> pass, for the lines in [first_line, last_line] of file ``file_id`` whose read
        an earlier delivery of the file accepted (its record of its lines, ``READS#<file_id>``)."""
        ...

    def meter_accounts(self, keys: Iterable[MeterKey]) -> dict[MeterKey, str]: ...

    def accounts(self, keys: Iterable[AccountKey]) -> dict[AccountKey, AccountMetering]: ...

    def save(self, batch: BatchOutput, *, file_id: str, now: datetime) -> None:
        """Write the batch in ``ingest``'s order (batched, idempotent)."""
        ...

    def record_file(
        self,
        file: UploadedFile,
        kind: str,
        counts: ImportCounts,
        rejected: ReadsRejected | None,
        now: datetime,
        *,
        record: FileRecord,
    ) -> None: ...

    def all_account_keys(self) -> Iterator[AccountKey]: ...

    def interval_meters(self, keys: Iterable[MeterKey]) -> dict[MeterKey, IntervalMeter]: ...

    def interval_days(self, keys: Iterable[DayKey]) -> dict[DayKey, StoredDay]:
        """The stored intervals of these meter-days (each with the file, pass and line that gave it)."""
        ...

    def save_days(self, days: dict[DayKey, StoredDay], *, file_id: str, now: datetime) -> None:
        """One item per meter per local day, holding all of its intervals and their sums."""
        ...

    def save_events(self, events: Sequence[Event], *, now: datetime) -> None:
        """Outbox items (deterministic ids: rewriting one publishes nothing twice)."""
        ...

    def flow_monitors(self) -> Iterator[IntervalMeter]: ...

    def month_volume(self, meter: IntervalMeter, start: date, end: date) -> tuple[Decimal, int]:
        """Gallons and days with data of ``meter`` from its daily items in [start, end)."""
        ...


class AccountDirectory(Protocol):
    """The accounts billing published, kept by metering, and the meters waiting for one
    (issue 26, ``metering.domain.accounts``)."""

    def keep_accounts(self, accounts: Sequence[BilledAccount]) -> int:
        """Keep each version unless a later (or the same) one is kept; returns those kept."""
        ...

    def tenants_known(self, tenants: Iterable[str]) -> set[str]:
        """The tenants of which billing has published an account."""
        ...

    def known_accounts(self, keys: Iterable[AccountKey]) -> set[AccountKey]: ...

    def suspend_meters(self, lines: Sequence[WaitingMeter], *, now: datetime) -> None:
        """Keep lines in suspense, then a mark per account (rewriting them is harmless)."""
        ...

    def suspended(self, tenant: str, account_ids: Iterable[str]) -> set[str]: ...

    def waiting_meters(self, tenant: str, account_id: str) -> list[WaitingMeter]: ...

    def settle_meters(
        self, tenant: str, account_id: str, taken: Sequence[WaitingMeter], refused: Mapping[WaitingMeter, str]
    ) -> None:
        """Lines taken in leave suspense; those refused stay listed with the cause; the
        account's mark goes last."""
        ...


class RejectionReport(Protocol):
    def add(self, rejection: LineRejection) -> None: ...

    def finish(self) -> str | None:
        """Store the full report (if anything was added) and return its key."""
        ...


@dataclass(frozen=True)
class IngestResult:
    """How a file ended: ``counts`` (one set for every kind, adding up to its data lines),
    where its report is, the first rejections."""

    file_id: str
    duplicate_file: bool = False
    accepted: int = 0
    repeated: int = 0
    rejected: int = 0
    consumptions: int = 0
    report_key: str | None = None
    first_rejections: tuple[LineRejection, ...] = ()
    changed: int = 0
    waiting: int = 0
    lines: int = 0

    @property
    def counts(self) -> ImportCounts:
        return ImportCounts(
            lines=self.lines,
            accepted=self.accepted,
            repeated=self.repeated,
            changed=self.changed,
            rejected=self.rejected,
            waiting=self.waiting,
        )


Settings = Callable[[str], TenantSettings]


@dataclass
class Run:
    """One file's progress: counts, the first rejections, chunk numbering, its pass.

    ``may_change`` counts the rejections whose cause can change (a date in the future, a
    meter not registered yet): while there is one, the file's record is not final."""

    file: UploadedFile
    report: RejectionReport
    pass_: int = 0
    counts: ImportCounts = field(default_factory=ImportCounts)
    consumptions: int = 0
    chunk_index: int = 0
    may_change: int = 0
    first: list[LineRejection] = field(default_factory=list)
    pending: list[LineRejection] = field(default_factory=list)

    @property
    def source_id(self) -> str:
        """The file's id for what this pass derives (event ids): the file id on its first
        pass, with the pass number after, so a later pass publishes under ids of its own."""
        return self.file.file_id if self.pass_ == 0 else f"{self.file.file_id}~{self.pass_}"

    def reject(self, rejection: LineRejection, *, may_change: bool = False) -> None:
        self.pending.append(rejection)
        self.may_change += may_change

    def report_now(self, rejection: LineRejection, *, may_change: bool = False) -> None:
        """Count and report one rejection at once (a stream that keeps none in memory)."""
        self.may_change += may_change
        self._add(rejection)

    def flush(self) -> None:
        """Report the batch's rejections in line order."""
        for rejection in sorted(self.pending, key=lambda r: r.line):
            self._add(rejection)
        self.pending.clear()

    def _add(self, rejection: LineRejection) -> None:
        self.counts.rejected += 1
        if len(self.first) < REJECTIONS_IN_EVENT_MAX:
            self.first.append(rejection)
        self.report.add(rejection)


def rejection(line: int, column: str, reason: str) -> LineRejection:
    return LineRejection(line=line, column=column[:64], reason=reason[:300])


def file_rejected(run: Run, reason: str, line: int = 0, column: str = "(file)") -> None:
    """A rejection of the whole file (or of the rest of it): one line of its counts."""
    run.counts.lines += 1
    run.reject(rejection(line, column, reason))


def start(file: UploadedFile, repo: MeteringRepository) -> tuple[bool, FileRecord | None]:
    """Whether the file is a duplicate (its last run was final), and its record."""
    record = repo.file_record(file.file_id)
    return record is not None and record.final, record


def duplicate(file: UploadedFile, record: FileRecord | None) -> IngestResult:
    lines = record.lines if record else 0
    rejected = record.rejected if record else 0
    return IngestResult(
        file_id=file.file_id, duplicate_file=True, repeated=lines - rejected, rejected=rejected, lines=lines
    )


def finish(
    file: UploadedFile,
    kind: str,
    run: Run,
    repo: MeteringRepository,
    report: RejectionReport,
    now: datetime,
    before: FileRecord | None,
) -> IngestResult:
    """Check the counts, store the report, record the file (unless a later pass took in nothing
    new and the record stays as it was) and say how the file ended."""
    counts = run.counts.check()
    report_key = report.finish() if counts.rejected else None
    final = run.may_change == 0
    took = counts.accepted + counts.changed
    record = FileRecord(final=final, passes=run.pass_ + 1, lines=counts.lines, rejected=counts.rejected)
    if before is None or took or before.final != final:
        summary = (
            ReadsRejected(
                event_id=str(uuid.uuid5(IDS, f"rejected#{run.source_id}")),
                occurred_at=now,
                file_key=file.key[:1024],
                etag=file.etag[:128],
                file_id=file.file_id[:128],
                rejections=tuple(run.first),
                rejected_count=counts.rejected,
                accepted_count=counts.accepted,
                report_key=report_key,
                repeated_count=counts.repeated,
                changed_count=counts.changed,
                lines_count=counts.lines,
            )
            if counts.rejected and (before is None or took)
            else None
        )
        if before is not None and not took:
            record = FileRecord(
                final=final, passes=before.passes, lines=counts.lines, rejected=counts.rejected
            )
        repo.record_file(file, kind, counts, summary, now, record=record)
    return IngestResult(
        file_id=file.file_id,
        accepted=counts.accepted,
        repeated=counts.repeated,
        changed=counts.changed,
        rejected=counts.rejected,
        waiting=counts.waiting,
        lines=counts.lines,
        consumptions=run.consumptions,
        report_key=report_key,
        first_rejections=tuple(run.first),
    )


# ---------------------------------------------------------------- consumption and events


def determine_touched(
    accounts: dict[AccountKey, AccountMetering],
    out: BatchOutput,
    run: Run,
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
            out.consumptions.append(consumption_event(found, run.file.key, run.source_id, now))
        out.accounts.append(account)


def consumption_event(found: Determined, source: str, file_id: str, now: datetime) -> ConsumptionDetermined:
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
        event_id=name_based_id(IDS, f"{file_id}#{business}"),
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


def publish(out: BatchOutput, run: Run, now: datetime) -> None:
    """Cut the batch's consumptions into chunk events (one per CHUNK_MAX)."""
    stamped = out.consumptions
    for begin in range(0, len(stamped), CHUNK_MAX):
        out.chunks.append(
            ConsumptionsDetermined(
                event_id=name_based_id(IDS, f"chunk#{run.source_id}#{run.chunk_index}"),
                occurred_at=now,
                file_id=run.source_id[:64],
                chunk=run.chunk_index,
                consumptions=tuple(stamped[begin : begin + CHUNK_MAX]),
            )
        )
        run.chunk_index += 1
    run.consumptions += len(stamped)


class NoReport:
    def add(self, rejection: LineRejection) -> None:
        pass

    def finish(self) -> str | None:
        return None
