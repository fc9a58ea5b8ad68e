"""What billing's use cases share: a file's result, the utility's day, a tariff in force.

Each use case takes its repository, engine, tariffs and ``now`` as parameters (composition.py wires
the real ones; tests wire the same with moto). The rules themselves live in ``domain/``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Protocol, TypeVar

from billing.domain.csvfiles import LineError
from common.imports import ImportCounts
from common.tariffs import TariffBook

T = TypeVar("T")
FEW_ACCOUNTS = 5  # a back-dated payment check reads these accounts one by one, more by partition


BATCH_LINES = 1_000  # an import's lines are taken in this many at a time: memory bounded by it
KEPT_LINES = 100  # rejected and waiting lines a result keeps for its log; the report has them all


class LineReport(Protocol):
    """Where an import's rejected and waiting lines go, one at a time (the handler's report
    streamed to S3, ``common.reports.ReportStream``): never a list that grows with the file."""

    def add(self, row: Mapping[str, Any]) -> None: ...


class NoReport:
    def add(self, row: Mapping[str, Any]) -> None:
        return None


@dataclass
class FileResult:
    """How a file's data lines ended (``counts``: issue 26's one set of counters) and the
    first :data:`KEPT_LINES` rejected and waiting lines (the report holds every one)."""

    counts: ImportCounts = field(default_factory=ImportCounts)
    rejected: list[LineError] = field(default_factory=list)
    waiting: list[LineError] = field(default_factory=list)
    report: LineReport = field(default_factory=NoReport)
    # The tenants of the file's good lines (the file's import log is kept under each), and
    # a payments file's money by outcome (accepted, repeated, waiting, rejected): its batch
    # totals; ``unread_amounts`` counts rejected lines whose amount could not be read.
    payments: bool = False
    tenants: set[str] = field(default_factory=set)
    totals: dict[str, Decimal] = field(default_factory=dict)
    unread_amounts: int = 0

    def tally(self, outcome: str, amount: Decimal | None) -> None:
        if amount is None:
            self.unread_amounts += 1
        else:
            self.totals[outcome] = self.totals.get(outcome, Decimal(0)) + amount

    def reject(self, error: LineError) -> None:
        self.counts.rejected += 1
        if self.payments:
            self.tally("rejected", error.amount)
        if len(self.rejected) < KEPT_LINES:
            self.rejected.append(error)
        self.report.add(
            {"line": error.line, "column": error.column, "reason": error.reason, "outcome": "rejected"}
        )

    def wait(self, why: LineError) -> None:
        self.counts.waiting += 1
        if self.payments:
            self.tally("waiting", why.amount)
        if len(self.waiting) < KEPT_LINES:
            self.waiting.append(why)
        self.report.add({"line": why.line, "column": why.column, "reason": why.reason, "outcome": "waiting"})


def batches(items: Iterable[T], size: int = BATCH_LINES) -> Iterator[list[T]]:
    """``items`` in lists of at most ``size``, read as they come."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def local_today(now: datetime) -> date:
    from billing.domain.cycles import UTILITY_TZ

    return now.astimezone(UTILITY_TZ).date()


def in_force(book: TariffBook, tenant: str, on: date) -> bool:
    try:
        book.in_force(tenant, on)
    except Exception:  # noqa: BLE001 - a date before the tenant's first tariff: nothing to assess
        return False
    return True
