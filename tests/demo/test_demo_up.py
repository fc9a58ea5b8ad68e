"""`sewerbill local up --demo` from a day that is not a month's first (issue 32: it crashed,
"the clock only moves forward", when the demo's dates were fixed in 2025 and the clock
started today): the year runs from the clock's day, the output folder is written, and the
stack stays up with the demo's bills for the portal's identities."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_child import READY, local_up
from sewerbill.demo.generator import MIN_SIZE
from sewerbill.local.portal_site import DEMO_IDENTITIES

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
START = "2026-12-17T15:00:00Z"  # mid-month, mid-day: before it, nothing of the demo is dated


@pytest.fixture(scope="module")
def up_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    base = tmp_path_factory.mktemp("up-demo")
    out = base / "demo-out"
    args = [
        "--start",
        START,
        "--demo",
        "--demo-size",
        str(MIN_SIZE),
        "--demo-months",
        "3",
        "--demo-out",
        str(out),
    ]
    with local_up(args, state=base / "local.json", ready_within=900, stderr_too=True) as child:
        assert child.gateway and READY in child.text, child.text[-5000:]
        yield child.gateway, out, child.text


def test_up_demo_runs_the_year_from_the_clocks_day_and_stays_up(up_demo: tuple[str, Path, str]) -> None:
    gateway, out, text = up_demo
    assert "running the demo year from 2026-12-17" in text
    assert "the clock only moves forward" not in text
    assert "all figures match" in text, text[-5000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ok"] and summary["dead_letters"] == []
    assert (out / "index.html").is_file() and (out / "services.log").stat().st_size > 0
    assert '"level"' not in text  # the services' logs went to the file
    req = urllib.request.Request(
        gateway + "/_local/portal/token", data=json.dumps({"identity": "ada"}).encode(), method="POST"
    )
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - loopback gateway
        token = json.loads(resp.read())["token"]
    [account, *_] = DEMO_IDENTITIES["ada"]["claims"]["accounts"]
    req = urllib.request.Request(
        gateway + f"/staff/pleasant-prairie-sewer/accounts/{account}/bills",
        headers={"authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(req, timeout=60) as resp:  # noqa: S310 - loopback gateway
        bills = json.loads(resp.read())["bills"]
    expected = json.loads((out / "expected.json").read_text())
    periods = [s for s, _ in expected["tenants"]["pleasant-prairie-sewer"]["periods"]]
    assert [b["period"]["start"] for b in bills] == periods  # Ada's bill of every period
