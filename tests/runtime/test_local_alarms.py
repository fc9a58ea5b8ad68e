"""The template's alarms on the local stack (issue 30): `sewerbill local status` lists each
alarm whose condition holds now, evaluated as CloudWatch would from what the stack knows (a
dead-letter queue's visible messages, a function's invocations that raised)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from typer.testing import CliRunner

from sewerbill.cli import local
from sewerbill.local import LocalRuntime
from sewerbill.samtemplate import TEMPLATE_PATH

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(TEMPLATE_PATH, start_time=datetime(2026, 1, 5, 12, tzinfo=UTC)) as runtime:
        yield runtime


def status(rt: LocalRuntime) -> dict[str, object]:
    result = CliRunner().invoke(local.local_app, ["status", "--gateway", rt.gateway_url])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.output))


def firing(rt: LocalRuntime) -> list[str]:
    return [a["alarm"] for a in status(rt)["alarms"]]  # type: ignore[attr-defined, index]


def test_every_alarm_of_the_template_is_evaluated_and_none_holds_on_a_fresh_stack(rt: LocalRuntime) -> None:
    shown = status(rt)
    alarms = [lid for lid, t in rt.stack.types.items() if t == "AWS::CloudWatch::Alarm"]
    assert shown["alarms_watched"] == len(alarms) > 0
    assert shown["alarms_not_evaluated"] == []
    assert shown["alarms"] == []
    # The alarms' topic is on the stack (nothing subscribes without the AlarmEmail parameter).
    topics = [t["TopicArn"] for t in rt.client("sns").list_topics()["Topics"]]
    assert rt.resource("AlarmTopic") in topics


def test_a_message_in_a_dlq_shows_its_alarm_in_the_status(rt: LocalRuntime) -> None:
    rt.send("BillingIssueBillsDLQ", {"tenant": "grafton-sewer", "first": "GR-1"})
    rt.send("MeteringRunDailyDLQ", {"scheduled_time": "2026-01-05T11:00:00Z"})  # a FIFO DLQ

    shown = status(rt)

    assert sorted(a["alarm"] for a in shown["alarms"]) == [  # type: ignore[attr-defined]
        "BillingIssueBillsDLQMessagesAlarm",
        "MeteringRunDailyDLQMessagesAlarm",
    ]
    [alarm] = [a for a in shown["alarms"] if a["alarm"] == "BillingIssueBillsDLQMessagesAlarm"]  # type: ignore[attr-defined]
    assert alarm["metric"] == "AWS/SQS ApproximateNumberOfMessagesVisible"
    assert alarm["value"] == 1
    assert alarm["condition"] == "GreaterThanThreshold 0"
    assert alarm["dimensions"] == {"QueueName": "sewerbill-local-billing-issue-bills-dlq"}

    for queue in ("BillingIssueBillsDLQ", "MeteringRunDailyDLQ"):
        rt.client("sqs").purge_queue(QueueUrl=rt.resource(queue))
    assert firing(rt) == []


def test_a_function_that_raised_since_start_shows_its_errors_alarm(rt: LocalRuntime) -> None:
    inv = rt.invoke("SamplingRunDailyFunction", {"Records": "not a list of records"})
    assert inv.error

    assert firing(rt) == ["SamplingRunDailyErrorsAlarm"]
