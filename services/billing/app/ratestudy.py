"""Use case: the board's rate study (issue 35).

Reads the test year's billing determinants through a port, computes the rates that recover
the budget (``billing.domain.ratestudy``), writes the proposed version (the next
effective-dated tariff, ``status: proposed``) and the impact report through another port.
The tariffs are a loaded ``TariffBook`` (the version in force before the budget's date is
the one studied and the one "before" is rated on).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from billing.domain.ratestudy import (
    Budget,
    RateStudyError,
    Study,
    Usage,
    impact,
    pro_forma_book,
    proposed_tariff,
    study,
)
from common.tariffs import Tariff, TariffBook


class Determinants(Protocol):
    """The last twelve months' billing determinants of a tenant: one usage per account-period."""

    def usages(self, tenant: str) -> Iterable[Usage]: ...


class StudyOutput(Protocol):
    """Where the draft tariff and the impact report go; each write says where it went."""

    def write_proposed(self, tariff: Tariff) -> str: ...

    def write_report(self, tenant: str, report: dict[str, Any]) -> str: ...


@dataclass(frozen=True)
class StudyOutcome:
    study: Study
    proposed: Tariff
    report: dict[str, Any]
    proposed_at: str
    report_at: str


def run_rate_study(
    budget: Budget, book: TariffBook, determinants: Determinants, out: StudyOutput
) -> StudyOutcome:
    """The rate study of ``budget``: rates, proposed version, impact report."""
    versions = book.versions(budget.tenant)
    current = versions[-1]
    if budget.effective_from <= current.effective_from:
        raise RateStudyError(
            "effective_from",
            f"the proposed version must start after the version in force {current.version_id}",
        )
    usages = list(determinants.usages(budget.tenant))
    if not usages:
        raise RateStudyError("determinants", f"no billing determinants for {budget.tenant}")
    result = study(budget, current, usages)
    proposed = proposed_tariff(current, result, budget)
    report = impact(budget, result, usages, book, pro_forma_book(proposed, usages))
    proposed_at = out.write_proposed(proposed)
    report["proposed_tariff_file"] = proposed_at
    report_at = out.write_report(budget.tenant, report)
    return StudyOutcome(result, proposed, report, proposed_at, report_at)
