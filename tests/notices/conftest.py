from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from notices.domain.documents import BillDocument, BillLine, MeterRead, UsagePoint
from notices.domain.model import Recipient


@pytest.fixture
def grafton_bill() -> BillDocument:
    # Grafton 23,000 gal in Q3 2026: 45.00 service + 23 kgal x 6.50 = 149.50 volume.
    return BillDocument(
        tenant="grafton-sewer",
        account_id="GR-1001",
        bill_id="GR-2026Q3-000001",
        period_start=date(2026, 7, 1),
        period_end=date(2026, 10, 1),
        bill_date=date(2026, 10, 1),
        due_date=date(2026, 11, 1),
        customer_name="Ada <Lovelace> & Co",
        service_address="1200 Wisconsin Ave, Grafton WI",
        mailing_lines=("PO Box 12", "Grafton, WI 53024"),
        zip="53024",
        lines=(
            BillLine(
                rule_id="GR-SVC",
                description='Quarterly service charge, 5/8" meter',
                quantity=Decimal(1),
                unit="quarter",
                rate=Decimal("45.00"),
                amount=Decimal("45.00"),
            ),
            BillLine(
                rule_id="GR-VOL",
                description="Volume charge",
                quantity=Decimal("23"),
                unit="kgal",
                rate=Decimal("6.50"),
                amount=Decimal("149.50"),
            ),
        ),
        total=Decimal("194.50"),
        previous_balance=Decimal("10.00"),
        payments_since=Decimal("10.00"),
        amount_due=Decimal("194.50"),
        # 24,000 - 1,000 = 23,000 gal, the present read estimated.
        reads=(
            MeterRead(
                meter_id="M-1",
                previous_read_on=date(2026, 7, 1),
                previous_reading="1000",
                present_read_on=date(2026, 10, 1),
                present_reading="24000",
                quality="estimated",
                consumption_gal=Decimal("23000"),
            ),
        ),
        usage=tuple(
            UsagePoint(
                period_start=date(2023 + (m // 12), m % 12 + 1, 1), volume_gal=Decimal(20000 + 500 * m)
            )
            for m in range(0, 45, 3)
        ),
        estimated=True,
    )


@pytest.fixture
def opted_in() -> Recipient:
    return Recipient(
        name="Ada <Lovelace> & Co",
        address_lines=("PO Box 12", "Grafton, WI 53024"),
        zip="53024",
        email="ada@example.org",
        email_opt_in=True,
    )


@pytest.fixture
def paper() -> Recipient:
    return Recipient(name="Grace Hopper", address_lines=("1 Navy Way", "Grafton, WI 53024"), zip="53024")
