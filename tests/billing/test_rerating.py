"""X-IMMUTABLE: consumption re-determined after its period was billed is re-rated with the
same engine and tariff, and the difference is one adjustment on the bill (pure)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date
from decimal import Decimal

import pytest

from billing.domain.accounts import AccountRecord
from billing.domain.bills import Bill
from billing.domain.issuing import Usage
from billing.domain.rating import RatingEngine
from billing.domain.rerating import CannotRerate, rerate

Q3 = (date(2026, 7, 1), date(2026, 10, 1))

GR_1 = AccountRecord(
    tenant="grafton-sewer",
    account_id="GR-1",
    name="Ann",
    service_address="1 Main St",
    mailing_address="1 Main St",
    zip="53024",
    opened_on=date(2026, 1, 1),
    account_class="residential",
    meter_size="5/8",
)


@pytest.fixture
def billed_on_estimate(grafton_bill: Callable[..., Bill]) -> Bill:
    # 45.00 service + 23 kgal x 6.50 = 149.50 volume = 194.50
    return grafton_bill(*Q3, date(2026, 10, 1), 23000)


def test_an_actual_read_below_the_estimate_is_a_credit_of_the_volume_difference(
    billed_on_estimate: Bill, engine: RatingEngine
) -> None:
    assert billed_on_estimate.total == Decimal("194.50")
    rerated = rerate(
        billed_on_estimate,
        GR_1,
        billed=Usage(Decimal(23000), estimated=True, quality="estimated", source_event_id="ev-est"),
        new=Usage(Decimal(20000), source_event_id="ev-actual"),
        sequence=1,
        engine=engine,
    )
    assert rerated is not None
    # GR-VOL: (20 - 23) kgal x 6.50 = -19.50; GR-SVC unchanged.
    assert rerated.amount == Decimal("-19.50")
    # GR-FUNDS, 12% replacement, rounded per line as the bill does:
    # 149.50 -> 17.94 + 131.56; 130.00 -> 15.60 + 114.40; so -2.34 replacement, -17.16 O&M.
    assert rerated.funds == {"om": Decimal("-17.16"), "replacement": Decimal("-2.34")}
    assert ("GR-VOL", Decimal("149.50"), Decimal("130.00")) in rerated.lines
    assert rerated.reference == "RERATE-GR-1-2026-07-01-001"
    # The reason names the consumption corrected (old and new volume, its event) and the rule.
    assert "X-IMMUTABLE" in rerated.reason and "credit memo" in rerated.reason
    assert "from 23000 gal to 20000 gal (event ev-actual)" in rerated.reason
    assert "GR-VOL 149.50 -> 130.00" in rerated.reason
    assert rerated.tariff_versions == billed_on_estimate.tariff_versions


def test_a_read_above_what_was_billed_is_a_debit_of_only_the_further_difference(
    billed_on_estimate: Bill, engine: RatingEngine
) -> None:
    # The bill now stands on 20,000 gal (one credit booked); 21,000 arrives:
    # 1 kgal x 6.50 = +6.50 (replacement round(6.50 x 0.12) = 0.78: 136.50 -> 16.38 vs 15.60).
    rerated = rerate(
        billed_on_estimate,
        GR_1,
        billed=Usage(Decimal(20000)),
        new=Usage(Decimal(21000), source_event_id="ev-3"),
        sequence=2,
        engine=engine,
    )
    assert rerated is not None
    assert (rerated.amount, rerated.funds) == (
        Decimal("6.50"),
        {"om": Decimal("5.72"), "replacement": Decimal("0.78")},
    )
    assert "debit memo" in rerated.reason and rerated.reference.endswith("-002")


def test_the_same_volume_or_a_zero_difference_books_nothing(
    billed_on_estimate: Bill, engine: RatingEngine
) -> None:
    # Only the estimated flag changed: the same volume rates the same.
    assert (
        rerate(
            billed_on_estimate,
            GR_1,
            billed=Usage(Decimal(23000), estimated=True, quality="estimated"),
            new=Usage(Decimal(23000)),
            sequence=1,
            engine=engine,
        )
        is None
    )
    # An unmetered account is rated on its estimated gallons, not the read: no difference.
    unmetered = replace(GR_1, meter_size=None, estimated_gallons=Decimal(18000))
    assert (
        rerate(
            billed_on_estimate,
            unmetered,
            billed=Usage(Decimal(23000)),
            new=Usage(Decimal(20000)),
            sequence=1,
            engine=engine,
        )
        is None
    )


def test_a_bill_rated_on_another_tariff_version_than_the_period_now_rates_on_is_refused(
    billed_on_estimate: Bill, engine: RatingEngine
) -> None:
    other = replace(billed_on_estimate, tariff_versions=("grafton-sewer@1999-01-01",))
    with pytest.raises(CannotRerate, match="rated on tariff grafton-sewer@1999-01-01"):
        rerate(
            other, GR_1, billed=Usage(Decimal(23000)), new=Usage(Decimal(20000)), sequence=1, engine=engine
        )
