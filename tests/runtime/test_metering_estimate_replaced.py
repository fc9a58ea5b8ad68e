"""Metering on the local runtime: an actual read replaces the daily run's estimate (issue 9, X-PERIOD).

February has no read: the daily run estimates it (100 gal/day x 28 days = 2,800 gal). The
read of 2026-04-01 then shows only 2,000 gal since 2026-02-01, below the estimated register:
metering publishes February again, corrected by proration, and March from the corrected point.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
PP = "pleasant-prairie-sewer"
METERS = (
    "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading,size,removed_on,final_reading\n"
    f"{PP},PP-E1,PP-E,water,gal,6,2026-01-01,0,5/8,,\n"
)
READS = "tenant,meter_id,read_on,reading,read_type\n"


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2026, 3, 3, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
    ) as runtime:
        runtime.upload("UploadsBucket", "meters/2026-01.csv", METERS)
        runtime.upload("UploadsBucket", "reads/2026-02.csv", READS + f"{PP},PP-E1,2026-02-01,3100,\n")
        yield runtime


def scan(rt: LocalRuntime, table: str) -> list[dict[str, Any]]:
    from common.dynamo import from_item

    pages = rt.client("dynamodb").get_paginator("scan").paginate(TableName=rt.resource(table))
    return [from_item(i) for page in pages for i in page["Items"]]


def published(rt: LocalRuntime, start: str) -> list[dict[str, Any]]:
    """Metering's determinations of the period, as its ConsumptionsDetermined chunks keep them."""
    return [
        c
        for i in scan(rt, "MeteringTable")
        if i.get("detail_type") == "ConsumptionsDetermined"
        for c in json.loads(i["detail"])["consumptions"]
        if c["account_id"] == "PP-E" and c["period_start"] == start
    ]


def test_a_late_actual_read_publishes_the_estimated_period_again_corrected(rt: LocalRuntime) -> None:
    rt.clock.advance(to=datetime(2026, 3, 7, 12, tzinfo=UTC))  # daily run after 03-01 + 5 days
    [estimate] = published(rt, "2026-02-01")
    assert (estimate["quality"], Decimal(estimate["volume_gal"])) == ("estimated", 2800)

    rt.clock.advance(to=datetime(2026, 4, 2, 12, tzinfo=UTC))
    rt.upload("UploadsBucket", "reads/2026-04.csv", READS + f"{PP},PP-E1,2026-04-01,5100,\n")
    february = published(rt, "2026-02-01")
    [corrected] = [c for c in february if "estimate_replaced" in c["flags"]]
    # 2,000 gal x 28/59 days = 949.1525... -> 949.153, prorated between the two actual reads
    assert (corrected["quality"], Decimal(corrected["volume_gal"])) == ("prorated", Decimal("949.153"))
    [march] = published(rt, "2026-03-01")
    assert Decimal(march["volume_gal"]) == Decimal("1050.847")  # 5,100 - 4,049.153: nothing lost
    assert rt.dead_letters == []
    # billing keeps the corrected February (its latest determination) and March
    kept = {
        i["period_start"]: Decimal(str(i["volume_gal"]))
        for i in scan(rt, "BillingTable")
        if i["pk"].startswith("USAGE#") and i.get("account_id") == "PP-E"
    }
    assert (kept["2026-02-01"], kept["2026-03-01"]) == (Decimal("949.153"), Decimal("1050.847"))

    # the same file again (same content digest) changes nothing; the same read in another file
    # is a duplicate: no third determination of February
    metering = sorted(scan(rt, "MeteringTable"), key=lambda i: (i["pk"], i["sk"]))
    rt.upload("UploadsBucket", "reads/2026-04-resent.csv", READS + f"{PP},PP-E1,2026-04-01,5100,\n")
    assert sorted(scan(rt, "MeteringTable"), key=lambda i: (i["pk"], i["sk"])) == metering
    rt.upload("UploadsBucket", "reads/2026-04-again.csv", READS + f"{PP},PP-E1,2026-04-01,5100,\n" * 2)
    assert len(published(rt, "2026-02-01")) == 2 and len(published(rt, "2026-03-01")) == 1
    assert rt.dead_letters == []
