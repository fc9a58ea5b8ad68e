"""Billing's view of the tariff book (``common.tariffs``), loaded once per container."""

from __future__ import annotations

from datetime import date

from billing.domain.cycles import CycleNotStartable
from common.tariffs import TariffBook, TariffError


class BookCalendar:
    def __init__(self, book: TariffBook) -> None:
        self._book = book

    def billing_period_months(self, tenant: str, on: date) -> int:
        try:
            return self._book.in_force(tenant, on).billing_period_months
        except TariffError as exc:
            raise CycleNotStartable(str(exc)) from exc
