"""STYLE 18: metering's events stay under EventBridge's 256 KB by construction."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from pydantic import ValidationError

from metering.events import (
    CHUNK_MAX,
    FLAGS_MAX,
    ID_MAX,
    KEY_MAX,
    METERS_MAX,
    READS_USED_MAX,
    REASON_MAX,
    REJECTIONS_IN_EVENT_MAX,
    ConsumptionDetermined,
    ConsumptionsDetermined,
    LineRejection,
    MeterUse,
    ReadsRejected,
    ReadUsed,
)

EVENTBRIDGE_MAX = 256 * 1024
AT = datetime(2026, 10, 6, tzinfo=UTC)
BIG = Decimal("9" * 32 + "." + "9" * 6)  # 38 significant digits, the most DynamoDB holds


def largest_consumption() -> ConsumptionDetermined:
    return ConsumptionDetermined(
        occurred_at=AT,
        tenant="t" * ID_MAX,
        account_id="a" * ID_MAX,
        period_start=date(2026, 7, 1),
        period_end=date(2026, 10, 1),
        volume_gal=BIG,
        quality="estimated",
        estimated=True,
        meters=tuple(
            MeterUse(meter_id="m" * ID_MAX, kind="water", volume_gal=BIG, quality="estimated")
            for _ in range(METERS_MAX)
        ),
        reads_used=tuple(
            ReadUsed(meter_id="m" * ID_MAX, read_on=date(2026, 7, 1), reading=BIG, read_type="actual")
            for _ in range(READS_USED_MAX)
        ),
        flags=("zero_use", "high_use", "low_use", "rollover", "exchange", "waste_meter")[:FLAGS_MAX],
        winter_average_gal=BIG,
        source_file="k" * KEY_MAX,
    )


def test_the_largest_possible_chunk_fits_in_one_eventbridge_entry() -> None:
    chunk = ConsumptionsDetermined(
        occurred_at=AT, file_id="f" * ID_MAX, chunk=10**9, consumptions=(largest_consumption(),) * CHUNK_MAX
    )
    entry = chunk.put_events_entry("sewerbill-local")
    size = sum(len(v.encode()) for v in entry.values())
    assert size < EVENTBRIDGE_MAX, size


def test_a_chunk_holds_no_more_than_its_maximum() -> None:
    with pytest.raises(ValidationError):
        ConsumptionsDetermined(
            occurred_at=AT, file_id="f", chunk=0, consumptions=(largest_consumption(),) * (CHUNK_MAX + 1)
        )


def test_the_largest_possible_rejection_summary_fits_and_the_report_goes_to_s3() -> None:
    event = ReadsRejected(
        occurred_at=AT,
        file_key="k" * KEY_MAX,
        etag="e" * 2 * ID_MAX,
        file_id="f" * 2 * ID_MAX,
        rejections=tuple(
            LineRejection(line=10**9, column="c" * ID_MAX, reason="r" * REASON_MAX)
            for _ in range(REJECTIONS_IN_EVENT_MAX)
        ),
        rejected_count=10**9,
        accepted_count=10**9,
        report_key="reports/metering/" + "k" * (KEY_MAX - 20),
    )
    entry = event.put_events_entry("sewerbill-local")
    assert sum(len(v.encode()) for v in entry.values()) < EVENTBRIDGE_MAX


def test_a_volume_beyond_38_digits_cannot_be_published() -> None:
    with pytest.raises(ValidationError, match="38"):
        ConsumptionDetermined(
            occurred_at=AT,
            tenant="t",
            account_id="a",
            period_start=date(2026, 7, 1),
            period_end=date(2026, 10, 1),
            volume_gal=Decimal("1" * 39),
            source_file="k",
        )


def test_a_corrected_determination_carries_every_flag_that_can_come_together() -> None:
    # zero, high and low use exclude each other: at most five flags with estimate_replaced
    together = ("estimate_replaced", "exchange", "high_use", "rollover", "waste_meter")
    assert len(together) <= FLAGS_MAX
    corrected = largest_consumption().model_copy(update={"quality": "prorated", "estimated": False})
    corrected = ConsumptionDetermined.model_validate({**corrected.model_dump(), "flags": together})
    again = ConsumptionDetermined.model_validate_json(corrected.model_dump_json())
    assert again.flags == together and again.business_key() == largest_consumption().business_key()


def test_a_batch_s_reads_are_cut_into_items_under_the_item_limit() -> None:
    from datetime import date
    from decimal import Decimal

    from metering.adapters.dynamodb import READS_PART_BYTES, reads_items
    from metering.app.ingest import BatchOutput, FailedRead
    from metering.domain.readings import Reading

    longest = "M" * 64
    out = BatchOutput(
        failed_reads=[
            FailedRead(
                Reading("t", longest, date(2026, 4, 1), Decimal(n), "actual", n),
                "A" * 64,
                "reading",
                "x" * 300,
            )
            for n in range(2, 2002)
        ]
    )
    items = list(reads_items(out, "etag-1", "2026-04-01T00:00:00+00:00"))
    # 2,000 rows of about 470 bytes of JSON: 940 KB -> at least 4 items of at most 300,000 bytes
    assert len(items) >= 4
    assert all(len(i["reads"]) <= READS_PART_BYTES for i in items)
    assert sum(i["count"] for i in items) == 2000
    assert [i["sk"] for i in items] == sorted({i["sk"] for i in items})  # distinct keys, line order
    assert items[0]["sk"] == "PART#000000002"
