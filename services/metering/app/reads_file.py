"""A register read file (``reads/``) and one read posted by staff: reads are facts.

A read new to its meter's series is ``accepted``; the same meter, day and reading again
(in this file or an earlier one) is ``repeated``; the same meter and day with another
reading is ``rejected`` with both values (X-READS). A read dated in the future, or naming a
meter not registered yet, is refused for now: the cause can change, so the file is read
again when it is sent again, and such a read is taken in then (issue 26).

Fields (issue 27): ``meter_id`` a safe id (``common.fields``); ``read_on`` between the
tenant's first tariff version and ``today`` (``common.fields.DateWindow.happened``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from metering.app.core import (
    READS_HEADER,
    AccountKey,
    BatchOutput,
    FailedRead,
    FieldRules,
    IngestResult,
    MeteringRepository,
    NoReport,
    Run,
    Settings,
    UploadedFile,
    any_date_rules,
    determine_touched,
    publish,
    rejection,
)
from metering.domain import csvinput as cin
from metering.domain.model import AccountMetering
from metering.domain.readings import Accepted, Duplicate, Reading, Refused, apply_reading

READ_TYPES = ("actual", "customer", "estimated")


def parse_read(cells: dict[str, str], tenants: Sequence[str], rules: FieldRules, line: int) -> Reading:
    """One read's cells checked (raises cin.BadField). A read dated after ``today`` passes here:
    ``apply_reading`` refuses it against its meter, so it is kept as a failed read whose cause
    can change."""
    tenant = cin.tenant(cells, tenants)
    meter_id = cin.safe_id(cells, "meter_id")
    read_on = cin.a_date(cells, "read_on")
    assert read_on is not None
    window = rules.window(tenant)
    if read_on <= window.today:  # a read in the future is refused against its meter (kept, may change)
        cin.in_window("read_on", lambda: window.happened("read_on", read_on, tenant=tenant))
    return Reading(
        tenant=tenant,
        meter_id=meter_id,
        read_on=read_on,
        reading=cin.a_number(cells, "reading"),  # type: ignore[arg-type]
        read_type=cin.choice(cells, "read_type", READ_TYPES, "actual"),  # type: ignore[arg-type]
        line=line,
    )


def parse_reads(rows: list[cin.Row], run: Run, tenants: Sequence[str], rules: FieldRules) -> list[Reading]:
    reads = []
    for row in rows:
        try:
            reads.append(parse_read(row.cells, tenants, rules, row.line))
        except cin.BadField as exc:
            future = exc.column == "read_on" and "in the future" in exc.reason
            run.reject(rejection(row.line, exc.column, exc.reason), may_change=future)
    return reads


def reads_batch(
    reads: list[Reading],
    run: Run,
    repo: MeteringRepository,
    settings: Settings,
    now: datetime,
    today: date,
    file_id: str | None = None,
) -> BatchOutput:
    """The batch's reads applied to their accounts' states. ``file_id``: the file they come
    from, whose earlier delivery or pass may have taken some of them in (``core``'s doc)."""
    out = BatchOutput()
    counts = run.counts
    seen: list[
        tuple[Reading, str, bool]
    ] = []  # (read, account, refused): lines this file may have taken in before
    registered = repo.meter_accounts({(r.tenant, r.meter_id) for r in reads})
    accounts = repo.accounts({(tenant, account_id) for (tenant, _), account_id in registered.items()})
    touched: dict[AccountKey, AccountMetering] = {}
    replaced: dict[AccountKey, list[tuple[str, date, date]]] = {}
    refusals: dict[int, tuple[FailedRead, bool]] = {}
    for read in sorted(reads, key=lambda r: (r.tenant, r.meter_id, r.read_on, r.line)):
        account_id = registered.get((read.tenant, read.meter_id))
        if account_id is None:
            reason = f"unknown meter {read.meter_id} of {read.tenant}"
            run.reject(rejection(read.line, "meter_id", reason), may_change=True)
            continue
        account = accounts.get((read.tenant, account_id))
        series = account.series.get(read.meter_id) if account else None
        if account is None or series is None:
            reason = f"meter {read.meter_id} is not registered on an account"
            run.reject(rejection(read.line, "meter_id", reason), may_change=True)
            continue
        outcome = apply_reading(
            account, series, read, today=today, factor=settings(read.tenant).high_low_factor
        )
        if isinstance(outcome, Duplicate):
            seen.append((read, account.account_id, False))
        elif isinstance(outcome, Refused):
            failed = FailedRead(read, account.account_id, outcome.column, outcome.reason[:300])
            refusals[read.line] = (failed, "in the future" in outcome.reason)
            seen.append((read, account.account_id, True))
        else:
            counts.accepted += 1
            out.reads.append((read, account.account_id, run.pass_))
            touched[(account.tenant, account.account_id)] = account
            if isinstance(outcome, Accepted) and outcome.replaced_after is not None:
                replaced.setdefault((account.tenant, account.account_id), []).append(
                    (read.meter_id, outcome.replaced_after, read.read_on)
                )
    lines = [r.line for r in reads]
    taken = repo.reads_taken_in(file_id, min(lines), max(lines)) if file_id and seen else {}
    for read, account_id, refused in seen:
        pass_ = taken.get(read.line)
        if pass_ is None:
            if refused:
                failed, may_change = refusals[read.line]
                run.reject(rejection(read.line, failed.column, failed.reason), may_change=may_change)
                out.failed_reads.append(failed)
            else:
                counts.repeated += 1
            continue
        # this file's own line, taken in before: by this pass's crashed delivery (accepted),
        # or by an earlier pass (repeated); kept in the file's record of its lines either way
        out.reads.append((read, account_id, pass_))
        if pass_ == run.pass_:
            counts.accepted += 1
            out.redelivered = True
        else:
            counts.repeated += 1
    determine_touched(touched, out, run, settings, now, today, replaced)
    return out


def take_in_read(
    read: Reading,
    *,
    source: str,
    repo: MeteringRepository,
    settings: Settings,
    now: datetime,
    today: date,
) -> tuple[str, IngestResult]:
    """One read from the HTTP API: ``accepted``, ``duplicate`` or ``rejected`` (reason in the result)."""
    file = UploadedFile(bucket="", key=source, etag="")
    run = Run(file, NoReport())
    run.counts.lines = 1
    out = reads_batch([read], run, repo, settings, now, today)
    publish(out, run, now)
    repo.save(out, file_id=f"api-{source}", now=now)
    run.flush()
    counts = run.counts.check()
    status = "rejected" if counts.rejected else "duplicate" if counts.repeated else "accepted"
    return status, IngestResult(
        file_id=source,
        accepted=counts.accepted,
        repeated=counts.repeated,
        rejected=counts.rejected,
        lines=counts.lines,
        consumptions=run.consumptions,
        first_rejections=tuple(run.first),
    )


def reading_from_request(
    tenant: str,
    meter_id: str,
    body: dict[str, Any],
    tenants: Sequence[str],
    rules: FieldRules | None = None,
    today: date | None = None,
) -> Reading:
    """A single read posted to the API, checked like a file's row (raises cin.BadField)."""
    cells = {k: str(v).strip() for k, v in body.items() if v is not None and k in READS_HEADER.columns}
    unknown = sorted(set(body) - set(READS_HEADER.columns) - {"tenant", "meter_id"})
    if unknown:
        raise cin.BadField(unknown[0], "unknown field")
    cells.update(tenant=tenant, meter_id=meter_id)
    if rules is None:
        rules = any_date_rules(today or date.max)
    return parse_read(cells, tenants, rules, 0)
