"""The bus's archive on the local runtime (AWS::Events::Archive, X-RETENTION), and a day's
replay into a fresh consumer queue (docs/DEPLOY.md "Replaying the bus")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from sewerbill.local import LocalRuntime
from sewerbill.local.archive import day_of

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
METERS = (
    "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading\n"
    "pleasant-prairie-sewer,PP-M1,PP-0001,water,gal,6,2025-01-01,1000\n"
)
READS = "tenant,meter_id,read_on,reading\npleasant-prairie-sewer,PP-M1,2025-02-01,13000\n"
SOURCES = ["sewerbill.billing", "sewerbill.common", "sewerbill.metering", "sewerbill.sampling"]


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2025, 2, 2, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
        state_dir=tmp_path_factory.mktemp("state"),
    ) as rt:
        yield rt


def _queue(rt: LocalRuntime, name: str) -> tuple[str, str]:
    sqs = rt.client("sqs")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def _everything(rt: LocalRuntime, url: str) -> list[dict[str, Any]]:
    sqs = rt.client("sqs")
    found = []
    while True:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        if not messages:
            return found
        for m in messages:
            found.append(json.loads(m["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


def test_the_archive_keeps_seven_years_of_the_bus_and_replays_exactly_one_day(real: LocalRuntime) -> None:
    [archive] = real.stack.archives
    assert archive.logical_id == "EventBusArchive" and archive.retention_days == 2557
    bus = real.resource("EventBus")
    # what the bus delivers, seen by a rule of the test's own (the expectation)
    seen_url, seen_arn = _queue(real, "everything-seen")
    events = real.client("events")
    events.put_rule(Name="everything-seen", EventBusName=bus, EventPattern=json.dumps({"source": SOURCES}))
    events.put_targets(Rule="everything-seen", EventBusName=bus, Targets=[{"Id": "q", "Arn": seen_arn}])

    # day one: a read file taken in, its consumption kept by billing
    real.upload("UploadsBucket", "meters/2025-01.csv", METERS)
    real.upload("UploadsBucket", "reads/2025-01.csv", READS)
    # day two: another event on the bus
    real.clock.advance(to=datetime(2025, 2, 3, 9, tzinfo=UTC))
    real.put_event(
        "sewerbill.sampling",
        "ArchiveProbe",
        {"occurred_at": "2025-02-03T09:00:00Z", "event_id": "probe-1", "tenant": "pleasant-prairie-sewer"},
        bus="EventBus",
    )
    real.drain()
    seen = _everything(real, seen_url)
    day_one = [e for e in seen if day_of(json.dumps(e)) == "2025-02-02"]
    assert day_one and any(e["detail-type"] == "ConsumptionsDetermined" for e in day_one)
    assert any(day_of(json.dumps(e)) == "2025-02-03" for e in seen)

    # a fresh consumer queue receives exactly day one's events, in the bus's order
    fresh_url, _ = _queue(real, "fresh-consumer")
    result = real.replay(date(2025, 2, 2), "fresh-consumer")
    assert result["sent"] == len(day_one)
    replayed = _everything(real, fresh_url)
    assert [e["id"] for e in replayed] == [e["id"] for e in day_one]
    assert [e["detail"] for e in replayed] == [e["detail"] for e in day_one]
    # the archive is on disk under the state directory, a JSON-lines file a day
    assert archive.directory is not None and archive.directory.parent.name == "archive"
    assert archive.days() == ["2025-02-02", "2025-02-03"]
    assert real.replay(date(2025, 2, 4), fresh_url)["sent"] == 0


def test_every_event_is_in_the_audit_store_naming_the_function_that_did_it(real: LocalRuntime) -> None:
    items = real.client("dynamodb").scan(TableName=real.resource("BillingTable"))["Items"]
    audits = [i for i in items if i["pk"]["S"].startswith("AUDIT#")]
    consumption = [a for a in audits if a["detail_type"]["S"] == "ConsumptionsDetermined"]
    assert consumption, [a["detail_type"]["S"] for a in audits]
    reader = real.stack.functions["MeteringOnReadFileUploadedFunction"].name
    assert all(a["actor"]["S"] == reader for a in consumption)
    # the chunk, and its member about PP-0001 in that account's trail
    members = [a for a in consumption if "member_of" in a]
    assert [a["audit_account"]["S"] for a in members] == ["pleasant-prairie-sewer#PP-0001"]


def test_the_cli_replays_a_day_through_the_running_stacks_gateway(real: LocalRuntime) -> None:
    from typer.testing import CliRunner

    from sewerbill.cli import local

    url, _ = _queue(real, "fresh-cli-consumer")
    gateway = ["--gateway", str(real.gateway_url)]
    result = CliRunner().invoke(
        local.local_app, ["replay", "--day", "2025-02-03", "--to-queue", "fresh-cli-consumer", *gateway]
    )
    assert result.exit_code == 0, result.output
    [archive] = real.stack.archives
    archived = [json.loads(line) for line in archive.events_of(date(2025, 2, 3))]
    assert f"replayed {len(archived)} event(s) of 2025-02-03" in result.output
    replayed = [e["detail"].get("event_id") for e in _everything(real, url)]
    assert replayed == [e["detail"].get("event_id") for e in archived] and "probe-1" in replayed
    refused = CliRunner().invoke(
        local.local_app, ["replay", "--day", "2025-02-03", "--to-queue", "no-such-queue", *gateway]
    )
    assert refused.exit_code == 1 and "no queue" in refused.output
