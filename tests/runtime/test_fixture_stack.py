"""The local runtime's mechanics, proved on a fixture template with tiny handlers."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest

from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration


def observations(rt: LocalRuntime, prefix: str) -> dict[str, dict]:
    items = rt.client("dynamodb").scan(TableName=rt.resource("ObservationsTable"))["Items"]
    return {i["pk"]["S"]: json.loads(i["data"]["S"]) for i in items if i["pk"]["S"].startswith(prefix)}


def http(rt: LocalRuntime, method: str, path: str, token: str | None = None, body: dict | None = None):
    headers = {"content-type": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(rt.gateway_url + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 - loopback gateway
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def test_stack_comes_up_with_template_names_and_start_up_time(rt: LocalRuntime) -> None:
    assert rt.endpoint_url.startswith("http://127.0.0.1:")
    assert rt.resource("Bus") == "fixture-bus"
    assert rt.resource("FlakyDLQ").endswith("/fixture-flaky-dlq")
    assert rt.resource("ObservationsTable") == "fixture-ObservationsTable"
    assert 0 < rt.startup_seconds < 30
    env = rt.function_env("IngestFunction")
    assert env["UPLOADS_BUCKET"] == rt.resource("UploadsBucket")
    assert env["STAGE"] == "test"  # Fn::If on a Condition, from a Parameter default
    assert env["AWS_ENDPOINT_URL"] == rt.endpoint_url
    assert "noreply@fixture.local" in rt.client("ses").list_identities()["Identities"]


def test_upload_reaches_its_handler_and_its_event_reaches_the_consumer(rt: LocalRuntime) -> None:
    rt.upload("UploadsBucket", "reads/2025-01.csv", b"meter,gal\nm1,100\nm2,200\n")
    rt.upload("UploadsBucket", "other/ignored.csv", b"x\n")

    assert observations(rt, "ingest#") == {
        "ingest#reads/2025-01.csv": {"lines": 3, "function": "fixture-IngestFunction"}
    }
    assert observations(rt, "consumer#") == {"consumer#reads/2025-01.csv": {"lines": 3}}
    ingest = rt.invocations_of("IngestFunction")[-1]
    assert (ingest.trigger, ingest.records, ingest.failures) == ("sqs", 1, 0)


def test_a_failed_record_alone_is_redelivered_and_a_poison_one_reaches_the_dlq(rt: LocalRuntime) -> None:
    for mode in ("ok", "fail-once", "poison"):
        rt.send("FlakyQueue", {"id": mode, "mode": mode})
    before = len(rt.invocations_of("FlakyFunction"))
    rt.drain()

    seen = observations(rt, "flaky#")
    assert set(seen) == {
        "flaky#ok#1",
        "flaky#fail-once#1",
        "flaky#fail-once#2",
        "flaky#poison#1",
        "flaky#poison#2",
    }
    assert seen["flaky#fail-once#2"]["receive_count"] == "2"  # a real ApproximateReceiveCount
    batches = [(i.records, i.failures) for i in rt.invocations_of("FlakyFunction")[before:]]
    assert batches == [(3, 2), (2, 1)]  # only the failed records came back
    dead = [d for d in rt.dead_letters if d.queue == "FlakyDLQ"]
    assert [json.loads(d.body)["id"] for d in dead] == ["poison"]  # after maxReceiveCount (2) receives


def test_a_schedule_fires_when_the_clock_passes_it_and_not_before(rt: LocalRuntime) -> None:
    # 06:00 America/Chicago on weekdays = 12:00 UTC in January.
    assert rt.clock.now == datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
    assert rt.clock.advance(by=timedelta(hours=2, minutes=59)) == []
    assert observations(rt, "tick#") == {}

    fired = rt.clock.advance(to=datetime(2025, 1, 11, 0, 0, tzinfo=UTC))
    assert [f.scheduled_time.day for f in fired] == [6, 7, 8, 9, 10]
    ticks = observations(rt, "tick#")
    assert sorted(ticks) == [f"tick#2025-01-{d:02d}T12:00:00Z" for d in (6, 7, 8, 9, 10)]
    assert all(t["job"] == "daily" and t["execution_id"] for t in ticks.values())

    assert rt.clock.advance(by=timedelta(days=2)) == []  # the weekend
    assert rt.clock.now == datetime(2025, 1, 13, 0, 0, tzinfo=UTC)


def test_a_dynamodb_stream_record_reaches_its_function_and_a_failed_one_is_retried(rt: LocalRuntime) -> None:
    ddb = rt.client("dynamodb")
    table = rt.resource("OutboxTable")
    ddb.put_item(TableName=table, Item={"pk": {"S": "evt-1"}})
    ddb.put_item(TableName=table, Item={"pk": {"S": "bad-1"}})
    ddb.put_item(TableName=table, Item={"pk": {"S": "evt-2"}})
    rt.drain()

    seen = observations(rt, "outbox#")
    assert seen["outbox#evt-1"]["event_name"] == "INSERT"
    assert seen["outbox#evt-1"]["source"] == rt.attribute("OutboxTable", "StreamArn")
    assert "outbox#evt-2" in seen
    # The batch of 3 fails at bad-1; Lambda checkpoints evt-1 and retries from bad-1 (with
    # what follows it) until the retries (3) run out, then sends a record of that batch to
    # the mapping's OnFailure queue, which is reported like a DLQ.
    outbox = rt.invocations_of("OutboxFunction")
    # bad-1's first attempt (in the batch of 3), then its 3 retries (MaximumRetryAttempts).
    assert [(i.records, i.failures) for i in outbox] == [(3, 2), (2, 2), (2, 2), (2, 2)]
    dead = [d for d in rt.dead_letters if d.queue == "OutboxFailuresDLQ"]
    assert len(dead) == 1
    failure = json.loads(dead[0].body)
    assert failure["requestContext"]["condition"] == "RetryAttemptsExhausted"
    batch = failure["DDBStreamBatchInfo"]
    assert batch["batchSize"] == 2  # bad-1 and evt-2
    assert batch["streamArn"] == rt.attribute("OutboxTable", "StreamArn")
    assert int(batch["startSequenceNumber"]) < int(batch["endSequenceNumber"])


def test_http_route_with_a_valid_token_reaches_its_handler(rt: LocalRuntime) -> None:
    token = rt.mint_token(sub="clerk-7", scopes=["bills:read"])
    status, body = http(rt, "GET", "/things/pleasant-prairie?year=2025", token)
    assert status == 200
    assert body == {
        "tenant": "pleasant-prairie",
        "sub": "clerk-7",
        "scopes": ["bills:read"],
        "stage": "test",
        "q": {"year": "2025"},
    }
    status, body = http(rt, "POST", "/things/x", token, {"name": "pump", "size": 3})
    assert (status, body) == (200, {"tenant": "x", "name": "pump", "size": 3})


@pytest.mark.parametrize("case", ["missing", "malformed", "bad-signature", "wrong-audience", "expired"])
def test_http_route_without_a_good_token_gets_401_and_no_invocation(rt: LocalRuntime, case: str) -> None:
    from sewerbill.local.auth import LocalIssuer

    token = {
        "missing": None,
        "malformed": "not-a-jwt",
        "bad-signature": LocalIssuer().mint(issuer="https://auth.fixture.local/", audience="fixture-portal"),
        "wrong-audience": rt.mint_token(audience="someone-else"),
        "expired": rt.mint_token(ttl=-60),
    }[case]
    before = len(rt.invocations_of("ApiFunction"))
    assert http(rt, "GET", "/things/acme", token) == (401, {"message": "Unauthorized"})
    assert len(rt.invocations_of("ApiFunction")) == before


def test_routes_without_auth_and_openapi_need_no_token(rt: LocalRuntime) -> None:
    assert http(rt, "GET", "/health") == (200, {"ok": True})
    status, doc = http(rt, "GET", "/openapi.json")
    assert status == 200
    assert {"/health", "/things/{tenant}"} <= set(doc["paths"])
    assert set(doc["paths"]["/things/{tenant}"]) == {"get", "post"}
    assert "Thing" in doc["components"]["schemas"]
    assert http(rt, "GET", "/nowhere")[0] == 404


def test_control_endpoints_drive_a_running_stack(rt: LocalRuntime) -> None:
    req = urllib.request.Request(
        rt.gateway_url + "/_local/upload?bucket=UploadsBucket&key=reads/ctl.csv", data=b"a\n", method="POST"
    )
    with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310
        result = json.loads(resp.read())
    assert [i["function"] for i in result["invocations"]] == ["IngestFunction", "ConsumerFunction"]
    status, body = http(rt, "GET", "/_local/status")
    assert status == 200 and body["stack"] == "fixture"


def test_log_records_carry_the_simulated_time(rt: LocalRuntime, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("INFO", logger="sewerbill.local"):
        fired = rt.clock.advance(by=timedelta(days=1))
    at = fired[-1].scheduled_time
    stamped = [r for r in caplog.records if r.getMessage().startswith("schedule DailyTick fired for")]
    assert datetime.fromtimestamp(stamped[-1].created, UTC) == at
