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
    assert "from 23000 gal to 20000 gal; " in rerated.reason
    assert "ev-actual" not in rerated.reason  # an event id is no reason a customer reads
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


# --- a stormwater period whose ERU changed after it was billed (rerate_parcel) ----------

PPW_1 = replace(
    GR_1,
    tenant="pleasant-prairie-stormwater",
    account_id="PPW-1",
    meter_size=None,
    parcel_id="P-9",
)


def test_a_billed_month_rated_again_on_an_eru_changed_inside_it_books_the_difference_once(
    stormwater_bill: Callable[..., Bill], engine: RatingEngine
) -> None:
    from billing.domain.issuing import Eru
    from billing.domain.rerating import rerate_parcel, standing

    # September 2026 billed on 1.00 ERU: 2.00 + 6.00 = 8.00.
    september = stormwater_bill(date(2026, 9, 1), date(2026, 10, 1), date(2026, 10, 1))
    assert september.total == Decimal("8.00")
    # 2.00 ERU from Sep 13: 1.00 x 12/30 x 6.00 = 2.40; 2.00 x 18/30 x 6.00 = 7.20; + 2.00 = 11.60.
    one, two = (
        Eru("residential", Decimal("1.00")),
        Eru("residential", Decimal("2.00"), source_event_id="ev-2"),
    )
    changed = replace(
        two,
        parts=(
            replace(one, start=date(2026, 9, 1), end=date(2026, 9, 13)),
            replace(two, start=date(2026, 9, 13), end=date(2026, 10, 1)),
        ),
    )
    rerated = rerate_parcel(
        september,
        PPW_1,
        eru=changed,
        stands_at=standing(september),
        sequence=1,
        engine=engine,
        what="ERU of parcel P-9 determined 2.00 from 2026-09-13",
        source_event_id="ev-2",
    )
    assert rerated is not None
    assert (rerated.amount, dict(rerated.funds), rerated.reference) == (
        Decimal("3.60"),
        {"om": Decimal("3.60")},
        "RERATE-PPW-1-2026-09-01-001",
    )
    assert rerated.reason.startswith("X-IMMUTABLE re-rating (debit memo): ERU of parcel P-9 determined 2.00")
    assert "PP-CWU-ERU 6.00 -> 9.60" in rerated.reason
    assert "PP-CWU-ERU 7.20 (2.00 ERU x 18/30 days x $6.00)" in rerated.derivation
    assert rerated.rule_ids == ("PP-CWU-ERU", "X-PERIOD", "X-IMMUTABLE")
    # Standing at 11.60 now, the same ERU again books nothing.
    again = rerate_parcel(
        september,
        PPW_1,
        eru=changed,
        stands_at=(rerated.standing, rerated.standing_rules),
        sequence=2,
        engine=engine,
        what="the same",
        source_event_id="ev-2",
    )
    assert again is None


def test_a_sullivan_bill_carries_the_total_recs_it_was_rated_on(engine: RatingEngine) -> None:
    from billing.domain.bills import issue
    from billing.domain.rating import Account, RatingInput
    from billing.domain.rerating import billed_total_recs

    rated = engine.rate(
        RatingInput(
            "sullivan-sewer",
            *Q3,
            account=Account("residential", meter_size="5/8", dwelling_units=1),
            water_gallons=Decimal(20000),
            total_recs=Decimal("412.5"),
        )
    )
    bill = issue(rated, account_id="SU-1", bill_date=Q3[1], due_days=20, history=(), last_bill_date=None)
    assert billed_total_recs(bill) == Decimal("412.5")
    # A bill without an SU-REC line (another tenant's) has none: the accounts as of its issue are used.
    assert billed_total_recs(replace(bill, lines=bill.lines[:1])) is None
