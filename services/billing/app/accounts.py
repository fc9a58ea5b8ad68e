"""Accounts: an accounts file taken in (CONTRACTS.md "Import files"), and the payments that
waited in suspense for an account taken in when it arrives (issue 26).

Accounts are records: a line identical to the version held (from an earlier file, or an
earlier line of this one) is ``repeated`` and writes nothing; a line that differs is
``changed``, a new version kept as history; a line for an account not held is
``accepted``. The file is read as a stream, :data:`~billing.app.common.BATCH_LINES` lines
at a time, so memory does not grow with it.

A redelivery after a crash counts each line as the run without the crash did: every
version an import writes names its run (one delivery of one upload: the EventBridge event's
id, the same on every redelivery of it), its line and how the line was counted, and a line
is judged against what is stored:

- the held version is this run's, of this very line: the crashed delivery wrote it; the
  line counts as it did then and its items are rewritten unchanged;
- of an earlier line of this run: compared as any held version (repeated or changed);
- of a later line of this run (the crashed delivery had gone past this line): the line's
  own history item, if it wrote one, says how it counted; none means it was repeated.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import date, datetime, timedelta
from typing import Any

from billing.adapters.items import account_item
from billing.adapters.repository import BillingRepo
from billing.app.common import FileResult, LineReport, NoReport, batches
from billing.domain.accounts import (
    METER_SIZES,
    AccountRecord,
    BillsFromRules,
    TakenAccount,
    read_account_lines,
)
from billing.domain.csvfiles import LineError
from common.tariffs import PPSewerTariff, TariffBook


def bills_from_rules(book: TariffBook, today: date) -> BillsFromRules:
    """What an account's cells are checked against: each tenant's period length (of its
    latest tariff version), its first tariff version's date, today, and the meter sizes and
    rate zones its tariff versions list (a size or zone of any version: an account may be
    billed across a change of tariff)."""
    sizes: dict[str, frozenset[str]] = {}
    zones: dict[str, frozenset[str]] = {}
    for tenant in book.tenants:
        listed: set[str] = set()
        tenant_zones: set[str] = set()
        for version in book.versions(tenant):
            charge = getattr(version, "service_charge", None)
            if charge is None:
                continue
            if isinstance(version, PPSewerTariff):
                tenant_zones |= set(version.zones)
                listed |= {m for by_size in charge.value.values() for m in by_size}
                listed |= set(version.meter_size_aliases)
            elif isinstance(charge.value, dict):
                listed |= set(charge.value)
        if listed:
            sizes[tenant] = frozenset(listed & set(METER_SIZES))
        zones[tenant] = frozenset(tenant_zones)
    return BillsFromRules(
        months={t: book.versions(t)[-1].billing_period_months for t in book.tenants},
        first_tariff={t: book.first_effective(t) for t in book.tenants},
        today=today,
        meter_sizes=sizes,
        zones=zones,
    )


def take_in_account_file(
    chunks: Iterable[bytes],
    *,
    source: str,
    run: str,
    repo: BillingRepo,
    tenants: Collection[str],
    now: datetime,
    rules: BillsFromRules | None = None,
    report: LineReport | None = None,
    release: Any = None,
    redelivered: bool = True,
) -> FileResult:
    """accounts/ upload: each line counted (accepted, repeated, changed, rejected), good lines
    kept as history, bad ones reported with line, column and cause. ``release(tenant,
    account_ids)``: the payments waiting for these accounts taken in (``payments.release_waiting``).
    ``redelivered``: this may be a redelivery (SQS's receive count above 1; true unless
    known otherwise): a version to write is first looked for among the history items of
    its run and line, so one the crashed delivery wrote is rewritten under its key, never
    recorded twice."""
    result = FileResult(report=report or NoReport())
    for batch in batches(read_account_lines(chunks, tenants, rules)):
        result.counts.lines += len(batch)
        good: list[tuple[int, AccountRecord]] = []
        for line, got in batch:
            if isinstance(got, LineError):
                result.reject(got)
            else:
                good.append((line, got))
                result.tenants.add(got.tenant)
        _take_batch(good, result=result, source=source, run=run, repo=repo, now=now, redelivered=redelivered)
        if release is not None and good:
            by_tenant: dict[str, list[str]] = {}
            for _, record in good:
                by_tenant.setdefault(record.tenant, []).append(record.account_id)
            for tenant, ids in sorted(by_tenant.items()):
                release(tenant, list(dict.fromkeys(ids)))
    result.counts.check()
    return result


def _take_batch(
    good: list[tuple[int, AccountRecord]],
    *,
    result: FileResult,
    source: str,
    run: str,
    repo: BillingRepo,
    now: datetime,
    redelivered: bool = False,
) -> None:
    held = repo.current_accounts([(r.tenant, r.account_id) for _, r in good])
    writes: list[TakenAccount] = []
    state: dict[tuple[str, str], dict[str, Any]] = dict(held)
    counts = result.counts
    for line, record in good:
        key = (record.tenant, record.account_id)
        mine = account_item(record, "")["record"]
        last = state.get(key)
        own = last is not None and last.get("run") == run
        if own and last is not None and int(last.get("line", -1)) == line:
            kind = str(last.get("kind", "accepted"))  # the crashed delivery wrote this line
            writes.append(TakenAccount(record, run, line, kind, str(last["recorded_at"])))  # type: ignore[arg-type]
        elif own and last is not None and int(last.get("line", -1)) > line:
            # a later line of this run is held: how this line counted is in its history item
            h = repo.history_line(record.tenant, record.account_id, run, line)
            kind = str(h["kind"]) if h is not None else "repeated"
        elif last is not None and last.get("record") == mine:
            kind = "repeated"
        else:
            kind = "accepted" if last is None else "changed"
            # Each line its own instant, in file order: two versions of one account in one
            # file are two history items, the later one in force (``account_as_of``).
            at = (now + timedelta(microseconds=line)).isoformat()
            if redelivered and (h := repo.history_line(record.tenant, record.account_id, run, line)):
                at = str(h["recorded_at"])  # the crashed delivery's version of this line
            writes.append(TakenAccount(record, run, line, kind, at))  # type: ignore[arg-type]
            state[key] = {"record": mine, "run": run, "line": line, "kind": kind, "recorded_at": at}
        counts.accepted += kind == "accepted"
        counts.changed += kind == "changed"
        counts.repeated += kind == "repeated"
    if writes:
        repo.store_account_lines(writes, source=source)


def put_account(
    record: AccountRecord, *, source: str, repo: BillingRepo, now: datetime, release: Any = None
) -> str:
    """An account added or changed by staff (``PUT /staff/{tenant}/accounts/{id}``): a new
    version unless identical to the one held; then its waiting payments are taken in.
    Returns how it counted (accepted, changed or repeated)."""
    result = FileResult()
    result.counts.lines = 1
    _take_batch(
        [(0, record)], result=result, source=source, run=f"{source}@{now.isoformat()}", repo=repo, now=now
    )
    if release is not None:
        release(record.tenant, [record.account_id])
    c = result.counts
    return "accepted" if c.accepted else "changed" if c.changed else "repeated"
