from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from billing.domain.rating import RatedBill, RatingEngine, RatingInput
from common.tariff_files import default_tariffs_dir, load_tariff_book
from common.tariffs import TariffBook


@pytest.fixture(scope="session")
def book() -> TariffBook:
    return load_tariff_book(default_tariffs_dir())


@pytest.fixture(scope="session")
def engine(book: TariffBook) -> RatingEngine:
    return RatingEngine(book)


@pytest.fixture
def rate(engine: RatingEngine) -> Callable[..., RatedBill]:
    def _rate(tenant: str, start: date, end: date, **fields: Any) -> RatedBill:
        return engine.rate(RatingInput(tenant, start, end, **fields))

    return _rate


@pytest.fixture(scope="session")
def engine_with(book: TariffBook) -> Callable[..., RatingEngine]:
    """An engine whose ``tenant`` tariff versions have some settings changed (a switch
    turned off, a rate changed): ``engine_with("sullivan-sewer", surcharge_applies=False)``."""

    def _engine(tenant: str, **values: Any) -> RatingEngine:
        versions: dict[str, list[Any]] = {t: book.versions(t) for t in book.tenants}
        versions[tenant] = [
            t.model_copy(
                update={
                    name: getattr(t, name).model_copy(update={"value": value})
                    for name, value in values.items()
                }
            )
            for t in versions[tenant]
        ]
        return RatingEngine(TariffBook(versions))

    return _engine
