"""What billing's use cases share: a file's result, the utility's day, a tariff in force.

Each use case takes its repository, engine, tariffs and ``now`` as parameters (composition.py wires
the real ones; tests wire the same with moto). The rules themselves live in ``domain/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from billing.domain.csvfiles import LineError
from common.tariffs import TariffBook

FEW_ACCOUNTS = 5  # a back-dated payment check reads these accounts one by one, more by partition


@dataclass
class FileResult:
    accepted: int = 0
    unchanged: int = 0
    rejected: list[LineError] = field(default_factory=list)
    suspense: int = 0


def local_today(now: datetime) -> date:
    from billing.domain.cycles import UTILITY_TZ

    return now.astimezone(UTILITY_TZ).date()


def in_force(book: TariffBook, tenant: str, on: date) -> bool:
    try:
        book.in_force(tenant, on)
    except Exception:  # noqa: BLE001 - a date before the tenant's first tariff: nothing to assess
        return False
    return True
