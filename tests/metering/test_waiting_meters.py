"""A meters-file line for an account billing has not published yet waits in suspense and is
taken in when the account arrives (issue 26): the use cases on in-memory fakes (pure).

Once billing has published an account of a tenant, a new meter on an account of that tenant
that metering does not know waits (``waiting``, the fifth count); the account's arrival
(``AccountsChanged``) registers it as its file would have; an account event delivered twice,
or a crash part-way through the release followed by the redelivery, ends as one clean run.
"""

from __future__ import annotations

import copy
from datetime import UTC, date, datetime

import pytest
from support import Crash, CrashingRepo, MemoryDirectory, Utility, settings

from metering.app.accounts import keep_accounts
from metering.domain.accounts import BilledAccount

PP = "pleasant-prairie-sewer"
GR = "grafton-sewer"
TODAY = date(2026, 7, 10)
NOW = datetime(2026, 7, 10, 15, tzinfo=UTC)


def billed(account_id: str, tenant: str = PP, minute: int = 0) -> BilledAccount:
    return BilledAccount(tenant, account_id, f"2026-07-10T15:{minute:02d}:00.000000+00:00", date(2026, 1, 1))


def arrive(u: Utility, *accounts: BilledAccount) -> int:
    assert u.directory is not None
    kept = keep_accounts(
        list(accounts),
        repo=u.repo,
        directory=u.directory,
        settings=settings,
        tenants=(PP, GR),
        now=NOW,
        today=u.today,
    )
    return kept.meters_taken_in


def utility() -> Utility:
    u = Utility(today=TODAY)
    u.directory = MemoryDirectory()
    arrive(u, billed("PP-1"))  # billing has published an account of Pleasant Prairie
    return u


METERS = (
    f"{PP},M-1,PP-1,water,gal,6,2026-01-01,0,,,",
    f"{PP},M-2,PP-2,water,gal,6,2026-01-01,0,,,",
    f"{GR},G-9,GR-9,water,gal,6,2026-01-01,0,5/8,,",  # Grafton: no account published yet
)


def test_a_new_meter_on_an_unknown_account_waits_and_the_counts_add_up() -> None:
    u = utility()
    result = u.meters(*METERS)
    assert (result.accepted, result.waiting, result.rejected, result.lines) == (2, 1, 0, 3)
    assert result.counts.check().lines == 3
    assert sorted(m for _, m in u.repo.meters_) == ["G-9", "M-1"]
    assert u.directory is not None
    [(key, waiting)] = u.directory.waiting.items()
    assert (key[1], waiting["line"].meter_id, waiting["line"].line, waiting["outcome"]) == (
        "PP-2",
        "M-2",
        3,
        "waiting",
    )


def test_the_meter_is_registered_as_its_file_would_have_when_the_account_arrives() -> None:
    clean = Utility(today=TODAY)
    clean.meters(*METERS)
    u = utility()
    u.meters(*METERS)
    assert arrive(u, billed("PP-2", minute=1)) == 1
    assert u.repo.meters_ == clean.repo.meters_
    assert u.repo.accounts_ == clean.repo.accounts_
    assert u.directory is not None and u.directory.waiting == {} and u.directory.marks == set()
    # reads for it are taken in as for any meter
    taken = u.reads(f"{PP},M-2,2026-02-01,1500,actual")
    assert (taken.accepted, taken.rejected) == (1, 0)


def test_an_account_event_delivered_twice_changes_nothing() -> None:
    u = utility()
    u.meters(*METERS)
    arrive(u, billed("PP-2", minute=1))
    before = (copy.deepcopy(u.repo.meters_), copy.deepcopy(u.repo.accounts_), len(u.repo.chunks))
    assert u.directory is not None
    directory = copy.deepcopy(u.directory.__dict__)
    assert arrive(u, billed("PP-2", minute=1)) == 0
    assert (u.repo.meters_, u.repo.accounts_, len(u.repo.chunks)) == before
    assert u.directory.__dict__ == directory


def test_an_earlier_version_arriving_late_is_not_kept() -> None:
    u = utility()
    arrive(u, billed("PP-2", minute=5))
    arrive(u, billed("PP-2", minute=1))
    assert u.directory is not None and u.directory.accounts[(PP, "PP-2")].version.startswith(
        "2026-07-10T15:05"
    )


def test_a_crash_during_the_release_is_finished_by_the_redelivery() -> None:
    clean = utility()
    clean.meters(*METERS)
    arrive(clean, billed("PP-2", minute=1))
    u = utility()
    u.meters(*METERS)
    store = u.repo
    u.repo = CrashingRepo(store, after=1)  # type: ignore[assignment]
    with pytest.raises(Crash):  # the meter's items written, the suspense not yet cleared
        arrive(u, billed("PP-2", minute=1))
    assert u.directory is not None and u.directory.marks == {(PP, "PP-2")}
    u.repo = store
    assert arrive(u, billed("PP-2", minute=1)) == 1
    assert (store.meters_, store.accounts_) == (clean.repo.meters_, clean.repo.accounts_)
    assert store.meter_sources == clean.repo.meter_sources
    assert u.directory.waiting == {} and u.directory.marks == set()


def test_a_meter_refused_when_its_account_arrives_stays_listed_with_the_cause() -> None:
    u = utility()
    u.meters(*METERS)
    # meanwhile M-2 is registered on PP-1, so its waiting line for PP-2 contradicts it
    u.meters(f"{PP},M-2,PP-1,water,gal,6,2026-01-01,0,,,")
    assert arrive(u, billed("PP-2", minute=1)) == 0
    assert u.directory is not None
    [(_, line)] = u.directory.waiting.items()
    assert line["outcome"] == "rejected" and "account_id" in line["reason"]


def test_a_meter_registered_before_is_repeated_never_waiting() -> None:
    u = Utility(today=TODAY)
    u.meters(METERS[1])  # before billing published any Pleasant Prairie account
    u.directory = MemoryDirectory()
    arrive(u, billed("PP-1"))
    again = u.meters(METERS[1], METERS[0])  # another file: M-2 again beside a new meter
    assert (again.repeated, again.accepted, again.waiting) == (1, 1, 0)
