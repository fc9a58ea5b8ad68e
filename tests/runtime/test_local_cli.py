"""`sewerbill local ...` as a user runs it: `up` with the commands that drive a running stack
(`status`, `token`, `upload`, `clock advance`, `dlq`). The demo year (`sewerbill local demo`)
is tested in tests/demo/test_demo_year.py.

Assertions are on stable facts (exit codes, the upload drained, what the control endpoints
report).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from local_child import local_up
from sewerbill.cli import local

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SEWERBILL = [sys.executable, "-m", "sewerbill"]


@pytest.fixture(scope="module")
def running_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`sewerbill local up` in a child process, as a user starts it; yields its gateway URL."""
    state = tmp_path_factory.mktemp("state") / "local.json"
    with local_up(["--start", "2025-02-01T00:00:00Z"], state=state, ready_within=300) as child:
        assert child.gateway, child.text
        assert re.search(r"dev token \(12 h\): \S+\.\S+\.\S+", child.text)
        # `up` leaves where it runs for the other commands to find.
        assert json.loads(state.read_text())["gateway_url"] == child.gateway
        yield child.gateway
    assert child.returncode == 0
    assert "stopping" in child.rest
    assert not state.exists()  # `up` removes its state file when it stops


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(local.local_app, list(args))
    return result.exit_code, result.output


def test_status_shows_the_running_stack(running_stack: str) -> None:
    code, out = cli("status", "--gateway", running_stack)
    status = json.loads(out)
    assert code == 0
    assert status["stack"] == "sewerbill-local"
    assert status["gateway_url"] == running_stack
    assert status["clock"].startswith("2025-02-01T00:00")
    assert "BillingRunDailyAssessmentFunction" in status["functions"]


def test_token_mints_a_jwt_the_gateway_accepts(running_stack: str) -> None:
    code, out = cli("token", "--sub", "clerk-1", "--ttl", "1h", "--gateway", running_stack)
    assert code == 0
    token = out.strip()
    assert token.count(".") == 2
    import urllib.request

    req = urllib.request.Request(
        running_stack + "/tariffs/pleasant-prairie-sewer?on=2025-01-15",
        headers={"authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - loopback gateway
        assert resp.status == 200


def test_upload_reports_the_invocations_it_caused(running_stack: str, tmp_path: Path) -> None:
    # A meter, then its first register read: metering takes both in.
    meters = tmp_path / "meters.csv"
    meters.write_text(
        "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading\n"
        "pleasant-prairie-sewer,M-0101,PP-0101,water,gal,6,2025-01-01,0\n"
    )
    code, out = cli(
        "upload", "UploadsBucket", str(meters), "--key", "meters/cli.csv", "--gateway", running_stack
    )
    assert code == 0, out
    reads = tmp_path / "2025-01.csv"
    reads.write_text("tenant,meter_id,read_on,reading\npleasant-prairie-sewer,M-0101,2025-01-20,700\n")
    code, out = cli(
        "upload", "UploadsBucket", str(reads), "--key", "reads/cli.csv", "--gateway", running_stack
    )
    assert code == 0, out
    assert re.search(r"MeteringOnReadFileUploadedFunction\s+sqs\s+1 record\(s\), 0 message\(s\) failed", out)
    assert "ERROR" not in out and "no line rejected" in out


def test_upload_says_how_many_lines_were_rejected_and_where_the_report_is(
    running_stack: str, tmp_path: Path
) -> None:
    """Issue 26: a file whose lines were all rejected printed "0 failed" and nothing else."""
    reads = tmp_path / "all-bad.csv"
    reads.write_text(
        "tenant,meter_id,read_on,reading\n"
        "pleasant-prairie-sewer,NO-SUCH-1,2025-01-20,700\n"
        "pleasant-prairie-sewer,../../etc/passwd,2025-01-20,700\n"
    )
    code, out = cli(
        "upload", "UploadsBucket", str(reads), "--key", "reads/cli-all-bad.csv", "--gateway", running_stack
    )
    assert code == 0, out
    found = re.search(
        r"2 line\(s\) rejected, report: s3://(\S+)/(reports/metering/reads/cli-all-bad\.csv/\S+)", out
    )
    assert found, out


def test_clock_advance_fires_each_schedule_in_between(running_stack: str) -> None:
    # From 2025-02-01 00:00 UTC by two days: the monthly cycles, cron(0 6 1 * ? *) in
    # Chicago = 12:00 UTC on 1 February, and two daily assessments, cron(0 7 * * ? *) =
    # 13:00 UTC (the quarterly ones wait for April); other services' schedules may be
    # in between, and every firing is listed in time order.
    code, out = cli("clock", "advance", "--by", "2d", "--gateway", running_stack)
    assert code == 0, out
    fired = re.findall(r"fired (\S+) at (\S+)", out)
    billing = [f for f in fired if f[0].startswith(("BillingCycle", "DailyAssessment"))]
    assert billing == [
        ("BillingCycleSchedulePleasantPrairieSewer", "2025-02-01T12:00:00+00:00"),
        ("BillingCycleSchedulePleasantPrairieStormwater", "2025-02-01T12:00:00+00:00"),
        ("DailyAssessmentSchedule", "2025-02-01T13:00:00+00:00"),
        ("DailyAssessmentSchedule", "2025-02-02T13:00:00+00:00"),
    ]
    assert [at for _, at in fired] == sorted(at for _, at in fired)
    assert f"clock now 2025-02-03T00:00:00+00:00; {len(fired)} firing(s)" in out
    code, _ = cli("clock", "advance", "--by", "1x", "--gateway", running_stack)
    assert code == 2  # not a duration


def test_dlq_reports_no_dead_letters_after_a_clean_run(running_stack: str) -> None:
    assert cli("dlq", "--gateway", running_stack) == (0, "no dead letters\n")


def test_commands_without_a_running_stack_say_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "STATE_FILE", tmp_path / "none.json")
    code, out = cli("status")
    assert code == 1
    assert "no running local stack found" in out
