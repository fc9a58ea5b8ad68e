"""The real template on the local runtime (moto server), shared by stormwater's end-to-end tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sewerbill.local import LocalRuntime

REPO = Path(__file__).resolve().parents[2]
TENANT = "pleasant-prairie-stormwater"
START = datetime(2026, 10, 1, 14, 0, tzinfo=UTC)


class Captured:
    """Every sewerbill.stormwater event that reached the bus, through a rule to a test queue."""

    def __init__(self, rt: LocalRuntime) -> None:
        self._sqs = rt.client("sqs")
        events = rt.client("events")
        self.url = self._sqs.create_queue(QueueName="stormwater-capture")["QueueUrl"]
        arn = self._sqs.get_queue_attributes(QueueUrl=self.url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        bus = rt.resource("EventBus")
        events.put_rule(
            Name="stormwater-capture",
            EventBusName=bus,
            EventPattern=json.dumps({"source": ["sewerbill.stormwater"]}),
        )
        events.put_targets(Rule="stormwater-capture", EventBusName=bus, Targets=[{"Id": "q", "Arn": arn}])

    def take(self, detail_type: str | None = None) -> list[dict[str, Any]]:
        """Events received since the last call (all of them; filtered by detail-type if given)."""
        found: list[dict[str, Any]] = []
        while True:
            resp = self._sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10)
            messages = resp.get("Messages", [])
            if not messages:
                break
            for m in messages:
                found.append(json.loads(m["Body"]))
                self._sqs.delete_message(QueueUrl=self.url, ReceiptHandle=m["ReceiptHandle"])
        return [e for e in found if detail_type is None or e["detail-type"] == detail_type]


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=START,
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
    ) as runtime:
        yield runtime


@pytest.fixture(scope="module")
def captured(rt: LocalRuntime) -> Captured:
    return Captured(rt)


def call(
    rt: LocalRuntime, method: str, path: str, claims: dict[str, Any], body: Any = None
) -> tuple[int, Any]:
    """An HTTP call through the local gateway with a token carrying ``claims``."""
    import urllib.error
    import urllib.request

    token = rt.mint_token(sub=str(claims.get("sub", "tester")), claims=claims)
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        rt.gateway_url + path,
        data=data,
        method=method,
        headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:  # noqa: S310 - loopback gateway
            answer = resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        answer = err.code, json.loads(err.read() or b"null")
    rt.drain()  # the table stream -> outbox publisher -> bus, as the running stack would
    return answer


STAFF = {"sub": "engineer", "role": "staff", "tenants": [TENANT]}


def owner(*parcels: str) -> dict[str, Any]:
    return {"sub": "owner", "role": "owner", "tenants": [TENANT], "parcels": list(parcels)}
