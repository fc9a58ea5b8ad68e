"""Use case: take in an uploaded read file (DESIGN "Flow": S3 upload -> metering).

Idempotent by business key: a consumption is stored once per (tenant, account, period)
and a file once per content digest, so the same file uploaded again (same key and etag,
or the same bytes under another key) changes nothing and publishes nothing. Each new
consumption is written in the same transaction as its ``ConsumptionDetermined`` outbox
entry; the file record is written last with its ``ReadsRejected`` entry, so a crash in
between is repaired by the retry, which finds the stored consumptions and skips them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from common.clock import Clock
from common.errors import PermanentError
from common.ids import content_digest
from metering.domain.consumption import Consumption, ConsumptionKey, parse_reads
from metering.events import ConsumptionDetermined, LineRejection, ReadsRejected


class ObjectMissing(PermanentError):
    """The uploaded object is gone (deleted before we read it)."""


@dataclass(frozen=True)
class ReadFile:
    bucket: str
    key: str
    etag: str


class ObjectStore(Protocol):
    def read(self, bucket: str, key: str) -> bytes: ...


class ReadsRepository(Protocol):
    def file_seen(self, file_id: str) -> bool: ...

    def stored_volumes(self, keys: Sequence[ConsumptionKey]) -> dict[ConsumptionKey, int]: ...

    def record_consumptions(self, determined: Sequence[ConsumptionDetermined]) -> None:
        """Store each consumption with its outbox event, atomically per consumption.

        Raises ``TransientError`` if one was stored concurrently (the retry sorts it out).
        """
        ...

    def record_file(
        self, file: ReadFile, file_id: str, accepted: int, rejected: ReadsRejected | None
    ) -> None:
        """Record the file as taken in, with its rejection event; a no-op if already recorded."""
        ...


@dataclass(frozen=True)
class IngestResult:
    file_id: str
    duplicate_file: bool = False
    accepted: int = 0
    repeated: int = 0
    rejected_lines: tuple[int, ...] = ()


def ingest_read_file(
    file: ReadFile,
    *,
    store: ObjectStore,
    repo: ReadsRepository,
    clock: Clock,
    tenants: Collection[str] | None = None,
) -> IngestResult:
    try:
        data = store.read(file.bucket, file.key)
        file_id = content_digest(data)
    except ObjectMissing as exc:
        data = None
        file_id = "missing-" + content_digest(f"{file.bucket}/{file.key}@{file.etag}".encode())
        missing_reason = str(exc) or "the object no longer exists"
    if repo.file_seen(file_id):
        return IngestResult(file_id=file_id, duplicate_file=True)

    now = clock.now()
    if data is None:
        rejections = [LineRejection(line=0, column="(file)", reason=missing_reason)]
        new: list[Consumption] = []
        repeated = 0
    else:
        parsed = parse_reads(data, tenants=tenants)
        rejections = list(parsed.rejected)
        stored = repo.stored_volumes([c.key for c in parsed.accepted])
        new, repeated = [], 0
        for consumption in parsed.accepted:
            volume = stored.get(consumption.key)
            if volume is None:
                new.append(consumption)
            elif volume == consumption.volume_gal:
                repeated += 1
            else:
                rejections.append(
                    LineRejection(
                        line=consumption.line,
                        column="volume_gal",
                        reason=f"{volume} gal already recorded for this account and period",
                    )
                )

    repo.record_consumptions(
        [
            ConsumptionDetermined(
                occurred_at=now,
                tenant=c.tenant,
                account_id=c.account_id,
                period_start=c.period_start,
                period_end=c.period_end,
                volume_gal=c.volume_gal,
                source_file=file.key,
            )
            for c in new
        ]
    )
    rejections.sort(key=lambda r: r.line)
    rejected_event = (
        ReadsRejected(
            occurred_at=now, file_key=file.key, etag=file.etag, file_id=file_id, rejections=tuple(rejections)
        )
        if rejections
        else None
    )
    repo.record_file(file, file_id, accepted=len(new), rejected=rejected_event)
    return IngestResult(
        file_id=file_id,
        accepted=len(new),
        repeated=repeated,
        rejected_lines=tuple(r.line for r in rejections),
    )
