"""billing's queue consumers: consumption kept, cycles and assessments recorded, once."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest
from handler_support import Stack, eventbridge_body, lambda_context, rejections, sqs_event

from billing.domain.cycles import local_date, period_ending
from billing.handlers import on_consumption_determined, run_billing_cycle, run_daily_assessment
from metering.events import ConsumptionDetermined


@pytest.fixture(autouse=True)
def issue_bills_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "ISSUE_BILLS_QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/123456789012/issue-bills"
    )


@pytest.fixture
def queue(billing: Stack, monkeypatch: pytest.MonkeyPatch) -> str:
    url: str = billing.sqs.create_queue(QueueName="issue-bills")["QueueUrl"]
    monkeypatch.setenv("ISSUE_BILLS_QUEUE_URL", url)
    return url


def consumption(account: str = "GR-1", volume: int = 23000) -> ConsumptionDetermined:
    return ConsumptionDetermined(
        occurred_at=datetime(2026, 10, 1, 12, tzinfo=UTC),
        tenant="grafton-sewer",
        account_id=account,
        period_start=date(2026, 7, 1),
        period_end=date(2026, 10, 1),
        volume_gal=volume,
        source_file="reads/q3.csv",
    )


def cycle(tenant: str, at: str) -> str:
    return json.dumps({"tenant": tenant, "scheduled_time": at})


def test_consumption_is_kept_by_business_key(billing: Stack) -> None:
    result = on_consumption_determined.lambda_handler(
        sqs_event(eventbridge_body(consumption())), lambda_context()
    )
    assert result == {"batchItemFailures": []}
    [item] = billing.state("billing")
    assert (item["pk"], item["sk"]) == ("USAGE#grafton-sewer#2026-07-01#2026-10-01", "GR-1")
    assert item["volume_gal"] == "23000"


def test_the_same_consumption_event_twice_changes_nothing(billing: Stack) -> None:
    body = eventbridge_body(consumption())
    on_consumption_determined.lambda_handler(sqs_event(body), lambda_context())
    before = billing.items("billing")
    # A second delivery of the same event, and a duplicate publish of it (new envelope id).
    on_consumption_determined.lambda_handler(
        sqs_event(body, eventbridge_body(consumption())), lambda_context()
    )
    assert billing.items("billing") == before


def test_malformed_events_are_rejected_and_acknowledged_not_retried(billing: Stack) -> None:
    wrong_type = json.loads(eventbridge_body(consumption("GR-2")))
    wrong_type["detail-type"] = "SomethingElse"
    event = sqs_event(eventbridge_body(consumption("GR-1")), json.dumps(wrong_type), "{}")
    result = on_consumption_determined.lambda_handler(event, lambda_context())
    # Retrying cannot fix a malformed message: acknowledged (STYLE 11), and recorded as an event.
    assert result == {"batchItemFailures": []}
    assert len(billing.state("billing")) == 1
    rejected = rejections(billing)
    assert sorted(e["detail"]["message_id"] for e in rejected) == ["m1", "m2"]
    assert {e["source"] for e in rejected} == {"sewerbill.billing"}
    assert all(e["detail"]["error"] == "MalformedMessage" for e in rejected)


def test_a_quarterly_cycle_records_the_quarter_just_ended_with_its_event(billing: Stack, queue: str) -> None:
    result = run_billing_cycle.lambda_handler(
        sqs_event(cycle("grafton-sewer", "2026-10-01T11:00:00Z")), lambda_context()
    )

    assert result == {"batchItemFailures": []}
    [run] = billing.state("billing")
    assert (run["pk"], run["sk"]) == ("CYCLE#grafton-sewer", "PERIOD#2026-07-01#2026-10-01")
    [outbox] = billing.outbox("billing")
    assert outbox["detail_type"] == "BillingCycleStarted"
    detail = json.loads(outbox["detail"])
    assert (detail["period_start"], detail["period_end"], detail["period_months"]) == (
        "2026-07-01",
        "2026-10-01",
        3,
    )


def test_a_monthly_cycle_records_the_month_just_ended(billing: Stack, queue: str) -> None:
    run_billing_cycle.lambda_handler(
        sqs_event(cycle("pleasant-prairie-sewer", "2026-03-01T12:00:00Z")), lambda_context()
    )
    [run] = billing.state("billing")
    assert run["sk"] == "PERIOD#2026-02-01#2026-03-01"


def test_a_replayed_cycle_schedule_changes_nothing(billing: Stack, queue: str) -> None:
    body = cycle("grafton-sewer", "2026-10-01T11:00:00Z")
    run_billing_cycle.lambda_handler(sqs_event(body), lambda_context())
    before = billing.items("billing")
    run_billing_cycle.lambda_handler(sqs_event(body, body), lambda_context())
    assert billing.items("billing") == before


def test_a_cycle_for_an_unknown_tenant_is_rejected_without_touching_state(billing: Stack, queue: str) -> None:
    result = run_billing_cycle.lambda_handler(
        sqs_event(cycle("nowhere-sewer", "2026-10-01T11:00:00Z")), lambda_context()
    )
    assert result == {"batchItemFailures": []}
    assert billing.state("billing") == []
    [rejected] = rejections(billing)
    assert "nowhere-sewer" in rejected["detail"]["reason"]


def test_the_daily_assessment_is_recorded_once_per_local_day_it_runs_in_full(billing: Stack) -> None:
    first = json.dumps({"scheduled_time": "2026-10-02T12:00:00Z"})
    again = json.dumps({"scheduled_time": "2026-10-02T12:00:00Z"})
    result = run_daily_assessment.lambda_handler(sqs_event(first, again), lambda_context())
    assert result == {"batchItemFailures": []}
    # The first run is a full one (no mark yet); the second finds nothing due in the mark.
    assert sorted(i["sk"] for i in billing.state("billing")) == ["DATE#2026-10-02", "DUE"]


def test_schedule_times_are_read_in_the_utilities_time_zone() -> None:
    # 02:00 UTC on March 2 is still March 1 in Wisconsin.
    assert local_date(datetime(2026, 3, 2, 2, tzinfo=UTC)) == date(2026, 3, 1)
    assert period_ending(datetime(2026, 1, 1, 12, tzinfo=UTC), 3) == (date(2025, 10, 1), date(2026, 1, 1))
