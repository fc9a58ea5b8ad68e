"""The local stack keeps its state when asked (`--state DIR`), and redrives dead letters
(issue 26), on the real template.

The restart test bills a quarter, stops cleanly with a message still queued, starts again
from the same directory and requires the same items, objects, messages, dead letters and
clock; no stream record of the restore is handed out (no outbox publishes twice); the next
quarter is billed once and the first is not billed again. The redrive test dead-letters a
consumption with a fault of one function's configuration, redrives it while the fault lasts
(it dead-letters again), fixes the fault, redrives it again through `sewerbill local dlq
redrive`, and finds it processed and the dead-letter queue empty.
"""

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
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from metering.events import ConsumptionDetermined
from sewerbill.cli import local as local_cli
from sewerbill.local import LocalRuntime
from sewerbill.local import state as local_state

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
TENANT = "grafton-sewer"  # quarterly cycles, on the first Saturday-or-not of the quarter
CONSUMER = "BillingOnConsumptionDeterminedFunction"
ACCOUNTS = (
    "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,parcel_id,owner_name\n"
    "grafton-sewer,GR-1,Ann,1 Main St,1 Main St,53024,2027-07-01,residential,5/8,GP-1,Ann\n"
    "grafton-sewer,GR-2,Bob,2 Main St,2 Main St,53024,2027-07-01,residential,5/8,GP-2,Bob\n"
)


def start(name: str, state: Path | None = None) -> LocalRuntime:
    return LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2027, 12, 31, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": name},
        stack_name=name,
        state_dir=state,
    )


def consumption(account: str, start_on: date, end_on: date, gallons: int) -> ConsumptionDetermined:
    return ConsumptionDetermined(
        occurred_at=datetime(2027, 12, 31, 12, tzinfo=UTC),
        tenant=TENANT,
        account_id=account,
        period_start=start_on,
        period_end=end_on,
        volume_gal=gallons,
        source_file=f"reads/{account}-{start_on}.csv",
    )


def publish(rt: LocalRuntime, event: ConsumptionDetermined, drain: bool = True) -> None:
    rt.put_event(event.SOURCE, event.detail_type(), json.loads(event.detail_json()), bus="EventBus")
    if drain:
        rt.drain()


def staff_get(rt: LocalRuntime, path: str) -> Any:
    token = rt.mint_token(sub="clerk", claims={"role": "staff", "tenants": [TENANT]})
    req = urllib.request.Request(rt.gateway_url + path, headers={"authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - the local gateway
        return json.loads(resp.read())


def bills(rt: LocalRuntime, account: str) -> list[tuple[str, str]]:
    found = staff_get(rt, f"/staff/{TENANT}/accounts/{account}/bills")["bills"]
    return [(b["period"]["start"], b["total"]) for b in found]


def everything(rt: LocalRuntime) -> dict[str, Any]:
    """Every table's items, every bucket's objects (body, content type, metadata) and every
    queue's messages (bodies and attributes), by logical id."""
    ddb, s3 = rt.client("dynamodb"), rt.client("s3")
    out: dict[str, Any] = {}
    for lid, rtype in sorted(rt.stack.types.items()):
        if rtype == "AWS::DynamoDB::Table":
            pages = ddb.get_paginator("scan").paginate(TableName=rt.resource(lid))
            out[lid] = sorted(json.dumps(i, sort_keys=True, default=str) for p in pages for i in p["Items"])
        elif rtype == "AWS::S3::Bucket":
            objects = {}
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=rt.resource(lid)):
                for o in page.get("Contents", []):
                    got = s3.get_object(Bucket=rt.resource(lid), Key=o["Key"])
                    objects[o["Key"]] = (got["Body"].read(), got.get("ContentType"), got.get("Metadata"))
            out[lid] = objects
        elif rtype == "AWS::SQS::Queue":
            out[lid] = sorted(json.dumps([m["body"], m["attributes"]]) for m in local_state._queued(rt, lid))
    return out


def test_a_clean_restart_with_state_keeps_everything_and_bills_on_without_doubling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    rt = start("local-state", state)
    try:
        assert rt.restored is None  # nothing saved there yet
        rt.upload("UploadsBucket", "accounts/2027.csv", ACCOUNTS)
        publish(rt, consumption("GR-1", date(2027, 10, 1), date(2028, 1, 1), 23000))
        publish(rt, consumption("GR-2", date(2027, 10, 1), date(2028, 1, 1), 0))
        rt.clock.advance(to=datetime(2028, 1, 1, 13, tzinfo=UTC))  # Grafton's Q4 2027 cycle
        q4 = bills(rt, "GR-1")
        assert q4 == [("2027-10-01", "194.50")]
        publish(rt, consumption("GR-1", date(2028, 1, 1), date(2028, 4, 1), 20000))
        # A dead letter (put straight into a DLQ, with a message attribute), listed by the watch.
        rt.client("sqs").send_message(
            QueueUrl=rt.resource("BillingIssueBillsDLQ"),
            MessageBody='{"tenant": "grafton-sewer"}',
            MessageAttributes={"cause": {"DataType": "String", "StringValue": "test"}},
        )
        rt.drain()
        # GR-2's Q1 consumption arrives and is still queued at the stop (nothing polls it).
        publish(rt, consumption("GR-2", date(2028, 1, 1), date(2028, 4, 1), 9000), drain=False)
    except BaseException:
        rt.stop(save=False)
        raise
    before = everything(rt)
    letters = [(d.queue, d.body) for d in rt.dead_letters]
    clock, fired = rt.clock.now, [(f.schedule, f.scheduled_time) for f in rt.clock.fired]
    assert before["BillingOnConsumptionDeterminedQueue"]  # a message queued at the stop
    assert letters == [("BillingIssueBillsDLQ", '{"tenant": "grafton-sewer"}')]
    rt.stop()  # a clean stop: saved
    saved = rt.saved
    assert saved is not None and saved["items"] == sum(
        len(v) for k, v in before.items() if rt.stack.types[k] == "AWS::DynamoDB::Table"
    )
    print(f"\nsaved {saved} ")

    again = start("local-state", state)
    try:
        restored = again.restored
        assert restored is not None
        print(f"restored {restored}")
        assert again.invocations == []  # restored before the first invocation
        assert everything(again) == before
        assert [(d.queue, d.body) for d in again.dead_letters] == letters
        assert again.clock.now == clock
        assert [(f.schedule, f.scheduled_time) for f in again.clock.fired] == fired
        # The restore's writes are in the streams, but no poller hands them out as changes.
        assert [p.poll_once() for p in again._stream_pollers] == [0] * len(again._stream_pollers)
        assert bills(again, "GR-1") == q4  # readable through the staff route

        again.drain()  # the message queued at the stop is handled now
        assert again.dead_letters and len(again.dead_letters) == 1  # listed once, not again
        # A new upload is taken in (the buckets' notifications are back after the restore).
        lockbox = "tenant,account_id,reference,paid_on,amount\ngrafton-sewer,GR-1,LBX-1,2028-01-03,94.50\n"
        again.clock.advance(to=datetime(2028, 1, 3, 18, tzinfo=UTC))
        again.upload("UploadsBucket", "payments/2028-01-03.csv", lockbox)
        ledger = staff_get(again, f"/staff/{TENANT}/accounts/GR-1/ledger")["entries"]
        assert [e["amount"] for e in ledger if e["kind"] == "payment"] == ["-94.50"]

        # A save that fails half-way leaves the last saved state in use.
        def crash(*args: Any) -> int:
            raise OSError("disk full")

        with monkeypatch.context() as patched:
            patched.setattr(local_state, "_save_queue", crash)
            with pytest.raises(OSError, match="disk full"):
                again.save_state()
        kept = local_state.saved(state)
        assert kept is not None and kept["clock"]["now"] == clock.isoformat()
        assert not [p for p in state.iterdir() if p.name.startswith(".saving-")]

        # The clock goes on from where it was: Q1 2028 is billed once, Q4 2027 not again.
        again.clock.advance(to=datetime(2028, 4, 1, 13, tzinfo=UTC))
        assert [b[0] for b in bills(again, "GR-1")] == ["2027-10-01", "2028-01-01"]
        assert bills(again, "GR-1")[0] == q4[0]  # the issued bill as it was
        assert [b[0] for b in bills(again, "GR-2")] == ["2027-10-01", "2028-01-01"]
        times = [(f.schedule, f.scheduled_time) for f in again.clock.fired]
        assert len(times) == len(set(times))  # no schedule fired twice for one time
        assert times[: len(fired)] == fired and all(t > clock for _, t in times[len(fired) :])
    finally:
        again.stop()
    assert local_state.saved(state)["clock"]["now"] == datetime(2028, 4, 1, 13, tzinfo=UTC).isoformat()


def test_a_state_of_another_format_version_is_refused_before_anything_starts(tmp_path: Path) -> None:
    snapshot = tmp_path / "snapshot-old"
    snapshot.mkdir()
    (snapshot / "manifest.json").write_text(json.dumps({"format": local_state.FORMAT, "version": 99}))
    (tmp_path / "CURRENT").write_text("snapshot-old\n")
    with pytest.raises(local_state.StateError, match="format version 99; this runtime reads version 1"):
        LocalRuntime.start(REPO / "template.yaml", state_dir=tmp_path)


@pytest.fixture(scope="module")
def faulty() -> Iterator[LocalRuntime]:
    rt = start("local-redrive")
    try:
        yield rt
    finally:
        rt.stop()


def usage_of(rt: LocalRuntime, account: str) -> list[str]:
    """The volumes billing keeps for ``account`` (its ``USAGE#`` items)."""
    items = rt.client("dynamodb").scan(TableName=rt.resource("BillingTable"))["Items"]
    return [
        i["volume_gal"]["S"]
        for i in items
        if i["pk"]["S"].startswith("USAGE#") and i.get("account_id", {}).get("S") == account
    ]


def test_a_dead_letter_is_redriven_and_processed_once_its_cause_is_fixed(faulty: LocalRuntime) -> None:
    rt = faulty
    cli = CliRunner()
    dlq = "BillingOnConsumptionDeterminedDLQ"
    # DynamoDB "down" for the consumer (its client points at a port nothing listens on).
    rt.invoker.configure(
        CONSUMER, {"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1"}
    )
    publish(rt, consumption("GR-9", date(2027, 10, 1), date(2028, 1, 1), 1000))
    [dead] = [d for d in rt.dead_letters if d.queue == dlq]
    assert json.loads(dead.body)["detail"]["account_id"] == "GR-9"

    # Redriven while the cause lasts: tried again (maxReceiveCount 5) and dead again.
    done = cli.invoke(local_cli.local_app, ["dlq", "redrive", dlq, "--gateway", rt.gateway_url])
    assert done.exit_code == 0, done.output
    assert f"moved 1 message(s) from {dlq} to BillingOnConsumptionDeterminedQueue" in done.output
    assert f"1 dead letter(s) in {dlq} again" in done.output
    assert usage_of(rt, "GR-9") == []

    rt.invoker.configure(CONSUMER)  # the cause fixed: as the template says again
    before = len(rt.invocations_of(CONSUMER))
    # Named by its source queue this time (either names the pair).
    done = cli.invoke(
        local_cli.local_app,
        ["dlq", "redrive", "BillingOnConsumptionDeterminedQueue", "--gateway", rt.gateway_url],
    )
    assert done.exit_code == 0, done.output
    assert "moved 1 message(s)" in done.output and "no dead letters left there" in done.output
    runs = rt.invocations_of(CONSUMER)[before:]
    assert [(r.records, r.failures, r.error) for r in runs] == [(1, 0, None)]
    assert usage_of(rt, "GR-9") == ["1000"]
    attrs = rt.client("sqs").get_queue_attributes(
        QueueUrl=rt.resource(dlq),
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    assert attrs == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}
    assert not [d for d in rt.dead_letters if d.queue == dlq]
    listed = cli.invoke(local_cli.local_app, ["dlq", "--gateway", rt.gateway_url])
    assert listed.output == "no dead letters\n"


def test_a_redrive_names_what_it_cannot_move(faulty: LocalRuntime) -> None:
    cli = CliRunner()
    for queue, reason in (
        ("NoSuchQueue", "is not a queue of stack local-redrive"),
        ("EventRuleTargetsDLQ", "rule-target and stream-failure destinations have no source queue"),
    ):
        done = cli.invoke(local_cli.local_app, ["dlq", "redrive", queue, "--gateway", faulty.gateway_url])
        assert done.exit_code == 1 and reason in done.output, done.output


def up(state: Path, locator: Path) -> tuple[subprocess.Popen[str], str]:
    """`sewerbill local up --state DIR` in a child process, as a user starts it; its process
    and the lines it printed until it polls."""
    env = {**os.environ, "SEWERBILL_LOCAL_STATE": str(locator), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(  # noqa: S603 - our own interpreter and package
        [
            sys.executable,
            "-m",
            "sewerbill",
            "local",
            "up",
            "--start",
            "2027-12-31T12:00:00Z",
            "--state",
            str(state),
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (lines and "polling queues and streams" in lines[-1]):
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
    return proc, "".join(lines)


def stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGINT)
    try:
        rest, _ = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 0, rest
    return rest


def test_up_with_state_saves_at_ctrl_c_and_restores_at_the_next_up(tmp_path: Path) -> None:
    state, locator = tmp_path / "state", tmp_path / "local.json"
    proc, started = up(state, locator)
    try:
        assert f"state     none yet in {state}; saved there at a clean stop" in started, started
        gateway = json.loads(locator.read_text())["gateway_url"]
        accounts = tmp_path / "accounts.csv"
        accounts.write_text(ACCOUNTS)
        done = CliRunner().invoke(
            local_cli.local_app,
            ["upload", "UploadsBucket", str(accounts), "--key", "accounts/2027.csv", "--gateway", gateway],
        )
        assert done.exit_code == 0, done.output
    finally:
        rest = stop(proc)
    assert f"stopping: saving the state to {state}" in rest
    assert re.search(r"saved \d+ item\(s\), 1 object\(s\), 0 message\(s\), 0 dead letter\(s\)", rest), rest

    proc, started = up(state, locator)
    try:
        assert re.search(
            rf"state     restored from {re.escape(str(state))}: \d+ item\(s\), 1 object\(s\)", started
        )
        assert "--start ignored: the clock continues from the saved 2027-12-31T12:00:00+00:00" in started
        gateway = json.loads(locator.read_text())["gateway_url"]
        req = urllib.request.Request(
            gateway + "/_local/token",
            data=json.dumps({"claims": {"role": "staff", "tenants": [TENANT]}}).encode(),
        )
        with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - the local gateway
            token = json.loads(resp.read())["token"]
        req = urllib.request.Request(
            gateway + f"/staff/{TENANT}/accounts/GR-1", headers={"authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - the local gateway
            assert '"Ann"' in resp.read().decode()  # the account loaded before the restart
    finally:
        stop(proc)
