"""Use cases: take in a meters file, a register read file, an interval file or one read
(DESIGN "Flow"). The entry points the handlers and the composition root use; each file kind
has its module (``meters_file``, ``reads_file``, ``interval_file``; ``estimates`` for the
daily run), and ``core`` what they share: the counters, the file's record and passes, and
what a repeated or changed line means (issue 26).

A file is streamed and taken in ``batch_rows`` rows at a time: each batch reads the meters
and account states it needs (batched gets), applies its rows, determines every period that
became complete and writes the results (batched writes), so memory holds one batch whatever
the file's size (issue 7).

Write pattern (STYLE 17 and 18, for the services that follow). No transaction: every item
written is either a fact on its own or a projection of one, and the order makes a crash
harmless. Per batch: (1) each chunk of at most ``CHUNK_MAX`` consumptions as ONE outbox item
(``ConsumptionsDetermined``; the table's stream publishes it, and the item stays as the record
of the determinations: no second item per period), (2) the reads (accepted ones and failed
ones, flagged), (3) the meters' history, then the meters, (4) the account states. Event ids
are derived from the file (and its pass) and the business key, so a retry after a crash
rewrites identical items: the stream sees a MODIFY, not an INSERT, and publishes nothing
twice. A file is recorded last, with its counts and its ``ReadsRejected`` summary. The same
file again (same content digest: S3's ETag of the same bytes) is a duplicate only when that
record is final; otherwise it is read again as a new pass (``core``'s module doc), whose
events have ids of their own.

A redelivery after a crash (issue 26) ends as the run without the crash would have, because
what it derives comes from what is stored, not from what the crashed delivery happened to
write first:

- a read that the account's state already holds, and that this file's own record of its
  lines (``READS#<file_id>``, written before the states) shows accepted at that line, was
  taken in by the crashed delivery of this pass: it is counted accepted again and recorded
  again, not "repeated" (taken in by an earlier pass: repeated); its consumptions are stored
  already (chunks are written first);
- a meter whose item this file's same line wrote in this pass is counted as that line was
  (accepted or changed) again, its history not written twice, and registered on its account
  if the crashed delivery stopped before the account's state;
- a chunk's number is its batch's (``batch * CHUNKS_PER_BATCH`` plus its place in the
  batch), not a count of what this delivery determined, so a batch that determines nothing
  again (its states were written) does not shift the next batch's chunks onto the numbers
  (and event ids) of chunks already published; and a batch that finds itself taken in
  before keeps the chunks already stored (``BatchOutput.redelivered``), which hold all of
  its consumptions, rather than rewrite them with the part it determines again.

Fields are checked against their world (issue 27) by ``FieldRules``: the tenant's first
tariff version to ``today`` for the dates of facts, the tariff in force's meter sizes.

Files of one function are taken in one at a time (the template feeds the function from a
FIFO queue with one message group), so account states are written without version conditions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime
from itertools import islice

from metering.app.core import (
    BATCH_ROWS,
    CHUNKS_PER_BATCH,
    MAX_DIGITS,
    MAX_FILE_BYTES,
    MAX_INTERVAL_FILE_BYTES,
    METERS_HEADER,
    READS_HEADER,
    AccountDirectory,
    AccountKey,
    BatchOutput,
    FailedRead,
    FieldRules,
    FileRecord,
    IngestResult,
    MeteringRepository,
    MeterKey,
    ObjectMissing,
    RejectionReport,
    Run,
    Settings,
    TakenIn,
    UploadedFile,
    any_date_rules,
    duplicate,
    file_rejected,
    finish,
    publish,
    start,
)
from metering.app.estimates import estimate_missing
from metering.app.interval_file import publish_satellite_flow, take_in_interval_file
from metering.app.meters_file import meters_batch
from metering.app.reads_file import parse_reads, reading_from_request, reads_batch, take_in_read
from metering.domain import csvinput as cin
from metering.events import LineRejection

__all__ = [
    "BATCH_ROWS",
    "MAX_DIGITS",
    "MAX_FILE_BYTES",
    "MAX_INTERVAL_FILE_BYTES",
    "AccountKey",
    "BatchOutput",
    "FailedRead",
    "FieldRules",
    "FileRecord",
    "IngestResult",
    "MeterKey",
    "MeteringRepository",
    "ObjectMissing",
    "RejectionReport",
    "TakenIn",
    "UploadedFile",
    "estimate_missing",
    "publish_satellite_flow",
    "reading_from_request",
    "take_in_file",
    "take_in_interval_file",
    "take_in_read",
]


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
    rules: FieldRules | None = None,
    directory: AccountDirectory | None = None,
) -> IngestResult:
    """Take in a ``meters`` or ``reads`` file (CONTRACTS.md "Import files"), streamed
    ``batch_rows`` rows at a time. A file whose last run was final is a duplicate.
    ``directory``: billing's accounts (issue 26): a new meter on an account not known yet
    waits in suspense for it (``metering.app.accounts``)."""
    is_duplicate, before = start(file, repo)
    if is_duplicate:
        return duplicate(file, before)
    rules = rules or any_date_rules(today)
    run = Run(file, report, pass_=before.passes if before else 0)
    header = METERS_HEADER if kind == "meters" else READS_HEADER
    if file.size > MAX_FILE_BYTES:
        file_rejected(run, f"larger than {MAX_FILE_BYTES} bytes")
    else:
        try:
            rows = cin.rows(chunks, header)
            number = 0
            while batch := list(islice(rows, batch_rows)):
                run.chunk_index = number * CHUNKS_PER_BATCH  # the batch's own numbers (module doc)
                number += 1
                run.counts.lines += len(batch)
                parsed = [r for r in batch if isinstance(r, cin.Row)]
                for r in batch:
                    if isinstance(r, LineRejection):
                        run.reject(r)
                if kind == "meters":
                    out = meters_batch(parsed, run, repo, settings, tenants, rules, now, today, directory)
                else:
                    reads = parse_reads(parsed, run, tenants, rules)
                    out = reads_batch(reads, run, repo, settings, now, today, file.file_id)
                publish(out, run, now)
                repo.save(out, file_id=file.file_id, now=now)
                run.flush()
        except cin.FileRejected as exc:
            file_rejected(run, exc.rejection.reason, exc.rejection.line, exc.rejection.column)
        except ObjectMissing as exc:
            file_rejected(run, str(exc))
    run.flush()
    return finish(file, kind, run, repo, report, now, before)
