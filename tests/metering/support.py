"""Builders for metering's pure tests: an in-memory repository and report, files as text."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from common.events import Event
from common.imports import ImportCounts
from metering.app import ingest
from metering.app.ingest import AccountKey, BatchOutput, FileRecord, MeterKey, TakenIn, UploadedFile
from metering.domain.accounts import BilledAccount, WaitingMeter
from metering.domain.determination import TenantSettings
from metering.domain.interval import DayKey, DaySum, IntervalMeter, StoredDay
from metering.domain.model import AccountMetering, Meter
from metering.events import LineRejection, ReadsRejected

TENANTS = ("pleasant-prairie-sewer", "grafton-sewer", "sullivan-sewer")
METERS_HEADER = "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading,size,removed_on,final_reading\n"
READS_HEADER = "tenant,meter_id,read_on,reading,read_type\n"


def settings(tenant: str) -> TenantSettings:
    return TenantSettings(
        period_months=3 if tenant in ("grafton-sewer", "sullivan-sewer") else 1,
        read_window_days=5,
        high_low_factor=Decimal(3),
        winter_average=tenant == "pleasant-prairie-sewer",
    )


class MemoryRepo:
    """The repository protocol over dicts (JSON round trip, as DynamoDB would store it)."""

    def __init__(self) -> None:
        self.meters_: dict[MeterKey, dict[str, Any]] = {}
        self.accounts_: dict[AccountKey, dict[str, Any]] = {}
        self.files: dict[str, tuple[ImportCounts, ReadsRejected | None, FileRecord]] = {}
        self.chunks: list[Any] = []
        self.consumptions: dict[tuple[str, str, date, date], Any] = {}
        self.reads: list[Any] = []
        self.failed: list[Any] = []
        self.saves = 0
        self.stored_days: dict[DayKey, dict[str, Any]] = {}  # StoredDay as JSON, as DynamoDB keeps it
        self.events: list[Event] = []
        self.meter_sources: dict[MeterKey, tuple[str, TakenIn]] = {}  # the file, line, pass of each meter
        self.read_lines: dict[str, dict[int, int]] = {}  # each file's accepted reads: line -> pass

    @property
    def days(self) -> dict[DayKey, DaySum]:
        return {k: StoredDay.from_json(v).sums() for k, v in self.stored_days.items()}

    def file_record(self, file_id: str) -> FileRecord | None:
        found = self.files.get(file_id)
        return found[2] if found else None

    def meters(self, keys: Iterable[MeterKey]) -> dict[MeterKey, Meter]:
        return {k: Meter.from_json(self.meters_[k]) for k in keys if k in self.meters_}

    def meter_accounts(self, keys: Iterable[MeterKey]) -> dict[MeterKey, str]:
        return {k: m.account_id for k, m in self.meters(keys).items()}

    def meters_taken_in(self, keys: Iterable[MeterKey], file_id: str) -> dict[MeterKey, TakenIn]:
        found = {k: self.meter_sources.get(k) for k in keys}
        return {k: source[1] for k, source in found.items() if source is not None and source[0] == file_id}

    def reads_taken_in(self, file_id: str, first_line: int, last_line: int) -> dict[int, int]:
        return {n: p for n, p in self.read_lines.get(file_id, {}).items() if first_line <= n <= last_line}

    def accounts(self, keys: Iterable[AccountKey]) -> dict[AccountKey, AccountMetering]:
        return {
            k: AccountMetering.from_json(k[0], k[1], self.accounts_[k], 0)
            for k in keys
            if k in self.accounts_
        }

    def all_account_keys(self) -> Iterator[AccountKey]:
        return iter(list(self.accounts_))

    def interval_meters(self, keys: Iterable[MeterKey]) -> dict[MeterKey, IntervalMeter]:
        return {
            k: IntervalMeter(m.tenant, m.meter_id, m.account_id, m.units, m.kind)
            for k, m in self.meters(keys).items()
        }

    def interval_days(self, keys: Iterable[DayKey]) -> dict[DayKey, StoredDay]:
        return {k: StoredDay.from_json(self.stored_days[k]) for k in keys if k in self.stored_days}

    def save_days(self, days: dict[DayKey, StoredDay], *, file_id: str, now: datetime) -> None:
        self.stored_days.update({k: d.as_json() for k, d in days.items()})

    def save_events(self, events: Sequence[Event], *, now: datetime) -> None:
        self.events.extend(events)

    def flow_monitors(self) -> Iterator[IntervalMeter]:
        for m in self.meters(list(self.meters_)).values():
            if m.kind == "flow-monitor":
                yield IntervalMeter(m.tenant, m.meter_id, m.account_id, m.units, m.kind)

    def month_volume(self, meter: IntervalMeter, start: date, end: date) -> tuple[Decimal, int]:
        found = [
            d
            for (t, m, day), d in self.days.items()
            if (t, m) == (meter.tenant, meter.meter_id) and start <= day < end
        ]
        return sum((d.volume_gal for d in found), Decimal(0)), len(found)

    def save(self, batch: BatchOutput, *, file_id: str, now: datetime) -> None:
        self.saves += 1
        self.chunks.extend(batch.chunks)
        for c in batch.consumptions:
            self.consumptions[(c.tenant, c.account_id, c.period_start, c.period_end)] = c
        self.reads.extend((r, a) for r, a, _ in batch.reads)
        self.read_lines.setdefault(file_id, {}).update((r.line, p) for r, _, p in batch.reads)
        self.failed.extend(batch.failed_reads)
        for meter, line, pass_, outcome in batch.meters:
            self.meters_[(meter.tenant, meter.meter_id)] = meter.as_json()
            self.meter_sources[(meter.tenant, meter.meter_id)] = (file_id, TakenIn(line, pass_, outcome))
        for account in batch.accounts:
            self.accounts_[(account.tenant, account.account_id)] = account.as_json()

    def record_file(
        self,
        file: UploadedFile,
        kind: str,
        counts: ImportCounts,
        rejected: ReadsRejected | None,
        now: datetime,
        *,
        record: FileRecord,
    ) -> None:
        self.files[file.file_id] = (counts, rejected, record)

    def volumes(self, account: str) -> dict[tuple[date, date], Decimal]:
        return {(k[2], k[3]): c.volume_gal for k, c in self.consumptions.items() if k[1] == account}


class MemoryDirectory:
    """The account directory port (billing's accounts and the meters waiting for them,
    ``metering.app.core.AccountDirectory``) over dicts."""

    def __init__(self) -> None:
        self.accounts: dict[AccountKey, BilledAccount] = {}
        self.tenants: set[str] = set()
        self.waiting: dict[tuple[str, str, str, int], dict[str, Any]] = {}  # tenant, account, file, line
        self.marks: set[AccountKey] = set()

    def keep_accounts(self, accounts: Sequence[BilledAccount]) -> int:
        kept = 0
        self.tenants |= {a.tenant for a in accounts}
        for a in accounts:
            held = self.accounts.get((a.tenant, a.account_id))
            if held is None or held.version < a.version:
                self.accounts[(a.tenant, a.account_id)] = a
                kept += 1
        return kept

    def tenants_known(self, tenants: Iterable[str]) -> set[str]:
        return set(tenants) & self.tenants

    def known_accounts(self, keys: Iterable[AccountKey]) -> set[AccountKey]:
        return set(keys) & set(self.accounts)

    def suspend_meters(self, lines: Sequence[WaitingMeter], *, now: datetime) -> None:
        for w in lines:
            self.waiting.setdefault(
                (w.tenant, w.account_id, w.file_id, w.line), {"line": w, "outcome": "waiting", "since": now}
            )
        self.marks |= {(w.tenant, w.account_id) for w in lines}

    def suspended(self, tenant: str, account_ids: Iterable[str]) -> set[str]:
        return {a for a in account_ids if (tenant, a) in self.marks}

    def waiting_meters(self, tenant: str, account_id: str) -> list[WaitingMeter]:
        return [
            v["line"]
            for (t, a, _, _), v in sorted(self.waiting.items(), key=lambda kv: kv[0])
            if (t, a) == (tenant, account_id) and v["outcome"] == "waiting"
        ]

    def settle_meters(
        self, tenant: str, account_id: str, taken: Sequence[WaitingMeter], refused: Mapping[WaitingMeter, str]
    ) -> None:
        for w, reason in refused.items():
            self.waiting[(tenant, account_id, w.file_id, w.line)].update(outcome="rejected", reason=reason)
        for w in taken:
            del self.waiting[(tenant, account_id, w.file_id, w.line)]
        self.marks.discard((tenant, account_id))


class MemoryReport:
    def __init__(self) -> None:
        self.lines: list[LineRejection] = []

    def add(self, rejection: LineRejection) -> None:
        self.lines.append(rejection)

    def finish(self) -> str | None:
        return "reports/metering/test.jsonl" if self.lines else None


class Utility:
    """A tenant's metering as a test drives it: upload files, read what came out."""

    def __init__(self, today: date = date(2026, 12, 1)) -> None:
        self.repo = MemoryRepo()
        self.today = today
        self.uploads = 0
        self.last_report = MemoryReport()
        self.rules: ingest.FieldRules | None = None  # None: facts from 1990 to today
        self.directory: MemoryDirectory | None = None  # billing's accounts, when a test has them

    def upload(
        self,
        kind: str,
        text: str | bytes,
        *,
        key: str | None = None,
        batch_rows: int = 1000,
        chunk: int = 7,  # tiny chunks by default: split anywhere
    ) -> ingest.IngestResult:
        self.uploads += 1
        data = text.encode() if isinstance(text, str) else text
        self.last_report = MemoryReport()
        return ingest.take_in_file(
            UploadedFile("b", key or f"{kind}/{self.uploads}.csv", f"etag{hash(data)}", len(data)),
            kind=kind,
            chunks=[data[i : i + chunk] for i in range(0, len(data), chunk)] or [b""],
            repo=self.repo,
            report=self.last_report,
            settings=settings,
            tenants=TENANTS,
            now=datetime.combine(self.today, datetime.min.time(), UTC),
            today=self.today,
            batch_rows=batch_rows,
            rules=self.rules,
            directory=self.directory,
        )

    def meters(self, *rows: str) -> ingest.IngestResult:
        return self.upload("meters", METERS_HEADER + "".join(r + "\n" for r in rows))

    def reads(self, *rows: str) -> ingest.IngestResult:
        return self.upload("reads", READS_HEADER + "".join(r + "\n" for r in rows))

    def estimate(self) -> int:
        return ingest.estimate_missing(
            repo=self.repo,
            settings=settings,
            now=datetime.combine(self.today, datetime.min.time(), UTC),
            today=self.today,
            run_id=self.today.isoformat(),
        )

    def interval(
        self, text: str | bytes, *, now: datetime | None = None, flush_days: int = 200
    ) -> ingest.IngestResult:
        data = text.encode() if isinstance(text, str) else text
        self.last_report = MemoryReport()
        self.uploads += 1
        return ingest.take_in_interval_file(
            UploadedFile("b", f"reads/interval/{self.uploads}.csv", f"etag{hash(data)}", len(data)),
            chunks=[data[i : i + 65536] for i in range(0, len(data), 65536)] or [b""],
            repo=self.repo,
            report=self.last_report,
            tenants=TENANTS,
            now=now or datetime.combine(self.today, datetime.min.time(), UTC),
            rules=self.rules,
            flush_days=flush_days,
        )


class Crash(Exception):
    """The worker killed part-way (the fault harness's kill, in a pure test)."""


class CrashingRepo:
    """``repo`` whose ``after``-th write (a batch's save or a flush of interval days) raises
    :class:`Crash` once the write is done: the crash comes after some of the file is stored."""

    def __init__(self, repo: MemoryRepo, after: int) -> None:
        self._repo = repo
        self._left = after

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repo, name)

    def _written(self) -> None:
        self._left -= 1
        if self._left == 0:
            raise Crash

    def save(self, batch: BatchOutput, *, file_id: str, now: datetime) -> None:
        self._repo.save(batch, file_id=file_id, now=now)
        self._written()

    def save_days(self, days: dict[DayKey, StoredDay], *, file_id: str, now: datetime) -> None:
        self._repo.save_days(days, file_id=file_id, now=now)
        self._written()
