from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from billing.domain.rating import RatedBill, RatingEngine, RatingInput
from common.tariffs import TariffBook, default_tariffs_dir


@pytest.fixture(scope="session")
def book() -> TariffBook:
    return TariffBook.load(default_tariffs_dir())


@pytest.fixture(scope="session")
def engine(book: TariffBook) -> RatingEngine:
    return RatingEngine(book)


@pytest.fixture
def rate(engine: RatingEngine) -> Callable[..., RatedBill]:
    def _rate(tenant: str, start: date, end: date, **fields: Any) -> RatedBill:
        return engine.rate(RatingInput(tenant, start, end, **fields))

    return _rate
