"""Use cases: take in a lab file, and reclassify an account on every finalised result.

Idempotent by business key: a sample once per (tenant, sample id) and a result once per
(tenant, sample id, parameter). A lab result is a fact: a line repeating a result taken in
(in this file or an earlier one) is ``repeated``; another value for it is a rejected line
naming both values (issue 26). Every data line ends in one of the counts of
:class:`common.imports.ImportCounts` (accepted, repeated, rejected), which add up to the
file's data lines.

A file is skipped as a duplicate (by content digest, under any key) only when it was
*settled*: every line taken in, waiting or refused for a cause that cannot change. A file
with a line dated after today is read again when it is sent again, and takes in what has
become acceptable.

A line naming an account sampling does not know yet (billing has not published it: a lab
file uploaded before its accounts file) is ``waiting`` (the fifth count): kept in suspense
with that reason and taken in by :func:`take_in_waiting` when the account arrives, as its
file would have taken it (issue 26; ``sampling.domain.accounts``).

Crash safety (issue 26): counts and events are derived from what is stored, by business
key. Each result records the file that stored it, so a redelivery after a crash counts the
results its own first delivery stored as ``accepted`` (``repeated`` only when an earlier
file stored them); and each classification records the file whose intake recorded it, so a
redelivery finds it and does not classify the account a second time (the category has
moved, so a second event would differ from the first).

After the results are stored, each account with a new final result is reclassified and
one strength event is published per account (not per row). PP samples are charged
(PP-SEW-SAMPLE-COST), far-off results flagged (PP-SEW-RESAMPLE) and satellite deadlines
set (PP-SEW-SAT-SAMPLE). The file record goes last with its summary event, so a crash in
between is repaired by the redelivery, which finds the stored results and skips them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Protocol
from zoneinfo import ZoneInfo

from common.clock import Clock
from common.errors import PermanentError
from common.events import Event
from common.fields import DateWindow
from common.ids import content_digest
from common.imports import ImportCounts
from common.money import round_line
from common.reports import Report
from common.values import FIRST_DATE
from sampling.domain.accounts import waiting_reason
from sampling.domain.classifying import FinalResult, classify_account
from sampling.domain.lab_files import LabRow, LineRejection, SampleKind, parse_lab_file
from sampling.domain.policy import Policies, TenantPolicy
from sampling.domain.samples import AccountInfo, AccountRecord, deviation_flags, final_results, lab_result
from sampling.domain.satellite import ResultsDeadline, results_deadline
from sampling.domain.strength import CLASSIFIED_TENANTS, PLEASANT_PRAIRIE_SEWER, SULLIVAN_SEWER
from sampling.domain.sullivan import MILLION, POUNDS_FACTOR, is_industrial_user
from sampling.events import (
    IndustrialUser,
    LabFileTakenIn,
    LabLineRejection,
    ResampleFlagged,
    SamplingCostCharged,
    SamplingCostsCharged,
    StrengthClassified,
)

LOCAL_TZ = ZoneInfo("America/Chicago")


def local_today(now: datetime) -> date:
    """The utility's calendar day (America/Chicago) at ``now``."""
    return now.astimezone(LOCAL_TZ).date()


class ObjectMissing(PermanentError):
    """The uploaded object is gone (deleted before it was read)."""


@dataclass(frozen=True)
class LabFile:
    bucket: str
    key: str
    etag: str


@dataclass(frozen=True)
class StoredSample:
    account_id: str
    collected_on: date
    kind: str
    resample_of: str | None


@dataclass(frozen=True)
class StoredValue:
    """A result as stored: its value (mg/l; pH units) and the lab file that stored it."""

    value: Decimal
    file_id: str | None = None


@dataclass
class Checked:
    """A file's rows after consulting the store (:func:`check_against_stored`)."""

    new: list[LabRow] = field(default_factory=list)
    rejected: list[LineRejection] = field(default_factory=list)
    repeated: list[LabRow] = field(default_factory=list)
    # Stored by an earlier delivery of this same file (a crash after storing them): they
    # are this file's and count as accepted, as a run without the crash counted them.
    restored: list[LabRow] = field(default_factory=list)
    # Naming an account not known yet: they wait in suspense for it (issue 26).
    waiting: list[LabRow] = field(default_factory=list)


@dataclass(frozen=True)
class WaitingRow:
    """A lab line waiting in suspense: the row, the file it came from and its key there."""

    row: LabRow
    file_id: str
    file_key: str


class ObjectStore(Protocol):
    def read(self, bucket: str, key: str) -> bytes: ...


class ReportStore(Protocol):
    def write_rejections(self, file_id: str, rows: Iterable[Mapping[str, object]]) -> Report:
        """Write a file's rejected lines whole to S3 (claim check); returns the pointer."""
        ...


class SamplingRepository(Protocol):
    def file_seen(self, file_id: str) -> bool: ...

    def accounts(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], AccountInfo]: ...

    def stored_samples(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], StoredSample]: ...

    def stored_values(
        self, keys: Collection[tuple[str, str, str, str]]
    ) -> dict[tuple[str, str, str, str], StoredValue]:
        """Stored values by (tenant, account, sample, parameter), with the file that stored each."""
        ...

    def record_results(self, rows: Sequence[LabRow], file_id: str | None = None) -> None:
        """Store each sample and result once, each result with the lab file storing it."""
        ...

    def account(self, tenant: str, account_id: str) -> AccountRecord: ...

    def account_records(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], AccountRecord]:
        """Many accounts' records at once (a lab file names many)."""
        ...

    def record_classification(
        self, event: StrengthClassified, exit_returns_on: date | None, expected_version: int
    ) -> None:
        """Replace the account's classification (conditional on its version) with its event."""
        ...

    def record_classifications(
        self, classified: Sequence[tuple[StrengthClassified, AccountRecord]], by: str | None = None
    ) -> None:
        """Replace accounts' classifications (each conditional on the version of the record it
        was computed from) whose events are already published; ``by``: the lab file."""
        ...

    def record_deadline(self, tenant: str, account_id: str, deadline: ResultsDeadline) -> None: ...

    def publish(self, events: Sequence[Event]) -> None:
        """Put events in the outbox, once per business key."""
        ...

    def record_file(
        self, file: LabFile, file_id: str, summary: LabFileTakenIn, *, settled: bool = True
    ) -> None:
        """The file's record and summary event; ``settled``: no line could turn out
        differently later (:meth:`file_seen` is then true)."""
        ...

    def suspend(self, rows: Sequence[LabRow], *, file_id: str, file_key: str) -> None:
        """Keep lines for accounts not known yet in suspense, with the reason, and a mark
        per account (what an arriving account looks up); rewriting them is harmless."""
        ...

    def suspended(self, tenant: str, account_ids: Collection[str]) -> set[str]:
        """Which of these accounts have lines waiting (their marks)."""
        ...

    def waiting_rows(self, tenant: str, account_id: str) -> list[WaitingRow]:
        """The account's lines in suspense, by file and line."""
        ...

    def settle_waiting(
        self, tenant: str, account_id: str, taken: Sequence[WaitingRow], refused: Mapping[WaitingRow, str]
    ) -> None:
        """The lines taken in leave suspense; those refused stay listed with the cause (no
        longer waiting); the account's mark goes last."""
        ...


@dataclass(frozen=True)
class IntakeResult:
    file_id: str
    duplicate_file: bool = False
    counts_: ImportCounts = field(default_factory=ImportCounts)
    rejected_lines: tuple[int, ...] = ()
    classified: tuple[str, ...] = ()
    report_key: str | None = None

    @property
    def accepted(self) -> int:
        return self.counts_.accepted

    @property
    def repeated(self) -> int:
        return self.counts_.repeated

    @property
    def rejected(self) -> int:
        return self.counts_.rejected

    def counts(self) -> dict[str, object]:
        """What a log line says: counts, not the lines and accounts (a file can be large)."""
        return {
            "file_id": self.file_id,
            "duplicate_file": self.duplicate_file,
            **self.counts_.as_dict(),
            "classified": len(self.classified),
            "report_key": self.report_key,
        }


def date_windows(policies: Policies, today: date) -> dict[str, DateWindow]:
    """Each classified tenant's window for lab dates: its first tariff version to today."""
    windows = {}
    for tenant in CLASSIFIED_TENANTS:
        first = policies(tenant, today).first_tariff_on
        windows[tenant] = DateWindow(first or FIRST_DATE, today)
    return windows


def ingest_lab_file(
    file: LabFile,
    *,
    store: ObjectStore,
    reports: ReportStore,
    repo: SamplingRepository,
    clock: Clock,
    policies: Policies,
) -> IntakeResult:
    try:
        data: bytes | None = store.read(file.bucket, file.key)
    except ObjectMissing as exc:
        data = None
        missing = str(exc) or "the object no longer exists"
    file_id = content_digest(
        data if data is not None else f"missing:{file.bucket}/{file.key}@{file.etag}".encode()
    )
    if repo.file_seen(file_id):
        return IntakeResult(file_id=file_id, duplicate_file=True)

    now = clock.now()
    today = local_today(now)
    rejections: list[LineRejection] = []
    checked = Checked()
    lines = in_file_repeats = 0
    if data is None:
        rejections.append(LineRejection(0, "(file)", missing))
    else:
        plausible = {t: _policy_max(policies, t, today) for t in CLASSIFIED_TENANTS}
        parsed = parse_lab_file(
            data,
            today=today,
            tenants=CLASSIFIED_TENANTS,
            plausible_max=plausible,
            windows=date_windows(policies, today),
        )
        lines = parsed.lines
        rejections.extend(parsed.rejected)
        in_file_repeats = parsed.repeated
        checked = check_against_stored(parsed.rows, repo, file_id=file_id)
        rejections.extend(checked.rejected)

    if checked.waiting:
        repo.suspend(checked.waiting, file_id=file_id, file_key=file.key[:1024])
        rejections.extend(
            LineRejection(r.line, "account_id", waiting_reason(r.tenant, r.account_id))
            for r in checked.waiting
        )
    repo.record_results(checked.new, file_id)
    events: list[Event] = []
    classified: list[str] = []
    # Every result of this file counts, stored now or by a delivery a crash interrupted (and
    # rows repeating results stored earlier, as before): its charges, flags and deadlines
    # are computed again and published once per business key.
    by_account: dict[tuple[str, str], list[LabRow]] = {}
    for row in [*checked.new, *checked.restored, *checked.repeated]:
        by_account.setdefault((row.tenant, row.account_id), []).append(row)
    records = repo.account_records(list(by_account))
    reclassified: list[tuple[StrengthClassified, AccountRecord]] = []
    for (tenant, account_id), new_rows in sorted(by_account.items()):
        record = records[(tenant, account_id)]
        event = after_new_results(tenant, account_id, new_rows, record, repo, policies, now, today, events)
        if event is None:
            continue
        classified.append(f"{tenant}/{account_id}")
        if record.classified_by != file_id:  # else this file's first delivery recorded it
            reclassified.append((event, record))
    # The facts first (the outbox is their record), then the state they change: a crash in
    # between is repaired by the redelivery, which computes the same events and skips them.
    events = chunked_costs(events, file_id, now)
    repo.publish([*events, *(event for event, _ in reclassified)])
    repo.record_classifications(reclassified, by=file_id)

    waiting_lines = {r.line for r in checked.waiting}
    rejections.sort(key=lambda r: (r.line, r.column))
    counts = import_counts(lines, checked, in_file_repeats, rejections)
    report = None
    if rejections:
        report = reports.write_rejections(
            file_id,
            (
                {
                    "line": r.line,
                    "column": r.column,
                    "reason": r.reason,
                    "outcome": "waiting" if r.line in waiting_lines else "rejected",
                }
                for r in rejections
            ),
        )
    refused = [r for r in rejections if r.line not in waiting_lines]
    summary = LabFileTakenIn(
        occurred_at=now,
        file_key=file.key[:1024],
        file_id=file_id,
        lines=counts.lines,
        accepted=counts.accepted,
        repeated=counts.repeated,
        rejected=counts.rejected,
        waiting=counts.waiting,
        rejections=tuple(
            LabLineRejection(line=r.line, column=r.column, reason=r.reason[:500])
            for r in refused[: LabFileTakenIn.MAX_INLINE]
        ),
        report_key=report.key if report else None,
        report=report,
        accounts_classified=len(classified),
    )
    repo.record_file(file, file_id, summary, settled=not any(r.retry for r in rejections))
    if checked.waiting:
        # An account kept while this file was judged (its event at the same time) found
        # nothing waiting: its lines are taken in now, never left behind.
        arrived = repo.accounts({(r.tenant, r.account_id) for r in checked.waiting})
        for tenant in sorted({t for t, _ in arrived}):
            take_in_waiting(
                tenant,
                sorted(a for t, a in arrived if t == tenant),
                repo=repo,
                policies=policies,
                clock=clock,
            )
    return IntakeResult(
        file_id=file_id,
        duplicate_file=counts.duplicate_file,
        counts_=counts,
        rejected_lines=tuple(r.line for r in refused),
        classified=tuple(classified),
        report_key=report.key if report else None,
    )


def import_counts(
    lines: int, checked: Checked, in_file_repeats: int, rejections: Sequence[LineRejection]
) -> ImportCounts:
    """The file's counts (``common.imports``), checked to add up to its data lines.

    A rejection of line 0 (the object) or 1 (the header) refuses the whole file: every data
    line is rejected with it."""
    whole_file = any(r.line <= 1 for r in rejections)
    waiting = {r.line for r in checked.waiting}
    return ImportCounts(
        lines=lines,
        accepted=len(checked.new) + len(checked.restored),
        repeated=len(checked.repeated) + in_file_repeats,
        rejected=lines if whole_file else len({r.line for r in rejections} - waiting),
        waiting=0 if whole_file else len(waiting),
    ).check()


def take_in_waiting(
    tenant: str,
    account_ids: Sequence[str],
    *,
    repo: SamplingRepository,
    policies: Policies,
    clock: Clock,
) -> int:
    """Take in the lab lines waiting for these accounts, now known (issue 26): each
    account's lines of one file as that file would have taken them (stored under the
    file, charged, flagged, classified once), then out of suspense. Every step is keyed as
    the file's own, so a retry after a crash finishes the work and publishes nothing
    twice. A line refused now (another value for a result already recorded) stays listed
    with its cause. Returns the lines taken in."""
    marked = repo.suspended(tenant, account_ids)
    taken_in = 0
    now = clock.now()
    today = local_today(now)
    known = repo.accounts({(tenant, a) for a in marked})
    for account_id in sorted(a for a in marked if (tenant, a) in known):
        waiting = repo.waiting_rows(tenant, account_id)
        by_file: dict[str, list[WaitingRow]] = {}
        for w in waiting:
            by_file.setdefault(w.file_id, []).append(w)
        taken: list[WaitingRow] = []
        refused: dict[WaitingRow, str] = {}
        for file_id, rows in sorted(by_file.items()):
            checked = check_against_stored([w.row for w in rows], repo, file_id=file_id)
            by_line = {w.row.line: w for w in rows}
            for r in checked.rejected:
                refused[by_line[r.line]] = r.reason
            repo.record_results(checked.new, file_id)
            kept = [*checked.new, *checked.restored, *checked.repeated]
            taken += [by_line[r.line] for r in kept]
            if not kept:
                continue
            record = repo.account_records([(tenant, account_id)])[(tenant, account_id)]
            events: list[Event] = []
            event = after_new_results(tenant, account_id, kept, record, repo, policies, now, today, events)
            # Its own chunks of charges: the file's chunks were published under the file's key.
            events = chunked_costs(events, content_digest(f"{file_id}:{tenant}:{account_id}".encode()), now)
            again = event is not None and record.classified_by != file_id
            repo.publish([*events, *([event] if again and event is not None else [])])
            if again and event is not None:
                repo.record_classifications([(event, record)], by=file_id)
        repo.settle_waiting(tenant, account_id, taken, refused)
        taken_in += len(taken)
    return taken_in


def chunked_costs(events: Sequence[Event], file_id: str, now: datetime) -> list[Event]:
    """A file's sample costs as ``SamplingCostsCharged`` chunks (one event per chunk, not per
    sample), in the order computed (accounts, then samples, sorted: a redelivery forms the
    same chunks under the same business keys); the other events as they are."""
    charges = [e for e in events if isinstance(e, SamplingCostCharged)]
    size = SamplingCostsCharged.CHUNK_MAX
    return [e for e in events if not isinstance(e, SamplingCostCharged)] + [
        SamplingCostsCharged(
            occurred_at=now, file_id=file_id, chunk=n, charges=tuple(charges[start : start + size])
        )
        for n, start in enumerate(range(0, len(charges), size))
    ]


def _policy_max(policies: Policies, tenant: str, today: date) -> Mapping[str, Decimal]:
    return policies(tenant, today).plausible_max_mg_l


def check_against_stored(
    rows: Sequence[LabRow], repo: SamplingRepository, *, file_id: str | None = None
) -> Checked:
    """The rows split by what is stored: new, rejected (with both values for a conflicting
    result), repeating a result an earlier file stored, or stored by this same file
    (``file_id``) on a delivery a crash interrupted."""
    known = repo.accounts({(r.tenant, r.account_id) for r in rows})
    sample_keys = {(r.tenant, r.sample_id) for r in rows} | {
        (r.tenant, r.resample_of) for r in rows if r.resample_of
    }
    samples = repo.stored_samples(sample_keys)
    values = repo.stored_values({(r.tenant, r.account_id, r.sample_id, r.parameter) for r in rows})
    in_file = {(r.tenant, r.sample_id): r for r in rows}
    checked = Checked()
    rejected = checked.rejected
    for row in rows:
        if (row.tenant, row.account_id) not in known:
            checked.waiting.append(row)  # waits in suspense for its account (issue 26)
            continue
        stored = samples.get((row.tenant, row.sample_id))
        if stored is not None:
            mine = StoredSample(row.account_id, row.collected_on, row.kind.value, row.resample_of)
            clash = next(
                (
                    (column, a, b)
                    for column, a, b in zip(
                        ("account_id", "collected_on", "kind", "resample_of"),
                        stored.__dict__.values(),
                        mine.__dict__.values(),
                        strict=True,
                    )
                    if a != b
                ),
                None,
            )
            if clash is not None:
                column, was, now_given = clash
                rejected.append(
                    LineRejection(
                        row.line,
                        column,
                        f"sample {row.sample_id} is already recorded with {column} {was}, not {now_given}",
                    )
                )
                continue
        if row.resample_of:
            target = samples.get((row.tenant, row.resample_of)) or _as_stored(
                in_file.get((row.tenant, row.resample_of))
            )
            if target is None or target.account_id != row.account_id:
                rejected.append(
                    LineRejection(
                        row.line,
                        "resample_of",
                        f"sample {row.resample_of} is not a sample of account {row.account_id}",
                    )
                )
                continue
        stored_value = values.get((row.tenant, row.account_id, row.sample_id, row.parameter))
        value = None if stored_value is None else stored_value.value
        if stored_value is None:
            checked.new.append(row)
        elif value == row.value and file_id is not None and stored_value.file_id == file_id:
            checked.restored.append(row)
        elif value == row.value:
            checked.repeated.append(row)
        else:
            rejected.append(
                LineRejection(
                    row.line,
                    "value",
                    f"{row.parameter} of sample {row.sample_id} is {row.value} mg/l here but "
                    f"{value} mg/l is already recorded",
                )
            )
    return checked


def _as_stored(row: LabRow | None) -> StoredSample | None:
    if row is None:
        return None
    return StoredSample(row.account_id, row.collected_on, row.kind.value, row.resample_of)


def after_new_results(
    tenant: str,
    account_id: str,
    new_rows: Sequence[LabRow],
    record: AccountRecord,
    repo: SamplingRepository,
    policies: Policies,
    now: datetime,
    today: date,
    events: list[Event],
) -> StrengthClassified | None:
    """Charges, flags and deadlines after an account's new results (``record``: read after
    they were stored), and its new classification, not yet recorded (the caller publishes
    it with ``events`` and then records it: ``record_classifications``)."""
    policy = policies(tenant, today)
    new_samples: dict[str, list[LabRow]] = {}
    for row in new_rows:
        new_samples.setdefault(row.sample_id, []).append(row)
    final = final_results(record)
    for sample_id, rows in sorted(new_samples.items()):
        first = rows[0]
        if tenant == PLEASANT_PRAIRIE_SEWER and first.kind is not SampleKind.SPLIT:
            charge = sample_cost(policy, account_id, sample_id, first, now)
            if charge is not None:
                events.append(charge)
        if first.kind is SampleKind.ROUTINE and tenant == PLEASANT_PRAIRIE_SEWER:
            result = lab_result(
                [r for r in record.results if r.sample_id == sample_id]  # stored rows of this sample
            )
            if result is not None:
                history = [f for f in final if sample_id not in f.sample_ids]
                reasons = deviation_flags(history, result, policy.deviation_factor)
                if reasons:
                    events.append(
                        ResampleFlagged(
                            occurred_at=now,
                            tenant=tenant,
                            account_id=account_id,
                            sample_id=sample_id,
                            sampled_on=first.collected_on,
                            reasons=tuple(reasons),
                        )
                    )
        if first.kind is SampleKind.ROUTINE and record.info is not None and record.info.satellite:
            repo.record_deadline(
                tenant,
                account_id,
                results_deadline(
                    sample_id,
                    first.collected_on,
                    policy.is_closed,
                    policy.satellite_working_days,
                    policy.satellite_reminder_working_days,
                ),
            )
    finals_now = [sid for sid, rows in new_samples.items() if rows[0].kind is SampleKind.ROUTINE]
    if not finals_now:
        return None  # resamples wait for a decision; splits never classify
    latest = max(finals_now, key=lambda sid: (new_samples[sid][0].collected_on, sid))
    return classification_of(
        record,
        policy=policy,
        trigger=latest,
        effective_from=new_samples[latest][0].collected_on,
        touched=sorted({new_samples[s][0].collected_on for s in finals_now}),
        now=now,
        today=today,
    )


def reclassify(
    record: AccountRecord,
    *,
    repo: SamplingRepository,
    policy: TenantPolicy,
    trigger: str,
    effective_from: date,
    touched: Sequence[date],
    now: datetime,
    today: date,
) -> StrengthClassified:
    """Classify the account's final results as of ``today`` and record the event."""
    event = classification_of(
        record,
        policy=policy,
        trigger=trigger,
        effective_from=effective_from,
        touched=touched,
        now=now,
        today=today,
    )
    repo.record_classification(
        event, event.exit_clock.returns_on if event.exit_clock else None, expected_version=record.version
    )
    return event


def classification_of(
    record: AccountRecord,
    *,
    policy: TenantPolicy,
    trigger: str,
    effective_from: date,
    touched: Sequence[date],
    now: datetime,
    today: date,
) -> StrengthClassified:
    """The account's classification on its final results as of ``today`` (not recorded)."""
    assert record.info is not None
    return classify_account(
        tenant=record.info.tenant,
        account_id=record.info.account_id,
        final=final_results(record),
        as_of=max(today, effective_from),
        limits=policy.limits,
        trigger=trigger,
        effective_from=effective_from,
        previous_category=record.category,
        billing_period_months=policy.billing_period_months,
        now=now,
        exit_months=policy.exit_months,
        touched=touched,
        industrial_user=industrial_user_of(record.info, final_results(record)),
        private=record.info.private,
    )


def industrial_user_of(info: AccountInfo, final: Sequence[FinalResult]) -> IndustrialUser | None:
    """SU-INDUSTRIAL for a Sullivan account whose average daily flow is registered.

    The loads are the registered flow at the latest final result's BOD and TSS
    (X-POUNDS: mg/l x million gallons per day x 8.34); None elsewhere or without a flow.
    """
    if info.tenant != SULLIVAN_SEWER or info.avg_daily_flow_gal is None:
        return None
    latest = final[-1].result if final else None
    flow = info.avg_daily_flow_gal

    def load(concentration: Decimal | None) -> Decimal | None:
        return None if concentration is None else flow * concentration * POUNDS_FACTOR / MILLION

    determination = is_industrial_user(
        info.nongovernmental,
        info.nonresidential,
        info.sic_division,
        flow,
        load(latest.bod if latest else None),
        load(latest.tss if latest else None),
        info.discharges_toxic,
    )
    return IndustrialUser(is_industrial=determination.is_industrial, reasons=determination.reasons)


def sample_cost(
    policy: TenantPolicy, account_id: str, sample_id: str, row: LabRow, now: datetime
) -> SamplingCostCharged | None:
    """PP-SEW-SAMPLE-COST: the tariff's cost per sample collected, once per sample."""
    if policy.sample_cost is None:
        return None
    return SamplingCostCharged(
        occurred_at=now,
        tenant=policy.tenant,
        account_id=account_id,
        charge_id=f"sample:{sample_id}",
        kind="sample",
        charged_on=row.collected_on,
        description=f"Sample {sample_id} collected {row.collected_on.isoformat()}",
        quantity=Decimal(1),
        rate=policy.sample_cost,
        amount=round_line(policy.sample_cost),
        sample_ids=(sample_id,),
        lab_invoice_reference=row.lab_invoice,
        tariff_version=policy.tariff_version,
    )
