"""`sewerbill local up --demo` from a day that is not a month's first (issue 32: it crashed,
"the clock only moves forward", when the demo's dates were fixed in 2025 and the clock
started today): the year runs from the clock's day, the output folder is written, and the
stack stays up with the demo's bills for the portal's identities."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from sewerbill.demo.generator import MIN_SIZE
from sewerbill.local.portal_site import DEMO_IDENTITIES

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
START = "2026-12-17T15:00:00Z"  # mid-month, mid-day: before it, nothing of the demo is dated


@pytest.fixture(scope="module")
def up_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    base = tmp_path_factory.mktemp("up-demo")
    out = base / "demo-out"
    env = {**os.environ, "SEWERBILL_LOCAL_STATE": str(base / "local.json"), "PYTHONUNBUFFERED": "1"}
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
    proc = subprocess.Popen(  # noqa: S603 - our own interpreter and package
        [sys.executable, "-m", "sewerbill", "local", "up", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "polling queues and streams" in line:
                break
        text = "".join(lines)
        gateway = re.search(r"gateway\s+(http://127\.0\.0\.1:\d+)", text)
        assert gateway and "polling queues and streams" in text, text[-5000:]
        yield gateway.group(1), out, text
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise


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
