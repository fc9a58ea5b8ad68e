"""Issue 26 on the local runtime (moto server, the real template): a read file refused for
future dates is taken in when sent again after the clock passed them; a second interval
file for the same meter-day adds to the first; an interval given twice is one interval."""

from __future__ import annotations

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
METERS = (
    "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading,size,removed_on,final_reading\n"
    f"{PP},SEM-1,SEMA-1,water,gal,6,2026-01-01,0,5/8,,\n"
    f"{PP},SEM-AMI,SEMA-2,water,gal,9,2026-01-01,0,,,\n"
)
FUTURE_READS = f"tenant,meter_id,read_on,reading\n{PP},SEM-1,2026-04-01,3000\n{PP},SEM-1,2026-05-01,6000\n"
T0 = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)  # 00:00 in Chicago (CST)


def stamp(i: int) -> str:
    return (T0 + timedelta(minutes=5 * i)).isoformat()


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2026, 3, 3, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
    ) as runtime:
        runtime.upload("UploadsBucket", "meters/semantics.csv", METERS)
        yield runtime


def items(rt: LocalRuntime) -> list[dict[str, Any]]:
    from common.dynamo import from_item

    pages = rt.client("dynamodb").get_paginator("scan").paginate(TableName=rt.resource("MeteringTable"))
    return [from_item(i) for page in pages for i in page["Items"]]


def file_record(rt: LocalRuntime, key: str) -> dict[str, Any]:
    [record] = [i for i in items(rt) if i["pk"].startswith("FILE#") and i["key"] == key]
    return record


def test_interval_files_add_to_a_day_and_a_repeat_is_one_interval(rt: LocalRuntime) -> None:
    header = "tenant,meter_id,interval_start,volume\n"
    rt.upload(
        "UploadsBucket",
        "reads/interval/sem-1.csv",
        header + f"{PP},SEM-AMI,{stamp(0)},1.5\n" + "".join(f"{PP},SEM-AMI,{stamp(1)},{v}\n" for v in "223"),
    )
    first = file_record(rt, "reads/interval/sem-1.csv")
    assert (first["lines"], first["accepted"], first["repeated"], first["rejected"]) == (4, 2, 1, 1)
    rt.upload("UploadsBucket", "reads/interval/sem-2.csv", header + f"{PP},SEM-AMI,{stamp(2)},4\n")
    [day] = [i for i in items(rt) if i["pk"] == f"DAY#{PP}#SEM-AMI"]
    assert (Decimal(str(day["volume_gal"])), day["intervals"]) == (Decimal("7.5"), 3)


def test_a_future_read_file_is_taken_in_when_sent_again_after_its_dates(rt: LocalRuntime) -> None:
    rt.upload("UploadsBucket", "reads/sem-future.csv", FUTURE_READS)
    early = file_record(rt, "reads/sem-future.csv")
    assert (early["accepted"], early["rejected"], early["final"]) == (0, 2, False)
    rt.clock.advance(to=datetime(2026, 5, 2, 12, tzinfo=UTC))
    rt.upload("UploadsBucket", "reads/sem-future.csv", FUTURE_READS)
    later = file_record(rt, "reads/sem-future.csv")
    assert (later["accepted"], later["rejected"], later["final"], later["passes"]) == (2, 0, True, 2)
    [state] = [i for i in items(rt) if i["pk"] == f"ACCOUNT#{PP}#SEMA-1"]
    assert '"2026-05-01","6000"' in state["state"]
