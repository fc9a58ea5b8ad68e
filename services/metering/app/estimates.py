"""The daily run's estimates (X-PERIOD): every open period determined, estimating where the
read window has passed."""

from __future__ import annotations

from datetime import date, datetime
from itertools import islice

from metering.app.core import (
    BATCH_ROWS,
    CHUNKS_PER_BATCH,
    BatchOutput,
    MeteringRepository,
    NoReport,
    Run,
    Settings,
    UploadedFile,
    consumption_event,
    publish,
)
from metering.domain.determination import determine, next_estimate_on


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
    run = Run(UploadedFile(bucket="", key=f"schedule:estimate/{run_id}", etag=""), NoReport())
    keys = repo.all_account_keys()
    total = 0
    number = 0
    while batch := list(islice(keys, BATCH_ROWS)):
        run.chunk_index = number * CHUNKS_PER_BATCH  # the batch's own numbers (ingest's module doc)
        number += 1
        out = BatchOutput()
        for account in repo.accounts(batch).values():
            found = determine(account, settings(account.tenant), today=today, estimate=True)
            if next_on is not None:
                next_on.append(next_estimate_on(account, settings(account.tenant), today=today))
            if found:
                out.consumptions.extend(
                    consumption_event(d, run.file.key, f"estimate#{run_id}", now) for d in found
                )
                out.accounts.append(account)
        total += len(out.consumptions)
        publish(out, run, now)
        repo.save(out, file_id=f"estimate-{run_id}", now=now)
    return total
