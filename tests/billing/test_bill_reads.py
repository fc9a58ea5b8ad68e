"""The reads a bill prints (N-BILL's meter reads and dates, estimates marked), from what
billing keeps of metering's consumption; carried on ``BillIssued`` and kept on the bill."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from billing.adapters.items import bill_issued_event, bill_item, bill_of
from billing.adapters.repository import _kept_reads
from billing.domain.bills import Bill, BilledRead, reads_behind


def test_each_meters_first_and_last_read_of_the_period_are_previous_and_present() -> None:
    reads_used = [
        {"meter_id": "M-1", "read_on": "2026-10-01", "reading": "24000", "read_type": "estimated"},
        {"meter_id": "M-1", "read_on": "2026-07-01", "reading": "1000", "read_type": "actual"},
        {"meter_id": "M-2", "read_on": "2026-07-01", "reading": "500", "read_type": "actual"},
        {"meter_id": "M-2", "read_on": "2026-10-01", "reading": "620", "read_type": "actual"},
    ]
    meters = [
        {"meter_id": "M-1", "kind": "water", "volume_gal": "23000", "quality": "estimated"},
        {"meter_id": "M-2", "kind": "water", "volume_gal": "120", "quality": "actual"},
    ]
    m1, m2 = reads_behind(Decimal("23120"), "estimated", True, reads_used, meters)
    assert (m1.meter_id, m1.previous_read_on, m1.previous_reading) == ("M-1", date(2026, 7, 1), "1000")
    assert (m1.present_read_on, m1.present_reading, m1.consumption_gal) == (
        date(2026, 10, 1),
        "24000",
        Decimal("23000"),
    )
    assert m1.estimated and m1.quality == "estimated"
    assert (m2.consumption_gal, m2.estimated, m2.quality) == (Decimal("120"), False, "actual")


def test_without_kept_reads_the_bill_carries_the_volume_and_its_quality_alone() -> None:
    item = {"volume_gal": "23000", "quality": "prorated", "estimated": False}
    assert _kept_reads(item) == ()  # the issuing path then uses the consumption alone
    [only] = reads_behind(Decimal("23000"), "prorated", False)
    assert (only.meter_id, only.present_reading, only.consumption_gal, only.quality) == (
        None,
        None,
        Decimal("23000"),
        "prorated",
    )
    # Kept as metering's JSON text, the reads are used.
    item["reads_used"] = (
        '[{"meter_id": "M-9", "read_on": "2026-10-01", "reading": "77", "read_type": "actual"}]'
    )
    [read] = _kept_reads(item)
    assert (read.meter_id, read.present_reading, read.previous_reading) == ("M-9", "77", None)


def test_the_reads_survive_the_bill_item_and_reach_bill_issued() -> None:
    read = BilledRead(
        consumption_gal=Decimal("23000"),
        quality="estimated",
        estimated=True,
        meter_id="M-1",
        previous_read_on=date(2026, 7, 1),
        previous_reading="1000",
        present_read_on=date(2026, 10, 1),
        present_reading="24000",
    )
    bill = Bill(
        tenant="grafton-sewer",
        account_id="GR-1",
        bill_id="GR-1-2026-07-01",
        bill_number="GR-202607-GR-1",
        period_start=date(2026, 7, 1),
        period_end=date(2026, 10, 1),
        bill_date=date(2026, 10, 1),
        due_date=date(2026, 11, 1),
        lines=(),
        total=Decimal("0"),
        previous_balance=Decimal("0"),
        payments_since=Decimal("0"),
        estimated=True,
        reads=(read,),
    )
    notice = {
        "recipient": {"name": "Ann", "address": "1 Main St"},
        "owner": {"name": "Ann", "address": "1 Main"},
    }
    kept = bill_of(bill_item(bill, "2026-10-01T11:00:00+00:00", notice))
    assert kept.reads == (read,)
    [issued] = bill_issued_event(kept, notice, datetime(2026, 10, 1, 11, tzinfo=UTC)).reads
    assert (issued.meter_id, issued.previous_reading, issued.present_reading, issued.estimated) == (
        "M-1",
        "1000",
        "24000",
        True,
    )
    assert issued.consumption_gal == Decimal("23000")
