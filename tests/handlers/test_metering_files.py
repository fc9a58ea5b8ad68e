"""metering.handlers.on_read_file_uploaded on moto: meters and read files become consumptions, once."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from handler_support import UPLOADS, Stack, lambda_context, sqs_event

from common import clock
from metering.handlers import on_read_file_uploaded, publish_outbox

METERS = (
    "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading,size,removed_on,final_reading\n"
    "grafton-sewer,GR-M1,GR-1,water,gal,6,2026-01-01,1000,5/8,,\n"
    "grafton-sewer,GR-M2,GR-2,water,cf,4,2026-01-01,20,5/8,,\n"
)
READS = (
    "tenant,meter_id,read_on,reading\n"
    "grafton-sewer,GR-M1,2026-04-01,11000\n"
    "grafton-sewer,GR-M2,2026-04-01,820\n"
    "grafton-sewer,GR-M3,2026-04-01,5\n"
    "grafton-sewer,=cmd|' /C calc'!A0,2026-04-01,5\n"
)


@pytest.fixture(autouse=True)
def simulated_time() -> Any:
    clock.install(clock.FixedClock(datetime(2026, 4, 3, 15, tzinfo=UTC)))
    yield
    clock.install(None)


def handle(stack: Stack, key: str, text: str) -> Any:
    return on_read_file_uploaded.lambda_handler(
        sqs_event(json.dumps(stack.put_upload(key, text.encode()))), lambda_context()
    )


def outbox(stack: Stack, detail_type: str) -> list[dict[str, Any]]:
    return [json.loads(i["detail"]) for i in stack.outbox("metering") if i["detail_type"] == detail_type]


def test_a_read_file_becomes_one_chunk_event_and_a_report_of_its_bad_lines(metering: Stack) -> None:
    assert handle(metering, "meters/2026-01.csv", METERS) == {"batchItemFailures": []}
    assert handle(metering, "reads/2026-04.csv", READS) == {"batchItemFailures": []}

    [chunk] = outbox(metering, "ConsumptionsDetermined")
    volumes = {c["account_id"]: c["volume_gal"] for c in chunk["consumptions"]}
    # GR-1: 11,000 - 1,000 gal; GR-2: (820 - 20) cf x 7.48052 gal/cf = 5,984.416 gal
    assert volumes == {"GR-1": "10000", "GR-2": "5984.416"}
    [rejected] = outbox(metering, "ReadsRejected")
    assert rejected["rejected_count"] == 2 and [r["line"] for r in rejected["rejections"]] == [4, 5]
    report = metering.s3.get_object(Bucket=UPLOADS, Key=rejected["report_key"])["Body"].read().decode()
    assert rejected["report_key"].startswith("reports/metering/reads/2026-04.csv")
    assert [json.loads(line)["column"] for line in report.splitlines()] == ["meter_id", "meter_id"]


def test_the_same_file_again_changes_nothing_and_publishes_nothing(metering: Stack) -> None:
    handle(metering, "meters/2026-01.csv", METERS)
    handle(metering, "reads/2026-04.csv", READS)
    before = metering.items("metering")
    handle(metering, "reads/2026-04-again.csv", READS)
    assert metering.items("metering") == before


def test_the_outbox_publisher_sends_the_chunk_to_the_bus(metering: Stack) -> None:
    handle(metering, "meters/2026-01.csv", METERS)
    handle(metering, "reads/2026-04.csv", READS)
    result = publish_outbox.lambda_handler({"Records": metering.stream_records("metering")}, lambda_context())
    assert result == {"batchItemFailures": []}
    types = sorted(e["detail-type"] for e in metering.captured())
    assert types == ["ConsumptionsDetermined", "ReadsRejected"]


def test_an_interval_file_is_not_taken_in_as_register_reads(metering: Stack) -> None:
    result = handle(metering, "reads/interval/2026-04-01.csv", "tenant,meter_id,interval_start,volume\n")
    assert result == {"batchItemFailures": []}  # acknowledged as a wiring fault, never retried
    assert metering.state("metering") == []


def reads_kept(stack: Stack) -> list[dict[str, Any]]:
    """Every read a file's batches recorded, as dicts of the item's columns."""
    rows = []
    for item in stack.items("metering"):
        if item["pk"].startswith("READS#"):
            columns = item["columns"].split(",")
            rows += [dict(zip(columns, row, strict=True)) for row in json.loads(item["reads"])]
    return rows


def test_a_batch_keeps_its_reads_in_one_item_the_failed_ones_with_their_reason(metering: Stack) -> None:
    handle(metering, "meters/2026-01.csv", METERS)
    # line 2 accepted; line 3: GR-M2 read on 2026-05-01, after "today" (2026-04-03): refused
    handle(
        metering,
        "reads/2026-04.csv",
        "tenant,meter_id,read_on,reading\n" + READS.splitlines()[1] + "\n"
        "grafton-sewer,GR-M2,2026-05-01,820\n",
    )
    parts = [i for i in metering.items("metering") if i["pk"].startswith("READS#")]
    assert len(parts) == 1  # one item for the batch, not one per read
    kept = reads_kept(metering)
    assert [(r["line"], r["meter_id"], r["account_id"], r["status"]) for r in kept] == [
        (2, "GR-M1", "GR-1", "accepted"),
        (3, "GR-M2", "GR-2", "failed"),
    ]
    assert kept[1]["column"] == "read_on" and "in the future" in kept[1]["reason"]
    assert kept[0]["reading"] == "11000" and kept[0]["read_on"] == "2026-04-01"


def test_a_file_looks_each_tenants_tariff_up_once_and_freezes_the_cold_start(
    metering: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 7: the settings were looked up in the tariff book for every row; a file asks the
    book once per tenant (two rows of one tenant here: one lookup). The objects of the cold
    start are frozen out of the garbage collector before the first file is taken in."""
    import gc

    from metering import composition

    book = composition.tariff_book()
    asked: list[str] = []
    in_force = book.in_force

    def counted(tenant: str, on: Any) -> Any:
        asked.append(tenant)
        return in_force(tenant, on)

    assert handle(metering, "meters/2026-01.csv", METERS) == {"batchItemFailures": []}
    assert gc.get_freeze_count() > 0
    monkeypatch.setattr(book, "in_force", counted)
    two_reads = "".join(READS.splitlines(keepends=True)[:3])  # the header, GR-M1 and GR-M2
    assert handle(metering, "reads/2026-04.csv", two_reads) == {"batchItemFailures": []}
    # metered_tenants asks each tenant once, the rows' settings once more (per row and per
    # determined account before: 2 reads + 2 accounts = 4, and 5 lookups in all)
    assert asked.count("grafton-sewer") == 2


def test_a_file_is_taken_in_with_few_young_collections_and_the_thresholds_come_back(
    metering: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 7: a batch's objects live until it is written; the young generation is collected
    every 50,000 allocations while a file is taken in (not 700), and the collector's
    thresholds are what they were once it is done, also when the file fails."""
    import gc

    from metering import composition
    from metering.app import ingest

    take_in_file = ingest.take_in_file
    during: list[tuple[int, int, int]] = []

    def watched(*args: Any, **kwargs: Any) -> Any:
        during.append(gc.get_threshold())
        return take_in_file(*args, **kwargs)

    monkeypatch.setattr(ingest, "take_in_file", watched)
    before = gc.get_threshold()
    assert handle(metering, "meters/2026-01.csv", METERS) == {"batchItemFailures": []}
    assert during == [(composition.YOUNG_COLLECTION_EVERY, *before[1:])]
    assert gc.get_threshold() == before

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the table is gone")

    monkeypatch.setattr(ingest, "take_in_file", failing)
    with pytest.raises(RuntimeError):
        with composition.few_collections():
            ingest.take_in_file()
    assert gc.get_threshold() == before
