"""metering's staff read route and daily run on moto (in-process)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import boto3
import pytest
from handler_support import TABLES, Stack, dynamodb_calls, http_event, lambda_context, sqs_event

from common import clock
from metering.adapters.dynamodb import ACCOUNT_SHARDS, DynamoMeteringRepository
from metering.handlers import api, on_interval_file_uploaded, on_read_file_uploaded, run_daily

METERS = (
    "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading\n"
    "pleasant-prairie-sewer,PP-M1,PP-1,water,gal,6,2026-01-01,0\n"
)


@pytest.fixture(autouse=True)
def simulated_time() -> Any:
    at = clock.FixedClock(datetime(2026, 3, 2, 15, tzinfo=UTC))
    clock.install(at)
    yield at
    clock.install(None)


def post_read(body: dict[str, Any], *, role: str = "staff", tenants: str = "[pleasant-prairie-sewer]") -> Any:
    path = "/staff/pleasant-prairie-sewer/meters/PP-M1/reads"
    event = http_event("POST", path)
    event["routeKey"] = event["requestContext"]["routeKey"] = "POST /staff/{tenant}/meters/{meter_id}/reads"
    event["body"] = json.dumps(body)
    event["headers"]["content-type"] = "application/json"
    event["requestContext"]["authorizer"] = {
        "jwt": {"claims": {"sub": "clerk", "role": role, "tenants": tenants}}
    }
    response = api.lambda_handler(event, lambda_context())
    return response["statusCode"], json.loads(response["body"])


def register(stack: Stack) -> None:
    body = json.dumps(stack.put_upload("meters/m.csv", METERS.encode()))
    assert on_read_file_uploaded.lambda_handler(sqs_event(body), lambda_context()) == {
        "batchItemFailures": []
    }


def test_a_staff_read_is_taken_in_and_completes_a_period(metering: Stack) -> None:
    register(metering)
    assert post_read({"read_on": "2026-02-01", "reading": "3100"}) == (
        201,
        {"status": "accepted", "consumptions": 1},
    )
    assert post_read({"read_on": "2026-02-01", "reading": "3100"}) == (
        201,
        {"status": "duplicate", "consumptions": 0},
    )
    chunks = [i for i in metering.outbox("metering") if i["detail_type"] == "ConsumptionsDetermined"]
    assert len(chunks) == 1


def test_a_conflicting_staff_read_is_422_with_both_values(metering: Stack) -> None:
    register(metering)
    post_read({"read_on": "2026-02-01", "reading": "3100"})
    status, body = post_read({"read_on": "2026-02-01", "reading": "3200"})
    assert status == 422 and body["error"]["code"] == "read_rejected"
    assert "got 3200" in body["error"]["message"] and "recorded 3100" in body["error"]["message"]


def test_only_staff_of_the_tenant_may_post_reads(metering: Stack) -> None:
    assert post_read({"read_on": "2026-02-01", "reading": "1"}, role="customer")[0] == 403
    assert post_read({"read_on": "2026-02-01", "reading": "1"}, tenants="[grafton-sewer]")[0] == 403


def test_a_bad_reading_is_400_naming_the_field(metering: Stack) -> None:
    status, body = post_read({"read_on": "2026-02-01", "reading": "1e5"})
    assert status == 400 and body["error"]["message"].startswith("reading:")


def test_the_daily_run_estimates_after_the_read_window(
    metering: Stack, simulated_time: clock.FixedClock
) -> None:
    register(metering)
    post_read({"read_on": "2026-02-01", "reading": "3100"})
    simulated_time.set(datetime(2026, 3, 7, 11, tzinfo=UTC))  # read window: 5 days after 2026-03-01
    event = sqs_event(json.dumps({"scheduled_time": "2026-03-07T11:00:00Z"}))
    assert run_daily.lambda_handler(event, lambda_context()) == {"batchItemFailures": []}
    consumptions = {
        c["period_start"]: c
        for i in metering.items("metering")
        if i.get("detail_type") == "ConsumptionsDetermined"
        for c in json.loads(i["detail"])["consumptions"]
    }
    assert consumptions["2026-02-01"]["quality"] == "estimated"
    # January's 3,100 gal over 31 days = 100 gal/day, x 28 days of February
    assert Decimal(consumptions["2026-02-01"]["volume_gal"]) == 2800
    # the chunk is metering's record of the determination: kept, no expiry
    assert all(
        "expires_at" not in i
        for i in metering.state("metering")
        if i.get("detail_type") == "ConsumptionsDetermined"
    )


def test_a_read_after_the_daily_estimate_publishes_a_corrected_determination(
    metering: Stack, simulated_time: clock.FixedClock
) -> None:
    register(metering)
    post_read({"read_on": "2026-02-01", "reading": "3100"})
    simulated_time.set(datetime(2026, 3, 7, 11, tzinfo=UTC))
    event = sqs_event(json.dumps({"scheduled_time": "2026-03-07T11:00:00Z"}))
    assert run_daily.lambda_handler(event, lambda_context()) == {
        "batchItemFailures": []
    }  # February: 2,800 gal

    simulated_time.set(datetime(2026, 4, 2, 15, tzinfo=UTC))
    # 5,100 is below the estimated register (3,100 + 2,800 = 5,900): 2,000 gal since 2026-02-01
    assert post_read({"read_on": "2026-04-01", "reading": "5100"}) == (
        201,
        {"status": "accepted", "consumptions": 2},
    )
    assert post_read({"read_on": "2026-04-01", "reading": "5100"}) == (
        201,
        {"status": "duplicate", "consumptions": 0},
    )
    published = [
        c
        for i in metering.items("metering")
        if i.get("detail_type") == "ConsumptionsDetermined"
        for c in json.loads(i["detail"])["consumptions"]
    ]
    february = [c for c in published if c["period_start"] == "2026-02-01"]
    estimate, corrected = sorted(february, key=lambda c: "estimate_replaced" in c["flags"])
    assert (estimate["quality"], Decimal(estimate["volume_gal"])) == ("estimated", 2800)
    # the same period again: 2,000 x 28/59 = 949.1525... -> 949.153, prorated, flagged
    assert (corrected["period_end"], corrected["quality"], corrected["estimated"]) == (
        "2026-03-01",
        "prorated",
        False,
    )
    assert Decimal(corrected["volume_gal"]) == Decimal("949.153")
    assert corrected["flags"] == ["estimate_replaced"]
    [march] = [c for c in published if c["period_start"] == "2026-03-01"]
    assert Decimal(march["volume_gal"]) == Decimal("1050.847")  # 5,100 - 4,049.153: nothing lost


def test_the_daily_run_estimates_and_publishes_satellite_flow_from_its_indexes_without_a_scan(
    metering: Stack, simulated_time: clock.FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    meters = METERS + "pleasant-prairie-sewer,PP-FM7,PP-SAT-7,flow-monitor,gal,9,2026-01-01,0\n"
    body = json.dumps(metering.put_upload("meters/m.csv", meters.encode()))
    assert on_read_file_uploaded.lambda_handler(sqs_event(body), lambda_context()) == {
        "batchItemFailures": []
    }
    intervals = "tenant,meter_id,interval_start,volume\n" + "".join(
        f"pleasant-prairie-sewer,PP-FM7,2026-02-10T18:{m:02d}:00+00:00,100\n" for m in (0, 5, 10)
    )
    body = json.dumps(metering.put_upload("reads/interval/2026-02-10.csv", intervals.encode()))
    assert on_interval_file_uploaded.lambda_handler(sqs_event(body), lambda_context()) == {
        "batchItemFailures": []
    }
    post_read({"read_on": "2026-02-01", "reading": "3100"})
    simulated_time.set(datetime(2026, 3, 7, 11, tzinfo=UTC))
    calls = dynamodb_calls(monkeypatch)
    event = sqs_event(json.dumps({"scheduled_time": "2026-03-07T11:00:00Z"}))
    assert run_daily.lambda_handler(event, lambda_context()) == {"batchItemFailures": []}
    assert "Scan" not in calls and calls.count("Query") == ACCOUNT_SHARDS + 2, calls  # issue 31
    # (each shard of the accounts index, the flow-monitor index, the monitor's month of days)
    details = [json.loads(i["detail"]) for i in metering.items("metering") if "detail" in i]
    [flow] = [d for d in details if d.get("meter_id") == "PP-FM7" and "month" in d]
    assert (flow["month"], Decimal(flow["volume_gal"]), flow["days_with_data"]) == ("2026-02", 300, 1)
    [february] = [c for d in details for c in d.get("consumptions", []) if c["period_start"] == "2026-02-01"]
    assert february["quality"] == "estimated" and Decimal(february["volume_gal"]) == 2800  # 100 gal/day x 28
    repo = DynamoMeteringRepository(boto3.client("dynamodb"), TABLES["metering"])
    assert [m.meter_id for m in repo.flow_monitors()] == ["PP-FM7"]
    assert sorted(repo.all_account_keys()) == [("pleasant-prairie-sewer", a) for a in ("PP-1", "PP-SAT-7")]


def run_on(simulated_time: clock.FixedClock, day: str) -> None:
    simulated_time.set(datetime.fromisoformat(f"{day}T11:00:00+00:00"))
    event = sqs_event(json.dumps({"scheduled_time": f"{day}T11:00:00Z"}))
    assert run_daily.lambda_handler(event, lambda_context()) == {"batchItemFailures": []}


def determined(stack: Stack) -> dict[str, dict[str, Any]]:
    return {
        c["period_start"]: c
        for i in stack.items("metering")
        if i.get("detail_type") == "ConsumptionsDetermined"
        for c in json.loads(i["detail"])["consumptions"]
    }


def test_a_day_with_nothing_due_costs_one_read_and_a_read_written_since_is_estimated_on_its_day(
    metering: Stack, simulated_time: clock.FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_on(simulated_time, "2026-02-20")  # a full run over an empty table: nothing due for 28 days
    calls = dynamodb_calls(monkeypatch)
    run_on(simulated_time, "2026-02-21")
    assert calls == ["GetItem"]  # the mark only: no scan
    simulated_time.set(datetime(2026, 2, 21, 15, tzinfo=UTC))
    register(metering)  # a meters file and a staff read written between two runs
    post_read({"read_on": "2026-02-01", "reading": "3100"})  # January: 3,100 gal
    calls.clear()
    run_on(simulated_time, "2026-02-22")
    assert "Scan" not in calls and "Query" in calls  # the writes made it a full run (issue 31: no Scan)
    calls.clear()
    for day in ("2026-02-23", "2026-03-01", "2026-03-05"):
        run_on(simulated_time, day)
    assert calls == ["GetItem"] * 3  # February's read window runs to 03-06 (5 days after 03-01)
    assert "2026-02-01" not in determined(metering)
    run_on(simulated_time, "2026-03-06")
    # Estimated on the day the window passed, as a daily scan would: 100 gal/day x 28 days.
    february = determined(metering)["2026-02-01"]
    assert february["quality"] == "estimated" and Decimal(february["volume_gal"]) == 2800


def test_a_daily_run_that_raced_a_read_leaves_the_next_run_a_full_one(
    metering: Stack, simulated_time: clock.FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metering.adapters.dynamodb import DailyRunRepository

    real = DailyRunRepository.all_account_keys
    raced: list[bool] = []

    def keys_then_a_read(self: DailyRunRepository) -> Any:
        yield from real(self)
        if not raced:  # a meters file and a read land after the run's read of the accounts
            raced.append(True)
            register(metering)
            post_read({"read_on": "2026-02-01", "reading": "3100"})

    monkeypatch.setattr(DailyRunRepository, "all_account_keys", keys_then_a_read)
    run_on(simulated_time, "2026-02-20")
    monkeypatch.setattr(DailyRunRepository, "all_account_keys", real)
    repo = DynamoMeteringRepository(boto3.client("dynamodb"), TABLES["metering"])
    mark = repo.due.read()
    assert raced and mark is not None and mark.due(datetime(2026, 2, 21).date())  # the record was refused
    calls = dynamodb_calls(monkeypatch)
    run_on(simulated_time, "2026-02-21")
    assert "Scan" not in calls and "Query" in calls  # a full run
    mark = repo.due.read()
    assert mark is not None and mark.next_on == datetime(2026, 3, 6).date() and not mark.pending
