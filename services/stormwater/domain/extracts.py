"""Use case: take in a GIS extract uploaded under ``gis/`` (DESIGN "Flow": S3 -> stormwater).

Idempotent by content: the extract's SHA-256 (computed while it streams in) identifies it,
so the same bytes under any key change nothing the second time (no GIS row is refused for
a cause that can change: a file is a duplicate once every line was taken in or refused);
and a row that repeats the GIS values already kept is not a change either, so even a new
file repeating old rows publishes nothing.

Counts (:class:`common.imports.ImportCounts`, issue 26): a parcel is a record, so each data
line is ``accepted`` (a new parcel), ``changed`` (a new version of a kept parcel; the old
values are kept as GIS history), ``repeated`` (identical to the version kept, or to an
earlier line of the file) or ``rejected``; they add up to the file's lines. They are derived
from what is stored: each parcel state records the file that wrote it and how that file
counted it, so a redelivery after a crash counts a parcel its own first delivery wrote as
that delivery did, not as ``repeated``. Each changed parcel gets its new state, a GIS history entry and, only
when its ERU or exemption changed, a determination (and, where due, the project evaluation
fee): new parcels' determinations are published 50 to an ``ERUsDetermined``, a known
parcel's as its own ``ERUDetermined``. Rejected rows go to a report in S3 (claim check) named by the
``GisExtractTakenIn`` event; the other rows are kept.

Order of writes (so a crash is repaired by the retry): the event-bearing items first
(their keys are deterministic: parcel and sequence, fee id), then parcel states, then the
file record. A retry after a crash recomputes the same keys; a rewrite of an event item is
not an insert and is not published again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import IO, Protocol

from common.clock import Clock
from common.errors import PermanentError, TransientError
from common.imports import ImportCounts
from common.reports import Report
from stormwater.domain.gis import (
    ExtractRejected,
    ParcelRecord,
    Rejection,
    accepted_records,
    plan_extract,
)
from stormwater.domain.gis_files import extract_format, read_extract
from stormwater.domain.parcels import ExtractChange, ParcelState, TariffView, apply_record
from stormwater.events import GisExtractTakenIn, LineRejection

FIRST_REJECTIONS_IN_EVENT = 20


class ObjectMissing(PermanentError):
    """The uploaded object is gone (deleted before it was read)."""


@dataclass(frozen=True)
class UploadedExtract:
    bucket: str
    key: str
    etag: str


class HashingReader:
    """A binary stream that hashes what is read through it (content identity while streaming)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._sha = hashlib.sha256()
        self.size = 0

    def read(self, n: int = -1) -> bytes:
        data = self._stream.read(n)
        self._sha.update(data)
        self.size += len(data)
        return data

    def drain(self) -> None:
        while self.read(1 << 16):
            pass

    @property
    def digest(self) -> str:
        return self._sha.hexdigest()


class ExtractStore(Protocol):
    def open(self, bucket: str, key: str) -> IO[bytes]: ...


class Reports(Protocol):
    def write(self, parts: Sequence[str], rows: Iterable[Mapping[str, object]]) -> Report:
        """Store the rows under reports/stormwater/<parts>; a bounded pointer back."""
        ...


class ParcelRepository(Protocol):
    def file_seen(self, file_id: str) -> bool: ...

    def states(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], ParcelState]: ...

    def record_extract_changes(
        self, changes: Sequence[ExtractChange], *, file_key: str, file_id: str, chunk: int
    ) -> list[tuple[str, str]]:
        """Write the changes; returns the parcels changed by someone else since they were
        read (none of their change is written)."""
        ...

    def record_file(self, event: GisExtractTakenIn) -> None: ...


@dataclass(frozen=True)
class IngestResult:
    file_id: str
    duplicate_file: bool = False
    lines: int = 0
    accepted: int = 0
    changed: int = 0
    repeated: int = 0
    determined: int = 0
    fees: int = 0
    rejected: int = 0
    report_key: str | None = None

    @property
    def unchanged(self) -> int:
        """``repeated`` under its earlier name."""
        return self.repeated


CHUNK = 1_000  # parcels read, decided and written per round (bounded memory for writes)
CONFLICT_ROUNDS = 5  # re-reads of parcels changed by someone else before the message is retried


def _chunks(records: Iterable[ParcelRecord], size: int) -> Iterator[list[ParcelRecord]]:
    chunk: list[ParcelRecord] = []
    for record in records:
        chunk.append(record)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def ingest_extract(
    upload: UploadedExtract,
    *,
    store: ExtractStore,
    repo: ParcelRepository,
    reports: Reports,
    tariff_for: Callable[[str, date], TariffView],
    tenants: Collection[str],
    clock: Clock,
) -> IngestResult:
    now = clock.now()
    today = now.date()
    # Two streamed passes, so neither the file nor its records are ever held whole: the
    # first hashes the bytes (content identity) and plans (digests of each parcel's rows,
    # for repeats and conflicts); the second takes the accepted records in chunks.
    reader = HashingReader(store.open(upload.bucket, upload.key))
    try:
        fmt = extract_format(upload.key)
        plan = plan_extract(read_extract(reader, upload.key, tenants=tenants))  # type: ignore[arg-type]
    except ExtractRejected as exc:
        fmt = "geojson" if upload.key.lower().endswith((".geojson", ".json")) else "csv"
        plan = plan_extract(())
        plan.refused = exc
    refused = plan.refused
    reader.drain()
    file_id = reader.digest
    if repo.file_seen(file_id):
        return IngestResult(file_id=file_id, duplicate_file=True)

    rejections: list[Rejection] = list(plan.rejections)
    if refused is not None:
        rejections = [Rejection(line=0, field=refused.field, reason=refused.reason)]

    accepted = changed = determined = fees = 0
    repeated = plan.repeats
    again = HashingReader(store.open(upload.bucket, upload.key)) if refused is None else None
    records: Iterable[ParcelRecord] = ()
    if again is not None:
        rows = read_extract(again, upload.key, tenants=tenants)  # type: ignore[arg-type]
        records = accepted_records(rows, plan)
    for index, chunk in enumerate(_chunks(records, CHUNK)):
        by_key = {(r.tenant, r.parcel_id): r for r in chunk}
        pending: list[tuple[str, str]] = list(by_key)
        for _attempt in range(CONFLICT_ROUNDS):
            states = repo.states(pending)
            changes: list[ExtractChange] = []
            for parcel_key in pending:
                record = by_key[parcel_key]
                change = apply_record(
                    states.get(parcel_key),
                    record,
                    tariff=tariff_for(record.tenant, today),
                    today=today,
                    file_key=upload.key,
                    now=now,
                )
                if change is None:
                    kept = states[parcel_key].extra
                    if kept.get("gis_file_id") == file_id:  # this file wrote it, then crashed
                        taken_as = kept.get("gis_taken_as", "changed")
                        accepted += taken_as == "accepted"
                        changed += taken_as != "accepted"
                    else:
                        repeated += 1
                    continue
                changes.append(change)
            # A parcel changed meanwhile (an override, a reconsideration) is decided again
            # on top of what was written, never overwritten.
            conflicts = set(
                repo.record_extract_changes(changes, file_key=upload.key, file_id=file_id, chunk=index)
            )
            for change in changes:
                if (change.state.tenant, change.state.parcel_id) not in conflicts:
                    accepted += change.previous is None
                    changed += change.previous is not None
                    determined += change.determined is not None
                    fees += change.fee is not None
            pending = [k for k in pending if k in conflicts]
            if not pending:
                break
        else:
            raise TransientError(f"{len(pending)} parcel(s) kept changing while the extract was taken in")
    if again is not None:
        again.drain()
        if again.digest != file_id:
            raise TransientError(f"{upload.key} was replaced while it was taken in; it is read again")

    counts = ImportCounts(
        lines=plan.lines,
        accepted=accepted,
        changed=changed,
        repeated=repeated,
        rejected=plan.lines if refused is not None else len({r.line for r in rejections}),
    ).check()
    report = None
    if rejections:
        report = reports.write(
            ("gis", file_id, "rejections"),
            (
                {
                    "file_key": upload.key,
                    "line": r.line,
                    "field": r.field,
                    "reason": r.reason,
                    "refused": refused is not None,
                }
                for r in rejections
            ),
        )
    repo.record_file(
        GisExtractTakenIn(
            occurred_at=now,
            file_key=upload.key,
            file_id=file_id,
            format=fmt,
            lines=counts.lines,
            accepted=counts.accepted,
            changed=counts.changed,
            repeated=counts.repeated,
            unchanged=counts.repeated,
            rejected=counts.rejected,
            report_bucket=None if report is None else report.bucket,
            report_key=None if report is None else report.key,
            report=report,
            first_rejections=tuple(
                LineRejection(line=r.line, field=r.field, reason=r.reason[:500])
                for r in rejections[:FIRST_REJECTIONS_IN_EVENT]
            ),
        )
    )
    return IngestResult(
        file_id=file_id,
        lines=counts.lines,
        accepted=counts.accepted,
        changed=counts.changed,
        repeated=counts.repeated,
        determined=determined,
        fees=fees,
        rejected=counts.rejected,
        report_key=None if report is None else report.key,
    )
