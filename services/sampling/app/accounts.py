"""Billing's accounts kept by sampling (issue 26): each version published in an
``AccountsChanged`` kept when it is later than the one held, then the lab lines that waited
in suspense for these accounts taken in (``sampling.domain.intake.take_in_waiting``).

A chunk delivered twice keeps nothing the second time, and its waiting lines, already taken
in, are no longer marked: it changes nothing. A crash between keeping an account and taking
in its lines is finished by the redelivery, which looks up every account of the chunk for
lines waiting, kept now or not.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from common.clock import Clock
from sampling.domain.accounts import BilledAccount
from sampling.domain.intake import SamplingRepository, take_in_waiting
from sampling.domain.policy import Policies


class AccountsRepository(SamplingRepository, Protocol):
    def keep_billed(self, account: BilledAccount) -> bool:
        """Keep the version unless a later (or the same) one is kept; False then."""
        ...


@dataclass(frozen=True)
class AccountsKept:
    versions: int
    kept: int
    lines_taken_in: int


def keep_accounts(
    accounts: Sequence[BilledAccount],
    *,
    tenants: Collection[str],
    repo: AccountsRepository,
    policies: Policies,
    clock: Clock,
) -> AccountsKept:
    """Keep billed accounts of the tenants sampling classifies (others are not sampled)."""
    mine = [a for a in accounts if a.tenant in tenants]
    kept = sum(repo.keep_billed(a) for a in mine)
    taken = 0
    for tenant in sorted({a.tenant for a in mine}):
        ids = sorted({a.account_id for a in mine if a.tenant == tenant})
        taken += take_in_waiting(tenant, ids, repo=repo, policies=policies, clock=clock)
    return AccountsKept(versions=len(accounts), kept=kept, lines_taken_in=taken)
