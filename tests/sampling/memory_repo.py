"""Sampling's repository ports over dicts, for the use cases' pure tests: what a lab file's
intake and billing's accounts need (``sampling.domain.intake.SamplingRepository`` and
``sampling.app.accounts.AccountsRepository``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from common.events import Event
from sampling.domain.accounts import BilledAccount
from sampling.domain.intake import LabFile, StoredSample, StoredValue, WaitingRow
from sampling.domain.lab_files import LabRow
from sampling.domain.samples import AccountInfo, AccountRecord, StoredResult
from sampling.domain.satellite import ResultsDeadline
from sampling.events import LabFileTakenIn, StrengthClassified


@dataclass
class MemorySamplingRepo:
    registered: dict[tuple[str, str], AccountInfo] = field(default_factory=dict)
    billed: dict[tuple[str, str], BilledAccount] = field(default_factory=dict)
    samples: dict[tuple[str, str], StoredSample] = field(default_factory=dict)
    results: dict[tuple[str, str, str, str], tuple[LabRow, str | None]] = field(default_factory=dict)
    classifications: dict[tuple[str, str], tuple[str, int, str | None]] = field(default_factory=dict)
    deadlines: dict[tuple[str, str, str], ResultsDeadline] = field(default_factory=dict)
    outbox: dict[tuple[str, str], Event] = field(default_factory=dict)
    files: dict[str, tuple[LabFileTakenIn, bool]] = field(default_factory=dict)
    waiting: dict[tuple[str, str, str, int], dict[str, Any]] = field(default_factory=dict)
    marks: set[tuple[str, str]] = field(default_factory=set)

    # --- accounts ---------------------------------------------------------------------
    def keep_billed(self, account: BilledAccount) -> bool:
        held = self.billed.get((account.tenant, account.account_id))
        if held is not None and held.version_key >= account.version_key:
            return False
        self.billed[(account.tenant, account.account_id)] = account
        return True

    def accounts(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], AccountInfo]:
        found = {k: self.billed[k].info() for k in keys if k in self.billed}
        found.update({k: self.registered[k] for k in keys if k in self.registered})
        return found

    # --- samples and results ----------------------------------------------------------
    def file_seen(self, file_id: str) -> bool:
        return file_id in self.files and self.files[file_id][1]

    def stored_samples(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], StoredSample]:
        return {k: self.samples[k] for k in keys if k in self.samples}

    def stored_values(
        self, keys: Collection[tuple[str, str, str, str]]
    ) -> dict[tuple[str, str, str, str], StoredValue]:
        return {
            k: StoredValue(self.results[k][0].value, self.results[k][1]) for k in keys if k in self.results
        }

    def record_results(self, rows: Sequence[LabRow], file_id: str | None = None) -> None:
        for r in rows:
            self.samples[(r.tenant, r.sample_id)] = StoredSample(
                r.account_id, r.collected_on, r.kind.value, r.resample_of
            )
            self.results[(r.tenant, r.account_id, r.sample_id, r.parameter)] = (r, file_id)

    def account(self, tenant: str, account_id: str) -> AccountRecord:
        return self.account_records([(tenant, account_id)])[(tenant, account_id)]

    def account_records(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], AccountRecord]:
        records = {}
        for tenant, account_id in keys:
            info = self.accounts([(tenant, account_id)]).get((tenant, account_id))
            record = AccountRecord(info=info)
            for (t, a, _, _), (r, _) in sorted(self.results.items()):
                if (t, a) == (tenant, account_id):
                    record.results.append(
                        StoredResult(
                            r.sample_id,
                            r.parameter,
                            r.value,
                            r.collected_on,
                            r.kind.value,
                            r.resample_of,
                            r.lab,
                            r.analysed_on,
                            r.reported,
                        )
                    )
            if (tenant, account_id) in self.classifications:
                record.category, record.version, record.classified_by = self.classifications[
                    (tenant, account_id)
                ]
            records[(tenant, account_id)] = record
        return records

    def record_classification(
        self, event: StrengthClassified, exit_returns_on: date | None, expected_version: int
    ) -> None:
        self.record_classifications([(event, self.account(event.tenant, event.account_id))])

    def record_classifications(
        self, classified: Sequence[tuple[StrengthClassified, AccountRecord]], by: str | None = None
    ) -> None:
        for event, record in classified:
            held = self.classifications.get((event.tenant, event.account_id), (None, 0, None))[1]
            assert held == record.version, "a concurrent classification"
            self.classifications[(event.tenant, event.account_id)] = (event.category, record.version + 1, by)

    def record_deadline(self, tenant: str, account_id: str, deadline: ResultsDeadline) -> None:
        self.deadlines.setdefault((tenant, account_id, deadline.sample_id), deadline)

    def publish(self, events: Sequence[Event]) -> None:
        for e in events:
            self.outbox.setdefault((e.detail_type(), e.business_key()), e)

    def record_file(
        self, file: LabFile, file_id: str, summary: LabFileTakenIn, *, settled: bool = True
    ) -> None:
        self.publish([summary])
        self.files[file_id] = (summary, settled)

    # --- lines in suspense --------------------------------------------------------------
    def suspend(self, rows: Sequence[LabRow], *, file_id: str, file_key: str) -> None:
        for r in rows:
            self.waiting.setdefault(
                (r.tenant, r.account_id, file_id, r.line),
                {"row": WaitingRow(r, file_id, file_key), "outcome": "waiting"},
            )
            self.marks.add((r.tenant, r.account_id))

    def suspended(self, tenant: str, account_ids: Collection[str]) -> set[str]:
        return {a for a in account_ids if (tenant, a) in self.marks}

    def waiting_rows(self, tenant: str, account_id: str) -> list[WaitingRow]:
        return [
            v["row"]
            for (t, a, _, _), v in sorted(self.waiting.items(), key=lambda kv: kv[0])
            if (t, a) == (tenant, account_id) and v["outcome"] == "waiting"
        ]

    def settle_waiting(
        self, tenant: str, account_id: str, taken: Sequence[WaitingRow], refused: Mapping[WaitingRow, str]
    ) -> None:
        for w, reason in refused.items():
            self.waiting[(tenant, account_id, w.file_id, w.row.line)].update(
                outcome="rejected", reason=reason
            )
        for w in taken:
            del self.waiting[(tenant, account_id, w.file_id, w.row.line)]
        self.marks.discard((tenant, account_id))

    def events(self, detail_type: str) -> list[Event]:
        return [e for (kind, _), e in self.outbox.items() if kind == detail_type]
