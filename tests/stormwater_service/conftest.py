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
        name = f"{rt.resource('EventBus')}-stormwater-capture"
        self.url = self._sqs.create_queue(QueueName=name)["QueueUrl"]
        arn = self._sqs.get_queue_attributes(QueueUrl=self.url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        bus = rt.resource("EventBus")
        events.put_rule(
            Name=name,
            EventBusName=bus,
            EventPattern=json.dumps({"source": ["sewerbill.stormwater"]}),
        )
        events.put_targets(Rule=name, EventBusName=bus, Targets=[{"Id": "q", "Arn": arn}])

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


def determinations(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ERUDetermined details among ``events``: alone (overrides, reconsiderations, a known
    parcel's new GIS values) or in ``ERUsDetermined`` chunks (an extract's new parcels)."""
    found: list[dict[str, Any]] = []
    for e in events:
        if e["detail-type"] == "ERUDetermined":
            found.append(e["detail"])
        elif e["detail-type"] == "ERUsDetermined":
            found.extend(e["detail"]["determinations"])
    return found


def stage_for(request: pytest.FixtureRequest) -> str:
    """A stage of its own per test module: moto's servers in one process share their state,
    so each module's stack gets its own tables, queues, bus and buckets."""
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_sw_runtime_")
    return "sw-" + name.replace("_", "-")


@pytest.fixture(scope="module")
def rt(request: pytest.FixtureRequest) -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=START,
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": stage_for(request)},
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
