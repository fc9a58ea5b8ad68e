"""Billing's accounts kept by metering, and the meters waiting for them taken in (issue 26).

Each version of an ``AccountsChanged`` is kept when it is later than the one held; then
every meters-file line waiting for one of these accounts is taken in as its file would have
taken it: its lines of one file as one batch of a run of their own, whose ids derive from
the file, the tenant and the account, so a retry after a crash counts what the crashed
delivery stored as its own and publishes nothing twice. A line refused now (the meter was
registered on another account meanwhile) stays listed with its cause.

The account events come through the meters-file queue (FIFO, one message group), so a
release never runs beside a file's intake: account states are written without conditions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from metering.app.core import (
    AccountDirectory,
    FieldRules,
    MeteringRepository,
    NoReport,
    Run,
    Settings,
    UploadedFile,
    any_date_rules,
    publish,
)
from metering.app.meters_file import meters_batch
from metering.domain import csvinput as cin
from metering.domain.accounts import BilledAccount, WaitingMeter
from metering.events import LineRejection


@dataclass(frozen=True)
class AccountsKept:
    versions: int
    kept: int
    meters_taken_in: int


def keep_accounts(
    accounts: Sequence[BilledAccount],
    *,
    repo: MeteringRepository,
    directory: AccountDirectory,
    settings: Settings,
    tenants: Sequence[str],
    now: datetime,
    today: date,
    rules: FieldRules | None = None,
) -> AccountsKept:
    """Keep billed accounts of the metered tenants, then take in the meters waiting for
    them (every account of the chunk is looked up: a redelivery finishes a crashed release)."""
    mine = [a for a in accounts if a.tenant in tenants]
    kept = directory.keep_accounts(mine)
    taken = 0
    for tenant in sorted({a.tenant for a in mine}):
        ids = sorted({a.account_id for a in mine if a.tenant == tenant})
        taken += take_in_waiting_meters(
            tenant,
            ids,
            repo=repo,
            directory=directory,
            settings=settings,
            tenants=tenants,
            now=now,
            today=today,
            rules=rules,
        )
    return AccountsKept(versions=len(accounts), kept=kept, meters_taken_in=taken)


class _Refusals(NoReport):
    """The lines a release refused, by line (they stay listed in suspense with the cause)."""

    def __init__(self) -> None:
        self.by_line: dict[int, str] = {}

    def add(self, rejection: LineRejection) -> None:
        self.by_line.setdefault(rejection.line, rejection.reason)


def take_in_waiting_meters(
    tenant: str,
    account_ids: Sequence[str],
    *,
    repo: MeteringRepository,
    directory: AccountDirectory,
    settings: Settings,
    tenants: Sequence[str],
    now: datetime,
    today: date,
    rules: FieldRules | None = None,
) -> int:
    """Take in the meters waiting for these accounts, now known (module doc); returns how
    many were taken in."""
    marked = directory.suspended(tenant, account_ids)
    known = directory.known_accounts({(tenant, a) for a in marked})
    taken_in = 0
    for account_id in sorted(a for a in marked if (tenant, a) in known):
        by_file: dict[tuple[str, str], list[WaitingMeter]] = {}
        for w in directory.waiting_meters(tenant, account_id):
            by_file.setdefault((w.file_id, w.file_key), []).append(w)
        taken: list[WaitingMeter] = []
        refused: dict[WaitingMeter, str] = {}
        for (file_id, file_key), lines in sorted(by_file.items()):
            lines.sort(key=lambda w: w.line)
            report = _Refusals()
            # its own run: ids derive from the file, the tenant and the account (module doc)
            file = UploadedFile(bucket="", key=file_key, etag=f"suspense-{file_id}-{tenant}-{account_id}")
            run = Run(file, report)
            run.counts.lines = len(lines)
            rows = [cin.Row(w.line, dict(w.cells)) for w in lines]
            out = meters_batch(
                rows, run, repo, settings, tenants, rules or any_date_rules(today), now, today, directory
            )
            publish(out, run, now)
            repo.save(out, file_id=file.file_id, now=now)
            run.flush()
            for w in lines:
                if w.line in report.by_line:
                    refused[w] = report.by_line[w.line]
                else:
                    taken.append(w)
        directory.settle_meters(tenant, account_id, taken, refused)
        taken_in += len(taken)
    return taken_in
