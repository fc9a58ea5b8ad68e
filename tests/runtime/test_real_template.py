"""The real template.yaml on the local runtime: a read file flows through to billing."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
METERS = (
    "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading\n"
    "pleasant-prairie-sewer,PP-M1,PP-0001,water,gal,6,2025-01-01,1000\n"
)
READS = "tenant,meter_id,read_on,reading\npleasant-prairie-sewer,PP-M1,2025-02-01,13000\n"


@pytest.fixture(scope="module")
def real() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2025, 2, 2, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
    ) as rt:
        yield rt


def test_the_real_stack_comes_up_from_the_template(real: LocalRuntime) -> None:
    assert real.resource("UploadsBucket").startswith("sewerbill-local-uploads-")
    assert "MeteringOnReadFileUploadedFunction" in real.stack.functions
    # Each function's worker imports only what its artifact holds (test_artifact_imports.py).
    imports = real.stack.functions["BillingApiFunction"].imports
    assert imports is not None and "notices" in imports["guarded"] and "notices" not in imports["allowed"]
    assert any(r.route_key == "GET /tariffs/{tenant}" for r in real.stack.routes)
    assert real.startup_seconds < 30
    # The notice sender is a verified SES identity, created from the template.
    assert "billing@sewerbill.local" in real.client("ses").list_identities()["Identities"]


def test_a_read_file_reaches_metering_and_its_event_reaches_billing(real: LocalRuntime) -> None:
    real.upload("UploadsBucket", "meters/2025-01.csv", METERS)
    before = len(real.invocations)
    real.upload("UploadsBucket", "reads/2025-01.csv", READS)

    flow = [(i.function, i.trigger, i.records, i.failures, i.error) for i in real.invocations[before:]]
    # the audit store keeps the event too (X-AUDIT), beside the flow
    audited = [f for f in flow if f[0] == "BillingOnAuditEventFunction"]
    assert audited == [("BillingOnAuditEventFunction", "sqs", 1, 0, None)]
    flow = [f for f in flow if f not in audited]
    assert flow == [
        ("MeteringOnReadFileUploadedFunction", "sqs", 1, 0, None),
        # the metering table's stream -> outbox publisher -> custom bus -> billing's queue
        ("MeteringPublishOutboxFunction", "dynamodb", 1, 0, None),
        ("BillingOnConsumptionDeterminedFunction", "sqs", 1, 0, None),
    ]
    assert real.dead_letters == []
    kept = real.client("dynamodb").scan(TableName=real.resource("BillingTable"))["Items"]
    assert any("PP-0001" in json.dumps(item) for item in kept)


def test_health_route_and_openapi_on_the_gateway(real: LocalRuntime) -> None:
    with urllib.request.urlopen(real.gateway_url + "/health", timeout=10) as resp:  # noqa: S310
        assert resp.status == 200
    with urllib.request.urlopen(real.gateway_url + "/openapi.json", timeout=120) as resp:  # noqa: S310
        served = json.loads(resp.read())
    assert "/tariffs/{tenant}" in served["paths"]
    # The gateway serves the document the repository keeps (CONTRACTS.md "HTTP API").
    assert served == json.loads((REPO / "docs" / "openapi.json").read_text())
    req = urllib.request.Request(real.gateway_url + "/tariffs/pleasant-prairie-sewer")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)  # noqa: S310
    assert err.value.code == 401


def test_a_billing_cycle_schedule_fires_on_the_simulated_clock(real: LocalRuntime) -> None:
    # Grafton's quarterly cycle: cron(0 6 1 1,4,7,10 ? *) in America/Chicago, so the
    # 2025-04-01 run is at 11:00 UTC (CDT). It bills the quarter that just ended.
    real.clock.advance(to=datetime(2025, 4, 1, 12, 0, tzinfo=UTC))
    items = real.client("dynamodb").scan(TableName=real.resource("BillingTable"))["Items"]
    cycles = [i for i in items if i.get("tenant", {}).get("S") == "grafton-sewer" and "period_start" in i]
    assert [(c["period_start"]["S"], c["period_end"]["S"]) for c in cycles] == [("2025-01-01", "2025-04-01")]
    # Recorded on the simulated calendar, not the machine's (time is an input).
    assert cycles[0]["recorded_at"]["S"].startswith("2025-04-01T11:00")
    assert real.dead_letters == []
