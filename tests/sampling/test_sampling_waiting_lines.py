"""A lab line for an account sampling does not know yet waits in suspense and is taken in
when billing publishes the account (issue 26): the use cases on in-memory fakes (pure).

A result for any billed account is taken in, sampled at the service address until staff
register a sampling point; a line whose account is not known yet is ``waiting`` (the fifth
count), and the account's arrival takes it in as its file would have (stored under the
file, charged, classified once); an account event delivered twice, or an earlier version
arriving late, changes nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime

from memory_repo import MemorySamplingRepo

from common.clock import FixedClock
from common.reports import Report
from common.tariff_files import default_tariffs_dir, load_tariff_book
from sampling.app.accounts import keep_accounts
from sampling.domain.accounts import BilledAccount
from sampling.domain.intake import IntakeResult, LabFile, ingest_lab_file
from sampling.domain.samples import AccountInfo
from sampling.domain.strength import CLASSIFIED_TENANTS
from sampling.tariffs import BookPolicies

PP = "pleasant-prairie-sewer"
POLICIES = BookPolicies(load_tariff_book(default_tariffs_dir()))
CLOCK = FixedClock(datetime(2026, 1, 5, 15, tzinfo=UTC))
HEADER = "tenant,sample_id,account_id,collected_on,parameter,value,units,analysed_on,lab,kind\n"


class Files:
    """The uploads bucket and the reports written to it, in memory."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.reports: dict[str, list[Mapping[str, object]]] = {}

    def read(self, bucket: str, key: str) -> bytes:
        return self.objects[key]

    def write_rejections(self, file_id: str, rows: Iterable[Mapping[str, object]]) -> Report:
        self.reports[file_id] = list(rows)
        key = f"reports/sampling/{file_id}.jsonl"
        return Report(bucket="b", key=key, format="jsonl", rows=len(self.reports[file_id]), bytes=0)


def lab(repo: MemorySamplingRepo, files: Files, key: str, *lines: str) -> IntakeResult:
    files.objects[key] = (HEADER + "".join(lines)).encode()
    return ingest_lab_file(
        LabFile("b", key, "etag"), store=files, reports=files, repo=repo, clock=CLOCK, policies=POLICIES
    )


def row(sample: str, account: str, bod: str) -> str:
    return f"{PP},{sample},{account},2025-12-15,bod,{bod},mg/l,2025-12-17,Acme,routine\n"


def billed(account_id: str, minute: int = 0, address: str = "9100 Bain Station Rd") -> BilledAccount:
    return BilledAccount(
        tenant=PP,
        account_id=account_id,
        version=datetime(2026, 1, 5, 15, minute, tzinfo=UTC),
        opened_on=date(2025, 1, 1),
        nonresidential=True,
        service_address=address,
    )


def arrive(repo: MemorySamplingRepo, *accounts: BilledAccount) -> int:
    kept = keep_accounts(
        list(accounts), tenants=CLASSIFIED_TENANTS, repo=repo, policies=POLICIES, clock=CLOCK
    )
    return kept.lines_taken_in


def test_a_result_for_a_billed_account_is_taken_in_at_its_service_address() -> None:
    repo, files = MemorySamplingRepo(), Files()
    arrive(repo, billed("PP-1"))
    result = lab(repo, files, "lab/1.csv", row("S-1", "PP-1", "220"))
    assert (result.accepted, result.counts_.waiting, result.rejected) == (1, 0, 0)
    record = repo.account(PP, "PP-1")
    assert record.info is not None and record.info.sampling_point == "9100 Bain Station Rd"
    assert record.category == "B"  # BOD 220 > 180 (PP-SEW-CAT-A)


def test_a_line_for_an_unknown_account_waits_and_is_taken_in_when_it_arrives() -> None:
    clean_repo, clean_files = MemorySamplingRepo(), Files()
    arrive(clean_repo, billed("PP-1"))
    lab(clean_repo, clean_files, "lab/1.csv", row("S-1", "PP-1", "220"))

    repo, files = MemorySamplingRepo(), Files()
    result = lab(repo, files, "lab/1.csv", row("S-1", "PP-1", "220"))
    assert (result.accepted, result.counts_.waiting, result.rejected, result.counts_.lines) == (0, 1, 0, 1)
    (report,) = files.reports.values()
    assert [(r["line"], r["outcome"]) for r in report] == [(2, "waiting")]
    assert repo.results == {} and repo.marks == {(PP, "PP-1")}

    assert arrive(repo, billed("PP-1")) == 1
    assert repo.waiting == {} and repo.marks == set()
    # as the file would have taken it: stored under the file, classified once, charged once
    assert repo.results == clean_repo.results
    assert repo.classifications[(PP, "PP-1")][:2] == clean_repo.classifications[(PP, "PP-1")][:2]
    assert [c.charge_id for e in repo.events("SamplingCostsCharged") for c in e.charges] == ["sample:S-1"]
    # the same kinds of event, each once (the classification's is published once)
    assert sorted(kind for kind, _ in repo.outbox) == sorted(kind for kind, _ in clean_repo.outbox)
    assert sum(kind.startswith("Strength") for kind, _ in repo.outbox) == 1


def test_an_account_event_delivered_twice_changes_nothing() -> None:
    repo, files = MemorySamplingRepo(), Files()
    lab(repo, files, "lab/1.csv", row("S-1", "PP-1", "220"))
    arrive(repo, billed("PP-1"))
    before = copy.deepcopy(repo)
    assert arrive(repo, billed("PP-1")) == 0
    assert repo == before


def test_an_earlier_version_arriving_late_is_not_kept_and_staff_registration_wins() -> None:
    repo = MemorySamplingRepo()
    arrive(repo, billed("PP-1", minute=5, address="new address"))
    arrive(repo, billed("PP-1", minute=1, address="old address"))
    assert repo.accounts([(PP, "PP-1")])[(PP, "PP-1")].sampling_point == "new address"
    repo.registered[(PP, "PP-1")] = AccountInfo(PP, "PP-1", sampling_point="MH-12")
    assert repo.accounts([(PP, "PP-1")])[(PP, "PP-1")].sampling_point == "MH-12"


def test_a_line_whose_account_never_arrives_keeps_waiting() -> None:
    repo, files = MemorySamplingRepo(), Files()
    lab(repo, files, "lab/1.csv", row("S-1", "PP-1", "220"), row("S-9", "PP-9", "100"))
    arrive(repo, billed("PP-1"))
    [(key, line)] = repo.waiting.items()
    assert (key[1], line["outcome"], line["row"].row.sample_id) == ("PP-9", "waiting", "S-9")


def test_a_line_refused_when_its_account_arrives_stays_listed_with_the_cause() -> None:
    repo, files = MemorySamplingRepo(), Files()
    lab(repo, files, "lab/1.csv", row("S-1", "PP-1", "220"))
    arrive(repo, billed("PP-2"))
    lab(repo, files, "lab/2.csv", row("S-1", "PP-2", "150"))  # S-1 recorded now, for PP-2
    assert arrive(repo, billed("PP-1")) == 0
    [(_, line)] = repo.waiting.items()
    assert line["outcome"] == "rejected" and "already recorded" in line["reason"]
