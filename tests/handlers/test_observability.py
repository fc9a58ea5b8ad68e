"""Logs, metrics and correlation as Lambda users expect them (common.observability).

Powertools writes logs and EMF metrics as JSON lines on stdout; these tests read them back.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any

import pytest
from handler_support import Stack, eventbridge_body, lambda_context, rejections, sqs_event

from billing.handlers import on_consumption_determined, run_billing_cycle
from billing.handlers import publish_outbox as billing_publish_outbox
from common.events import Event
from common.observability import NAMESPACE, Counts, correlation_id_of, logger
from metering.events import ConsumptionDetermined, ConsumptionsDetermined
from metering.handlers import on_read_file_uploaded

METERS = (
    "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading\n"
    "grafton-sewer,GR-M1,GR-1,water,gal,6,2026-07-01,0\n"
    "grafton-sewer,GR-M2,GR-2,water,gal,6,2026-07-01,0\n"
)
READS = (
    "tenant,meter_id,read_on,reading\n"
    "grafton-sewer,GR-M1,2026-10-01,23000\n"
    "grafton-sewer,GR-M2,2026-10-01,18000\n"
    "grafton-sewer,GR-M3,2026-10-01,lots\n"
)


@pytest.fixture(autouse=True)
def registered_meters(request: pytest.FixtureRequest) -> Any:
    """Metering's tests run on 2026-10-02 with two meters registered (issue 9: reads name meters)."""
    if "metering" not in request.fixturenames:
        yield
        return
    from common import clock

    stack = request.getfixturevalue("metering")
    clock.install(clock.FixedClock(datetime(2026, 10, 2, 15, tzinfo=UTC)))
    upload = stack.put_upload("meters/m.csv", METERS.encode())
    on_read_file_uploaded.lambda_handler(sqs_event(json.dumps(upload)), lambda_context())
    yield
    clock.install(None)


@pytest.fixture
def out(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> pytest.CaptureFixture[str]:
    """capsys, with Powertools' log handler (bound to stdout at import) writing to it too."""

    class CurrentStdout:
        def write(self, text: str) -> int:
            return sys.stdout.write(text)

        def flush(self) -> None:
            sys.stdout.flush()

    monkeypatch.setattr(logger.registered_handler, "stream", CurrentStdout())
    return capsys


def json_lines(out: str) -> list[dict[str, Any]]:
    lines = []
    for line in out.splitlines():
        try:
            parsed = json.loads(line)
        except ValueError:
            continue
        if isinstance(parsed, dict):
            lines.append(parsed)
    return lines


def metric_values(out: str) -> dict[str, float]:
    """Every EMF metric printed, summed by name (namespace checked)."""
    totals: dict[str, float] = {}
    for line in json_lines(out):
        emf = line.get("_aws", {}).get("CloudWatchMetrics")
        if not emf:
            continue
        assert emf[0]["Namespace"] == NAMESPACE
        for metric in emf[0]["Metrics"]:
            value = line[metric["Name"]]
            totals[metric["Name"]] = totals.get(metric["Name"], 0) + (
                sum(value) if isinstance(value, list) else value
            )
    return totals


def logs(out: str) -> list[dict[str, Any]]:
    return [line for line in json_lines(out) if "message" in line and "level" in line]


def test_a_read_file_counts_reads_accepted_and_rejected_as_embedded_metrics(
    metering: Stack, out: pytest.CaptureFixture[str]
) -> None:
    upload = metering.put_upload("reads/q3.csv", READS.encode())
    on_read_file_uploaded.lambda_handler(sqs_event(json.dumps(upload)), lambda_context())

    counted = metric_values(out.readouterr().out)
    # Two good rows and one with a volume that is not a number.
    assert counted[Counts.READS_ACCEPTED] == 2
    assert counted[Counts.READS_REJECTED] == 1


def test_log_lines_carry_the_request_id_cold_start_and_the_uploads_event_id_as_correlation_id(
    metering: Stack, out: pytest.CaptureFixture[str]
) -> None:
    upload = metering.put_upload("reads/q3.csv", READS.encode())
    context = lambda_context("sewerbill-local-metering")
    on_read_file_uploaded.lambda_handler(sqs_event(json.dumps(upload)), context)

    [taken_in] = [
        line
        for line in logs(out.readouterr().out)
        if line["message"] == "file taken in" and line["kind"] == "reads"
    ]
    assert taken_in["function_request_id"] == context.aws_request_id
    assert taken_in["function_name"] == "sewerbill-local-metering"
    assert isinstance(taken_in["cold_start"], bool)
    # The S3 notification starts the chain: its EventBridge event id is the correlation id.
    assert taken_in["correlation_id"] == upload["id"]


def test_events_a_consumer_writes_carry_the_correlation_id_to_the_next_service(
    metering: Stack, out: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    upload = metering.put_upload("reads/q3.csv", READS.encode())
    on_read_file_uploaded.lambda_handler(sqs_event(json.dumps(upload)), lambda_context())
    [chunk] = [
        json.loads(i["detail"])
        for i in metering.outbox("metering")
        if i["detail_type"] == "ConsumptionsDetermined"
    ]
    assert chunk["correlation_id"] == upload["id"]  # one event per chunk carries it on

    # Billing keeps one of them; its log lines show the same id.
    monkeypatch.setenv("TABLE_NAME", "sewerbill-local-billing")
    event = ConsumptionsDetermined.model_validate(chunk)
    out.readouterr()
    logger.setLevel("DEBUG")  # billing logs a kept consumption at debug level
    try:
        on_consumption_determined.lambda_handler(sqs_event(eventbridge_body(event)), lambda_context())
    finally:
        logger.setLevel("INFO")
    billing_lines = [line for line in logs(out.readouterr().out) if "consumption" in line["message"]]
    assert billing_lines and all(line["correlation_id"] == upload["id"] for line in billing_lines)


def test_a_billing_cycle_started_by_a_schedule_carries_the_schedule_messages_id(
    billing: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cycle fans its accounts out through the issue-bills queue (template.yaml).
    monkeypatch.setenv("ISSUE_BILLS_QUEUE_URL", billing.sqs.create_queue(QueueName="issue-bills")["QueueUrl"])
    schedule = json.dumps({"tenant": "grafton-sewer", "scheduled_time": "2026-10-01T11:00:00Z"})
    event = sqs_event(schedule)
    run_billing_cycle.lambda_handler(event, lambda_context())
    billing_publish_outbox.lambda_handler({"Records": billing.stream_records("billing")}, lambda_context())

    [started] = [e for e in billing.captured() if e["detail-type"] == "BillingCycleStarted"]
    assert started["detail"]["correlation_id"] == event["Records"][0]["messageId"]


def test_a_rejection_is_counted_and_carries_the_rejected_events_correlation_id(
    billing: Stack, out: pytest.CaptureFixture[str]
) -> None:
    body = json.loads(eventbridge_body(_consumption()))
    body["detail"]["correlation_id"] = "upload-42"
    del body["detail"]["volume_gal"]  # malformed: permanent

    result = on_consumption_determined.lambda_handler(sqs_event(json.dumps(body)), lambda_context())

    assert result == {"batchItemFailures": []}
    [rejected] = rejections(billing)
    assert rejected["detail"]["correlation_id"] == "upload-42"
    printed = out.readouterr().out
    assert metric_values(printed)[Counts.MESSAGES_REJECTED] == 1
    [logged] = [line for line in logs(printed) if line["message"] == "message rejected"]
    assert logged["level"] == "ERROR" and logged["correlation_id"] == "upload-42"


def test_a_transient_failure_is_counted_as_a_retry_and_on_the_last_receive_as_a_dead_letter(
    billing: Stack, out: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from billing import composition

    def dynamodb_down(_: Any) -> bool:
        raise ConnectionError("dynamodb unreachable")

    monkeypatch.setenv("MAX_RECEIVE_COUNT", "5")
    monkeypatch.setattr(composition, "keep_consumption_use_case", lambda: dynamodb_down)
    event = sqs_event(eventbridge_body(_consumption()), eventbridge_body(_consumption("GR-2")))
    event["Records"][1]["attributes"]["ApproximateReceiveCount"] = "5"

    result = on_consumption_determined.lambda_handler(event, lambda_context())

    assert result == {"batchItemFailures": [{"itemIdentifier": "m0"}, {"itemIdentifier": "m1"}]}
    counted = metric_values(out.readouterr().out)
    assert counted[Counts.MESSAGES_RETRIED] == 1
    assert counted[Counts.DEAD_LETTERS] == 1


def test_the_correlation_id_comes_from_the_event_else_its_id_else_the_message() -> None:
    assert correlation_id_of(json.dumps({"detail-type": "X", "id": "e1", "detail": {}}), "m") == "e1"
    assert (
        correlation_id_of(
            json.dumps({"detail-type": "X", "id": "e1", "detail": {"correlation_id": "c"}}), "m"
        )
        == "c"
    )
    assert correlation_id_of('{"tenant": "grafton-sewer"}', "m") == "m"
    assert correlation_id_of("not json", "m") == "m"


def test_an_event_without_a_correlation_id_leaves_it_out_of_its_detail() -> None:
    event = _consumption()
    assert "correlation_id" not in json.loads(event.detail_json())
    assert json.loads(event.correlated("c1").detail_json())["correlation_id"] == "c1"
    # An event that already belongs to a chain keeps it.
    assert event.correlated("c1").correlated("c2").correlation_id == "c1"
    assert isinstance(event, Event)


def _consumption(account: str = "GR-1") -> ConsumptionDetermined:
    from handler_support import fixture_text

    detail = json.loads(fixture_text("ConsumptionDetermined.json"))["detail"]
    detail.pop("correlation_id", None)
    return ConsumptionDetermined.model_validate({**detail, "account_id": account})


class _RecordingTracer:
    def __init__(self, disabled: bool) -> None:
        self.disabled = disabled
        self.wrapped: list[Any] = []

    def capture_lambda_handler(self, handler: Any, capture_response: bool) -> Any:
        self.wrapped.append(handler)
        return handler


@pytest.mark.parametrize("disabled", [False, True])
def test_an_entry_point_is_traced_when_tracing_is_on_and_left_unwrapped_when_it_is_off(
    disabled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In Lambda (tracing on) the handler runs in X-Ray's subsegment; where tracing is off
    (outside Lambda, the local runtime, POWERTOOLS_TRACE_DISABLED) that subsegment would be a
    dummy built on every invocation, so the entry point is not wrapped for it."""
    from common import observability

    tracer = _RecordingTracer(disabled)
    monkeypatch.setattr(observability, "tracer", tracer)

    @observability.observed
    def entry(event: Any, context: Any) -> str:
        return "answered"

    assert len(tracer.wrapped) == (0 if disabled else 1)
    assert entry({}, lambda_context()) == "answered"
    assert entry.__observed__  # type: ignore[attr-defined]


def test_a_failed_send_counts_as_a_notice_failed_and_the_later_send_as_a_notice_sent(
    notices: Stack, out: pytest.CaptureFixture[str]
) -> None:
    import boto3
    from test_notices_handlers import issued

    from notices.handlers import on_notice_event

    body = eventbridge_body(issued())
    # The sender is not a verified SES identity yet: SES refuses, the message is retried.
    assert on_notice_event.lambda_handler(sqs_event(body), lambda_context())["batchItemFailures"]
    failed = metric_values(out.readouterr().out)
    assert (failed.get(Counts.NOTICES_FAILED), failed.get(Counts.NOTICES_SENT)) == (1, None)

    boto3.client("ses", region_name="us-east-1").verify_email_identity(EmailAddress="billing@sewerbill.local")
    assert not on_notice_event.lambda_handler(sqs_event(body), lambda_context())["batchItemFailures"]
    sent = metric_values(out.readouterr().out)
    assert (sent.get(Counts.NOTICES_FAILED), sent.get(Counts.NOTICES_SENT)) == (None, 1)
