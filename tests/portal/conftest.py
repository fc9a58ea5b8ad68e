"""The real template on the local runtime with the demo's accounts billed once (February
2025 cycle), shared by the portal tests: access control, schemathesis and the browser."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sewerbill.cli import billing_demo
from sewerbill.local import LocalRuntime
from sewerbill.local.portal_site import mint

REPO = Path(__file__).resolve().parents[2]
# January's consumption of the two demo sewer accounts, as metering publishes it (v2).
CONSUMPTION = json.loads((REPO / "tests" / "fixtures" / "events" / "ConsumptionDetermined.json").read_text())[
    "detail"
]
JANUARY = {"PP-0001": "12000", "PP-0002": "4500"}


def january_consumption(account: str, gallons: str) -> dict[str, Any]:
    detail = dict(CONSUMPTION)
    detail.update(
        {
            "event_id": f"portal-demo-{account}",
            "tenant": "pleasant-prairie-sewer",
            "account_id": account,
            "period_start": "2025-01-01",
            "period_end": "2025-02-01",
            "volume_gal": gallons,
            "quality": "actual",
            "meters": [
                {"meter_id": f"M-{account}", "kind": "water", "volume_gal": gallons, "quality": "actual"}
            ],
            "reads_used": [],
        }
    )
    return detail


@pytest.fixture(scope="session")
def portal_rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2025, 1, 31, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
    ) as rt:
        billing_demo.load_accounts(rt, "UploadsBucket", lambda _text: None)
        for account, gallons in JANUARY.items():
            rt.put_event(
                "sewerbill.metering",
                "ConsumptionDetermined",
                january_consumption(account, gallons),
                bus="EventBus",
            )
        rt.drain()
        rt.clock.advance(to=datetime(2025, 2, 1, 14, tzinfo=UTC))
        yield rt


@pytest.fixture(scope="session")
def tokens(portal_rt: LocalRuntime) -> dict[str, str]:
    return {who: mint(portal_rt, who) for who in ("ada", "ben", "olive", "sam", "wes")}


def call(
    rt: LocalRuntime,
    method: str,
    path: str,
    token: str | None = None,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(rt.gateway_url + path, data=data, method=method)
    if token is not None:
        request.add_header("authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("content-type", "application/json")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=60) as resp:  # noqa: S310 - loopback gateway
            return resp.status, dict(resp.headers.items()), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers.items()), err.read()
