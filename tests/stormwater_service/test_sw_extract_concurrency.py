"""An Engineer's override made while an extract is being taken in is never overwritten by it
(issue 11, PP-CWU-DATA): the extract writes a known parcel only if it is still the version
it read, and otherwise decides that parcel again on top of what the override wrote.

In-process moto (the table as template.yaml defines it); the override lands between the
extract's read of the parcels and its write, as it would in production."""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import IO, Any

import boto3
import pytest
from moto import mock_aws

from common.clock import FixedClock
from common.reports import Report
from common.tariff_files import default_tariffs_dir, load_tariff_book
from stormwater.adapters.dynamodb import DynamoParcelRepository, DynamoRecords
from stormwater.app.service import StormwaterService
from stormwater.domain.extracts import IngestResult, UploadedExtract, ingest_extract
from stormwater.domain.parcels import ParcelState
from stormwater.tariffs import StormwaterTariffs

TENANT = "pleasant-prairie-stormwater"
TABLE = "sewerbill-test-stormwater"
HEADER = "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft\n"
CLOCK = FixedClock(datetime(2026, 10, 1, 15, 0, tzinfo=UTC))


class Files:
    def __init__(self) -> None:
        self.bodies: dict[str, bytes] = {}

    def open(self, bucket: str, key: str) -> IO[bytes]:
        return io.BytesIO(self.bodies[key])


class NoReports:
    def write(self, parts: Sequence[str], rows: Iterable[Mapping[str, object]]) -> Report:
        raise AssertionError("these extracts have no bad rows")


class OverrideWhileReading(DynamoParcelRepository):
    """The repository the extract uses; ``during_read`` runs right after its first read."""

    during_read: Any = None

    def states(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], ParcelState]:
        found = super().states(keys)
        hook, self.during_read = self.during_read, None
        if hook is not None:
            hook()
        return found


@pytest.fixture
def world(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[Any, OverrideWhileReading, StormwaterService, Files]]:
    for var in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("dynamodb")
        client.create_table(
            TableName=TABLE,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
        )
        tariffs = StormwaterTariffs(load_tariff_book(default_tariffs_dir()))
        repo = OverrideWhileReading(client, TABLE, CLOCK)
        service = StormwaterService(repo, DynamoRecords(client, TABLE, CLOCK), tariffs, CLOCK)
        yield client, repo, service, Files()


def _ingest(
    world: tuple[Any, OverrideWhileReading, StormwaterService, Files], key: str, text: str
) -> IngestResult:
    _client, repo, service, files = world
    files.bodies[key] = text.encode()
    tariffs = StormwaterTariffs(load_tariff_book(default_tariffs_dir()))
    return ingest_extract(
        UploadedExtract("uploads", key, "etag"),
        store=files,
        repo=repo,
        reports=NoReports(),
        tariff_for=tariffs,
        tenants=tariffs.tenants,
        clock=CLOCK,
    )


def _determinations(client: Any, parcel_id: str) -> list[tuple[int, str, str]]:
    items = client.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :sk)",
        ExpressionAttributeValues={":pk": {"S": f"PARCEL#{TENANT}#{parcel_id}"}, ":sk": {"S": "ERU#"}},
        ConsistentRead=True,
    )["Items"]
    return [(int(i["sequence"]["N"]), i["eru"]["S"], i["cause"]["S"]) for i in items]


def test_an_override_made_while_an_extract_is_taken_in_is_not_overwritten(
    world: tuple[Any, OverrideWhileReading, StormwaterService, Files],
) -> None:
    client, repo, service, _files = world
    # 43,560 sq ft nonresidential with 30,000 impervious: 6.54 ERU (sequence 1).
    _ingest(
        world, "gis/2026-09.csv", HEADER + f"{TENANT},CC-1,Lakeview Commerce LLC,nonresidential,43560,30000\n"
    )
    assert _determinations(client, "CC-1") == [(1, "6.54", "gis_extract")]

    # The next extract remeasures the parcel at 31,000 sq ft; while it is being taken in
    # (after it read the parcel, before it writes), the Engineer enters 15,000 sq ft from a
    # survey: 15,000 sq ft -> 3.83 ERU (sequence 2, manual_override).
    def engineer() -> None:
        done = service.override(TENANT, "CC-1", {"impervious_sqft": "15000"}, "survey 2026-09-28", "eng@pp")
        assert (done["eru"], done["sequence"]) == ("3.83", 2)

    repo.during_read = engineer
    result = _ingest(
        world, "gis/2026-10.csv", HEADER + f"{TENANT},CC-1,Lakeview Commerce LLC,nonresidential,43560,31000\n"
    )

    # The extract was decided again on top of the override: its GIS values are kept (with
    # the ones they replace as history) and the override stays in force, so the ERU is
    # still the Engineer's 3.83 and nothing more is published.
    state = service.parcel(TENANT, "CC-1")
    assert state.override == {"impervious_sqft": Decimal(15000)} and state.data.data_source == "override"
    assert state.gis.impervious_sqft == Decimal(31000)
    assert state.current is not None and (state.current.eru, state.current.sequence) == (Decimal("3.83"), 2)
    assert _determinations(client, "CC-1") == [(1, "6.54", "gis_extract"), (2, "3.83", "manual_override")]
    assert (result.accepted, result.changed, result.determined) == (0, 1, 0)  # a new version of a kept parcel
    history = service.eru_view(TENANT, "CC-1")["gis_history"]
    assert [h["values"]["impervious_sqft"] for h in history] == ["30000", "31000"]


def test_without_a_concurrent_change_a_known_parcel_is_written_once(
    world: tuple[Any, OverrideWhileReading, StormwaterService, Files],
) -> None:
    client, _repo, service, _files = world
    _ingest(world, "gis/a.csv", HEADER + f"{TENANT},CC-2,Owner,nonresidential,43560,30000\n")
    result = _ingest(world, "gis/b.csv", HEADER + f"{TENANT},CC-2,Owner,nonresidential,43560,15000\n")
    assert (result.changed, result.determined) == (1, 1)
    assert _determinations(client, "CC-2") == [(1, "6.54", "gis_extract"), (2, "3.83", "gis_extract")]
    assert service.parcel(TENANT, "CC-2").version == 2
