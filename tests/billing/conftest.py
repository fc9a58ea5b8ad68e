from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from billing.domain.bills import Bill, issue
from billing.domain.rating import Account, ParcelCharge, RatingEngine, RatingInput
from billing.domain.terms import Terms, terms_of
from common.tariff_files import default_tariffs_dir, load_tariff_book
from common.tariffs import TariffBook


@pytest.fixture(scope="session")
def book() -> TariffBook:
    return load_tariff_book(default_tariffs_dir())


@pytest.fixture(scope="session")
def engine(book: TariffBook) -> RatingEngine:
    return RatingEngine(book)


@pytest.fixture
def terms(book: TariffBook) -> Callable[[str, date], Terms]:
    return lambda tenant, on: terms_of(book.in_force(tenant, on))


@pytest.fixture
def grafton_bill(engine: RatingEngine, book: TariffBook) -> Callable[..., Bill]:
    """A Grafton bill for the quarter [start, start+3 months) issued on ``bill_date``."""

    def make(
        start: date, end: date, bill_date: date, gallons: int, account_id: str = "GR-1", history: Any = ()
    ) -> Bill:
        rated = engine.rate(
            RatingInput(
                "grafton-sewer",
                start,
                end,
                account=Account("residential", meter_size="5/8"),
                water_gallons=Decimal(gallons),
            )
        )
        return issue(
            rated,
            account_id=account_id,
            bill_date=bill_date,
            due_days=terms_of(book.in_force("grafton-sewer", start)).due_days,
            history=history,
            last_bill_date=None,
        )

    return make


@pytest.fixture
def stormwater_bill(engine: RatingEngine, book: TariffBook) -> Callable[..., Bill]:
    """A stormwater bill for [start, end) issued on ``bill_date``; a nonresidential parcel
    may carry an approved PP-CWU-CREDIT ``credit_percent`` (a negative line on the bill)."""

    def make(
        start: date,
        end: date,
        bill_date: date,
        eru: str = "1.00",
        account_id: str = "PPW-1",
        use: str = "residential",
        credit_percent: str = "0",
    ) -> Bill:
        rated = engine.rate(
            RatingInput(
                "pleasant-prairie-stormwater",
                start,
                end,
                parcel=ParcelCharge(
                    use=use,  # type: ignore[arg-type]
                    eru=Decimal(eru),
                    credit_percent=Decimal(credit_percent),
                ),
            )
        )
        return issue(
            rated, account_id=account_id, bill_date=bill_date, due_days=20, history=(), last_bill_date=None
        )

    return make


@pytest.fixture
def sullivan_bill(engine: RatingEngine) -> Bill:
    """Sullivan's residential first quarter of 2026 (20,000 gal, 1,200 RECs) billed to SU-1 on
    2026-04-01, due in 20 days."""
    rated = engine.rate(
        RatingInput(
            "sullivan-sewer",
            date(2026, 1, 1),
            date(2026, 4, 1),
            account=Account("residential"),
            water_gallons=Decimal(20000),
            total_recs=Decimal(1200),
        )
    )
    return issue(
        rated, account_id="SU-1", bill_date=date(2026, 4, 1), due_days=20, history=(), last_bill_date=None
    )
