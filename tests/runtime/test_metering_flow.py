"""Metering on the local runtime (moto server, the real template): meters and reads end as
consumptions billing keeps; bad rows are reported; estimates, exchanges and slugs (issue 9)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
PP = "pleasant-prairie-sewer"
METERS_HEADER = "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading,size,removed_on,final_reading\n"
METERS = METERS_HEADER + "".join(
    f"{row}\n"
    for row in (
        f"{PP},PP-M1,PP-1,water,gal,5,2026-01-01,95000,5/8,,",  # wraps in February
        f"{PP},PP-M2,PP-2,water,gal,6,2026-01-01,0,5/8,2026-02-15,5000",  # exchanged on 02-15 ...
        f"{PP},PP-M3,PP-2,water,cf,4,2026-02-15,10,5/8,,",  # ... for a cubic-feet meter
        f"{PP},PP-W4,PP-4,water,gal,6,2026-01-01,0,1,,",
        f"{PP},PP-D4,PP-4,waste,gal,6,2026-01-01,0,1,,",  # PP-SEW-FLOW: replaces water use
        f"{PP},PP-M5,PP-5,water,gal,6,2026-01-01,0,5/8,,",
        f"{PP},PP-M6,PP-6,water,gal,6,2026-01-01,0,5/8,,",
        f"{PP},PP-FM7,PP-SAT-7,flow-monitor,gal,9,2026-01-01,0,,,",
    )
)
READS = "tenant,meter_id,read_on,reading,read_type\n" + "".join(
    f"{row}\n"
    for row in (
        f"{PP},PP-M1,2026-02-01,98000,",
        f"{PP},PP-M1,2026-03-01,1000,",
        f"{PP},PP-M1,2026-02-01,98000,",  # line 4: a duplicate, ignored
        f"{PP},PP-M2,2026-02-01,3000,",
        f"{PP},PP-M3,2026-03-01,110,",
        f"{PP},PP-W4,2026-02-01,9000,",
        f"{PP},PP-D4,2026-02-01,7000,",
        f"{PP},PP-M5,2026-02-01,0,",
        f"{PP},PP-M5,2026-02-01,50,",  # line 10: conflicts with line 9
        f"{PP},PP-M6,2026-02-01,3100,",  # and no read for March 1: estimated after the window
    )
)


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2026, 3, 3, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
    ) as runtime:
        runtime.upload("UploadsBucket", "meters/2026-01.csv", METERS)
        runtime.upload("UploadsBucket", "reads/2026-03.csv", READS)
        yield runtime


def scan(rt: LocalRuntime, table: str) -> list[dict[str, Any]]:
    from common.dynamo import from_item

    pages = rt.client("dynamodb").get_paginator("scan").paginate(TableName=rt.resource(table))
    return [from_item(i) for page in pages for i in page["Items"]]


def kept_at_billing(rt: LocalRuntime) -> dict[tuple[str, str], Decimal]:
    """(account, period start) -> volume of the consumptions billing keeps (either key layout:
    ``USAGE#tenant#account``/``PERIOD#start#end`` or ``USAGE#tenant#start#end``/account)."""
    kept = {}
    for i in scan(rt, "BillingTable"):
        if i["pk"].startswith("USAGE#"):
            start = i.get("period_start") or i["pk"].split("#")[2]
            kept[(i["account_id"], start)] = Decimal(str(i["volume_gal"]))
    return kept


def metering_consumption(rt: LocalRuntime, account: str, start: str) -> dict[str, Any]:
    """The period as metering recorded it: in the ConsumptionsDetermined chunk item (kept)."""
    [found] = [
        c
        for i in scan(rt, "MeteringTable")
        if i.get("detail_type") == "ConsumptionsDetermined"
        for c in json.loads(i["detail"])["consumptions"]
        if c["account_id"] == account and c["period_start"] == start
    ]
    return found


def test_reads_end_as_consumptions_that_billing_keeps(rt: LocalRuntime) -> None:
    kept = kept_at_billing(rt)
    assert rt.dead_letters == []
    # PP-1: 98,000 - 95,000; then the rollover 10^5 - 98,000 + 1,000 = 3,000
    assert (kept[("PP-1", "2026-01-01")], kept[("PP-1", "2026-02-01")]) == (3000, 3000)
    assert "rollover" in metering_consumption(rt, "PP-1", "2026-02-01")["flags"]
    # PP-2 in February: old meter 5,000 - 3,000 + new meter (110 - 10) cf x 7.48052 = 2,748.052
    assert kept[("PP-2", "2026-02-01")] == Decimal("2748.052")
    assert "exchange" in metering_consumption(rt, "PP-2", "2026-02-01")["flags"]
    # PP-4: the waste meter's 7,000, not the water meter's 9,000
    assert kept[("PP-4", "2026-01-01")] == 7000
    assert metering_consumption(rt, "PP-5", "2026-01-01")["flags"] == ["zero_use"]


def test_duplicate_and_conflicting_reads_are_reported_by_line(rt: LocalRuntime) -> None:
    [report] = [
        i
        for i in scan(rt, "MeteringTable")
        if i["pk"].startswith("FILE#") and i["key"] == "reads/2026-03.csv"
    ]
    assert report["rejected"] == 1  # the duplicate is not an error
    body = (
        rt.client("s3")
        .get_object(Bucket=rt.resource("UploadsBucket"), Key=report["report_key"])["Body"]
        .read()
    )
    [line] = [json.loads(x) for x in body.decode().splitlines()]
    assert (line["line"], line["column"]) == (10, "reading") and "got 50, recorded 0" in line["reason"]


def test_the_same_file_again_changes_nothing(rt: LocalRuntime) -> None:
    metering, billing = scan(rt, "MeteringTable"), kept_at_billing(rt)
    rt.upload("UploadsBucket", "reads/2026-03-resent.csv", READS)
    assert kept_at_billing(rt) == billing
    assert len(scan(rt, "MeteringTable")) == len(metering)


def test_a_missing_read_is_estimated_after_the_read_window_and_kept_at_billing(rt: LocalRuntime) -> None:
    assert ("PP-6", "2026-02-01") not in kept_at_billing(rt)
    rt.clock.advance(to=datetime(2026, 3, 7, 12, tzinfo=UTC))  # daily run after 03-01 + 5 days
    # January's 3,100 gal / 31 days x 28 days of February
    assert kept_at_billing(rt)[("PP-6", "2026-02-01")] == 2800
    assert metering_consumption(rt, "PP-6", "2026-02-01")["estimated"] is True
    assert rt.dead_letters == []


def test_a_slug_in_interval_data_raises_slug_detected(rt: LocalRuntime) -> None:
    start = datetime(2026, 3, 1, 6, tzinfo=UTC)
    volumes = ["10"] * 288 + ["60"] * 5 + ["10"]
    rows = "".join(
        f"{PP},PP-FM7,{(start + timedelta(minutes=5 * i)).isoformat()},{v}\n" for i, v in enumerate(volumes)
    )
    rt.upload(
        "UploadsBucket", "reads/interval/2026-03-01.csv", "tenant,meter_id,interval_start,volume\n" + rows
    )
    items = scan(rt, "MeteringTable")
    days = {i["day"]: Decimal(str(i["volume_gal"])) for i in items if i["pk"] == f"DAY#{PP}#PP-FM7"}
    assert sum(days.values()) == 288 * 10 + 5 * 60 + 10 and len(days) == 2  # one item per local day
    [slug] = [json.loads(i["detail"]) for i in items if i.get("detail_type") == "SlugDetected"]
    assert (slug["meter_id"], slug["intervals"], slug["volume_gal"]) == ("PP-FM7", 5, "300")
    assert rt.dead_letters == []
    assert not any(
        i.function == "MeteringOnReadFileUploadedFunction" and i.trigger == "sqs" and i.error
        for i in rt.invocations
    )


def test_three_bad_rows_of_a_thousand_keep_997_at_billing_and_report_3(rt: LocalRuntime) -> None:
    meters = METERS_HEADER + "".join(
        f"{PP},PPB-{i},PPBA-{i},water,gal,6,2026-02-01,0,5/8,,\n" for i in range(1000)
    )
    rt.upload("UploadsBucket", "meters/bulk.csv", meters)
    rows = [f"{PP},PPB-{i},2026-03-01,{100 + i},\n" for i in range(1000)]
    rows[0] = f"{PP},PPB-0,2026-03-01,{'9' * 40},\n"
    rows[499] = f"{PP},=HYPERLINK(1),2026-03-01,5,\n"
    rows[999] = f"{PP},PPB-999,2100-03-01,5,\n"
    rt.upload(
        "UploadsBucket",
        "reads/bulk-2026-03.csv",
        "tenant,meter_id,read_on,reading,read_type\n" + "".join(rows),
    )
    [file] = [
        i
        for i in scan(rt, "MeteringTable")
        if i["pk"].startswith("FILE#") and i["key"] == "reads/bulk-2026-03.csv"
    ]
    assert (file["accepted"], file["rejected"]) == (997, 3)
    body = (
        rt.client("s3").get_object(Bucket=rt.resource("UploadsBucket"), Key=file["report_key"])["Body"].read()
    )
    assert [json.loads(x)["line"] for x in body.decode().splitlines()] == [2, 501, 1001]
    kept = [k for k in kept_at_billing(rt) if k[0].startswith("PPBA-")]
    assert len(kept) == 997  # February of every account whose read was good
    assert rt.dead_letters == []
