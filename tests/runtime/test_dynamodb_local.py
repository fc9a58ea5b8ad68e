"""The same stack with DynamoDB (and its streams) on AWS's own DynamoDB Local.

DESIGN: point AWS_ENDPOINT_URL_DYNAMODB at another endpoint and the same code runs there.
DynamoDB Local: tests/dynamodb_local.py. This module starts it itself; `make test` also runs
the end-to-end flow modules with SEWERBILL_TEST_DYNAMODB=local (tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dynamodb_local import running
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dynamodb_local() -> Iterator[str]:
    with running() as endpoint:
        yield endpoint


def test_read_file_flows_to_billing_with_dynamodb_on_dynamodb_local(
    dynamodb_local: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamodb_local)
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB_STREAMS", dynamodb_local)
    meters = "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading\npleasant-prairie-sewer,PP-M7,PP-7,water,gal,6,2025-01-01,0\n"
    reads = "tenant,meter_id,read_on,reading\npleasant-prairie-sewer,PP-M7,2025-02-01,9000\n"
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2025, 2, 2, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
    ) as rt:
        assert rt.client("dynamodb").meta.endpoint_url == dynamodb_local
        rt.upload("UploadsBucket", "meters/2025-01.csv", meters)
        before = len(rt.invocations)
        rt.upload("UploadsBucket", "reads/2025-01.csv", reads)
        flow = [(i.function, i.records, i.failures, i.error) for i in rt.invocations[before:]]
        # the audit store keeps the event too (X-AUDIT), beside the flow
        audited = [f for f in flow if f[0] == "BillingOnAuditEventFunction"]
        assert audited == [("BillingOnAuditEventFunction", 1, 0, None)]
        flow = [f for f in flow if f not in audited]
        assert flow == [
            ("MeteringOnReadFileUploadedFunction", 1, 0, None),
            ("MeteringPublishOutboxFunction", 1, 0, None),  # DynamoDB Local's stream
            ("BillingOnConsumptionDeterminedFunction", 1, 0, None),
        ]
        assert rt.dead_letters == []
        billing = rt.client("dynamodb").scan(TableName=rt.resource("BillingTable"))["Items"]
        assert any(item.get("account_id", {}).get("S") == "PP-7" for item in billing)
        # Re-uploading the same file changes nothing (idempotent by business key).
        rt.upload("UploadsBucket", "reads/2025-01-again.csv", reads)
        again = rt.client("dynamodb").scan(TableName=rt.resource("BillingTable"))["Items"]
        assert len(again) == len(billing)
