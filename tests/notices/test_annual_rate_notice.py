"""SU-ANNUAL-NOTICE reads the tariff in force (issue 35): the rate told is the version in
force on the bill date, so after the board adopts the rate study's rates the next notice
tells them; each use-charge line's treatment part is at the share of its own version."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from billing.events import BillIssued, IssuedLine, Party
from common.tariff_files import default_tariffs_dir, load_tariff_book
from common.tariffs import SullivanTariff, TariffBook
from notices.app.delivery import annual_rate_notice

SULLIVAN = "sullivan-sewer"


@pytest.fixture(scope="module")
def book() -> TariffBook:
    """The shipped tariffs with Sullivan's 2026 rates adopted: use 7.65, treatment 60%."""
    shipped = load_tariff_book(default_tariffs_dir())
    current = shipped.versions(SULLIVAN)[-1]
    assert isinstance(current, SullivanTariff)
    adopted = current.model_copy(
        update={
            "effective_from": date(2026, 1, 1),
            "use_rate_per_kgal": current.use_rate_per_kgal.model_copy(update={"value": Decimal("7.65")}),
            "treatment_portion": current.treatment_portion.model_copy(update={"value": Decimal("0.60")}),
        }
    )
    return shipped.with_proposed(adopted)


def _bill(period_start: date, period_end: date, bill_date: date, lines: tuple[IssuedLine, ...]) -> BillIssued:
    total = sum((ln.amount for ln in lines), Decimal("0.00"))
    party = Party(name="Sam Sullivan", address="1 Main St; Sullivan, WI 53178")
    return BillIssued(
        occurred_at=datetime(bill_date.year, bill_date.month, bill_date.day, 11, tzinfo=UTC),
        tenant=SULLIVAN,
        account_id="SU-0001",
        bill_id=f"SU-0001-{period_start.isoformat()}",
        bill_number=f"SU-{period_start:%Y%m}-SU-0001",
        period_start=period_start,
        period_end=period_end,
        bill_date=bill_date,
        due_date=date.fromordinal(bill_date.toordinal() + 20),
        lines=lines,
        total=total,
        previous_balance=Decimal("0.00"),
        payments_since=Decimal("0.00"),
        amount_due=total,
        recipient=party,
    )


def _use(kgal: str, rate: str, amount: str) -> IssuedLine:
    return IssuedLine(
        rule_id="SU-USE",
        description="Sewer use charge per 1,000 gallons",
        quantity=kgal,
        unit="kgal",
        rate=rate,
        amount=Decimal(amount),
    )


def test_the_notice_tells_the_rate_in_force_on_the_bill_date(book: TariffBook) -> None:
    """The last quarter of 2025 is billed at 7.25 on 2026-01-05, when 7.65 is in force: the
    notice tells 7.65 and 60%, and this bill's treatment part is at its own version's 62%."""
    bill = _bill(date(2025, 10, 1), date(2026, 1, 1), date(2026, 1, 5), (_use("20", "7.25", "145.00"),))
    text = annual_rate_notice(book, bill)
    assert text is not None
    assert "$7.65 per 1,000 gallons (tariff sullivan-sewer@2026-01-01, in force on 2026-01-05)" in text
    assert "60% of it pays for wastewater treatment" in text
    assert "$89.90 of this bill's sewer use charge of $145.00" in text  # 145.00 x 0.62


def test_a_bill_across_the_change_splits_the_treatment_part_by_version(book: TariffBook) -> None:
    lines = (_use("10", "7.25", "72.50"), _use("10", "7.65", "76.50"))
    bill = _bill(date(2025, 12, 1), date(2026, 3, 1), date(2026, 3, 3), lines)
    text = annual_rate_notice(book, bill)
    assert text is not None
    # 72.50 x 0.62 = 44.95; 76.50 x 0.60 = 45.90
    assert "$90.85 of this bill's sewer use charge of $149.00" in text


def test_before_the_change_the_notice_tells_the_rate_then_in_force(book: TariffBook) -> None:
    bill = _bill(date(2025, 4, 1), date(2025, 7, 1), date(2025, 7, 2), (_use("20", "7.25", "145.00"),))
    text = annual_rate_notice(book, bill)
    assert text is not None and "$7.25 per 1,000 gallons (tariff sullivan-sewer@2025-01-01" in text
    assert "62% of it" in text


def test_other_tenants_have_no_annual_rate_notice(book: TariffBook) -> None:
    bill = _bill(date(2025, 4, 1), date(2025, 7, 1), date(2025, 7, 2), ()).model_copy(
        update={"tenant": "grafton-sewer"}
    )
    assert annual_rate_notice(book, bill) is None
