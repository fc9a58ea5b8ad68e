"""What a deploy to AWS needs that the emulator cannot show (issue 30), checked on
template.yaml: concurrency that cannot dead-letter valid work, an alarm on every dead-letter
queue and every function, one dashboard, and IAM no wider than the work."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from common.observability import NAMESPACE, Counts
from sewerbill.samtemplate import load_template, resources_of_type, translate_template

# Consumers whose code requires one invocation at a time, and why (their docstrings say so).
ONE_AT_A_TIME = {
    "MeteringOnReadFileUploadedFunction": "account states written without version conditions",
    "MeteringOnIntervalFileUploadedFunction": "a meter's daily items written without conditions",
    "MeteringRunDailyFunction": "estimates write account states as file intake does",
    "StormwaterOnGisExtractUploadedFunction": "new parcels written in bulk without conditions",
    "StormwaterRunTariffCheckFunction": "a tariff version redetermines every parcel in order",
}


@cache
def cfn() -> dict[str, Any]:
    return translate_template()


@cache
def sam() -> dict[str, Any]:
    return load_template()


def of_type(rtype: str) -> dict[str, dict[str, Any]]:
    return resources_of_type(cfn(), rtype)


def queue_mappings() -> list[tuple[str, str, dict[str, Any]]]:
    """(function, queue, mapping properties) of every SQS event source."""
    queues = of_type("AWS::SQS::Queue")
    found = []
    for mapping in of_type("AWS::Lambda::EventSourceMapping").values():
        props = mapping["Properties"]
        source = props["EventSourceArn"]
        if isinstance(source, dict) and source.get("Fn::GetAtt", [None])[0] in queues:
            found.append((props["FunctionName"]["Ref"], source["Fn::GetAtt"][0], props))
    return found


# --- concurrency ------------------------------------------------------------------------
def test_no_function_reserves_less_concurrency_than_its_queues_may_hand_it() -> None:
    # Event source mappings ignore reserved concurrency: invocations beyond it are throttled,
    # the messages return to the queue, and each return counts toward maxReceiveCount.
    functions = of_type("AWS::Lambda::Function")
    checked = 0
    for function_id, queue_id, props in queue_mappings():
        most = props["ScalingConfig"]["MaximumConcurrency"]
        assert most >= 2, f"{queue_id}: AWS's least MaximumConcurrency is 2"
        reserved = functions[function_id]["Properties"].get("ReservedConcurrentExecutions")
        assert reserved is None or reserved >= most, (
            f"{function_id} reserves {reserved} but {queue_id} may invoke it {most} at a time"
        )
        checked += 1
    assert checked >= 16


def test_one_at_a_time_work_comes_from_a_fifo_queue_with_one_message_group() -> None:
    queues = of_type("AWS::SQS::Queue")
    functions = of_type("AWS::Lambda::Function")
    feeders = _feeders()
    serial = {f: q for f, q, _ in queue_mappings() if f in ONE_AT_A_TIME}
    assert set(serial) == set(ONE_AT_A_TIME)
    for function_id, queue_id in serial.items():
        queue = queues[queue_id]["Properties"]
        assert queue.get("FifoQueue") is True, f"{queue_id}: {ONE_AT_A_TIME[function_id]}"
        # EventBridge and Scheduler set no deduplication id: the queue derives it from the body.
        assert queue.get("ContentBasedDeduplication") is True, queue_id
        dlq_id = queue["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
        assert queues[dlq_id]["Properties"].get("FifoQueue") is True, dlq_id
        timeout = functions[function_id]["Properties"]["Timeout"]
        assert queue["VisibilityTimeout"] >= 6 * timeout, queue_id
        groups = {
            json.dumps(target.get("SqsParameters", {}).get("MessageGroupId")) for target in feeders[queue_id]
        }
        assert len(feeders[queue_id]) >= 1 and len(groups) == 1, f"{queue_id}: {groups}"
        [group] = groups
        assert group.startswith('"'), f"{queue_id}: one fixed message group, got {group}"


def test_every_fifo_queue_is_fed_with_a_message_group() -> None:
    queues = of_type("AWS::SQS::Queue")
    for queue_id, targets in _feeders().items():
        fifo = queues[queue_id]["Properties"].get("FifoQueue") is True
        for target in targets:
            assert bool(target.get("SqsParameters", {}).get("MessageGroupId")) == fifo, queue_id


def _feeders() -> dict[str, list[dict[str, Any]]]:
    """The rule and schedule targets of each queue."""
    feeders: dict[str, list[dict[str, Any]]] = {}
    for rule in of_type("AWS::Events::Rule").values():
        for target in rule["Properties"]["Targets"]:
            feeders.setdefault(target["Arn"]["Fn::GetAtt"][0], []).append(target)
    for schedule in of_type("AWS::Scheduler::Schedule").values():
        target = schedule["Properties"]["Target"]
        feeders.setdefault(target["Arn"]["Fn::GetAtt"][0], []).append(target)
    return feeders


# --- alarms and dashboard ------------------------------------------------------------------
def _alarms_on(namespace: str, metric: str) -> dict[str, dict[str, Any]]:
    """Alarm properties on ``metric``, by the logical id of the resource they watch."""
    found = {}
    for alarm_id, alarm in of_type("AWS::CloudWatch::Alarm").items():
        props = alarm["Properties"]
        if (props.get("Namespace"), props.get("MetricName")) != (namespace, metric):
            continue
        [dimension] = props["Dimensions"]
        value = dimension["Value"]
        watched = value["Ref"] if "Ref" in value else value["Fn::GetAtt"][0]
        assert watched not in found, f"two alarms on {metric} of {watched}"
        found[watched] = props | {"_id": alarm_id, "_condition": alarm.get("Condition")}
    return found


def _fires_on_the_first(props: dict[str, Any]) -> bool:
    return (
        props["ComparisonOperator"] == "GreaterThanThreshold"
        and props["Threshold"] == 0
        and props["EvaluationPeriods"] == 1
        and props["AlarmActions"] == [{"Ref": "AlarmTopic"}]
    )


def test_every_dead_letter_queue_alarms_on_a_visible_message() -> None:
    queues = of_type("AWS::SQS::Queue")
    redriven = {
        q["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
        for q in queues.values()
        if "RedrivePolicy" in q["Properties"]
    }
    destinations = {
        m["Properties"]["DestinationConfig"]["OnFailure"]["Destination"]["Fn::GetAtt"][0]
        for m in of_type("AWS::Lambda::EventSourceMapping").values()
        if "DestinationConfig" in m["Properties"]
    }
    rule_dlqs = {
        t["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0]
        for r in of_type("AWS::Events::Rule").values()
        for t in r["Properties"]["Targets"]
        if "DeadLetterConfig" in t
    }
    dlqs = redriven | destinations | rule_dlqs
    assert "OutboxPublishFailuresDLQ" in destinations and "EventRuleTargetsDLQ" in rule_dlqs
    alarms = _alarms_on("AWS/SQS", "ApproximateNumberOfMessagesVisible")
    missing = dlqs - set(alarms)
    assert not missing, f"no alarm on {sorted(missing)}"
    for dlq_id in dlqs:
        props = alarms[dlq_id]
        assert props["Dimensions"][0] == {"Name": "QueueName", "Value": {"Fn::GetAtt": [dlq_id, "QueueName"]}}
        assert props["Statistic"] == "Maximum" and _fires_on_the_first(props), dlq_id


def test_every_function_alarms_on_its_errors_and_its_throttles() -> None:
    functions = of_type("AWS::Lambda::Function")
    sam_functions = resources_of_type(sam(), "AWS::Serverless::Function")
    assert set(functions) == set(sam_functions)
    for metric in ("Errors", "Throttles"):
        alarms = _alarms_on("AWS/Lambda", metric)
        missing = set(functions) - set(alarms)
        assert not missing, f"no {metric} alarm on {sorted(missing)}"
        for function_id, props in alarms.items():
            assert props["Statistic"] == "Sum" and _fires_on_the_first(props), props["_id"]
            # A function that exists only under a condition has its alarms under the same one.
            assert props["_condition"] == sam_functions[function_id].get("Condition"), props["_id"]


def test_the_http_api_alarms_on_5xx() -> None:
    [api_id] = of_type("AWS::ApiGatewayV2::Api")
    props = _alarms_on("AWS/ApiGateway", "5xx")[api_id]
    assert props["Dimensions"] == [{"Name": "ApiId", "Value": {"Ref": api_id}}]
    assert _fires_on_the_first(props)


def test_every_alarm_goes_to_the_one_topic_whose_email_is_a_parameter() -> None:
    alarms = of_type("AWS::CloudWatch::Alarm")
    assert alarms
    for alarm_id, alarm in alarms.items():
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": "AlarmTopic"}], alarm_id
    assert list(of_type("AWS::SNS::Topic")) == ["AlarmTopic"]
    [subscription] = resources_of_type(sam(), "AWS::SNS::Subscription").values()
    props = subscription["Properties"]
    assert (props["Protocol"], props["Endpoint"], props["TopicArn"]) == (
        "email",
        {"Ref": "AlarmEmail"},
        {"Ref": "AlarmTopic"},
    )
    assert "AlarmEmail" in sam()["Parameters"]


def test_the_dashboard_shows_every_business_count_the_functions_emit() -> None:
    [dashboard] = resources_of_type(sam(), "AWS::CloudWatch::Dashboard").values()
    text = dashboard["Properties"]["DashboardBody"]["Fn::Sub"]
    body = json.loads(re.sub(r"\$\{[^}]+\}", "x", text))
    metrics = [m for w in body["widgets"] for m in w["properties"].get("metrics", [])]
    shown = {m[1] for m in metrics if isinstance(m[0], str) and m[0] == NAMESPACE}
    shown |= {
        name
        for m in metrics
        if isinstance(m[0], dict)
        for name in re.findall(r'MetricName="(\w+)"', m[0]["expression"])
        if f"{{{NAMESPACE}," in m[0]["expression"]
    }
    assert {str(c) for c in Counts} <= shown, sorted({str(c) for c in Counts} - shown)


# --- least privilege ----------------------------------------------------------------------
def _statements(function_id: str) -> list[dict[str, Any]]:
    role = cfn()["Resources"][f"{function_id}Role"]["Properties"]
    return [s for p in role.get("Policies", []) for s in p["PolicyDocument"]["Statement"]]


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _rule_prefixes(function_id: str) -> set[str]:
    """The upload key prefixes the rules feeding this function's queues route to it."""
    queues = {q for f, q, _ in queue_mappings() if f == function_id}
    prefixes: set[str] = set()
    for rule in of_type("AWS::Events::Rule").values():
        props = rule["Properties"]
        if props["EventPattern"].get("source") != ["aws.s3"]:
            continue
        if not {t["Arn"]["Fn::GetAtt"][0] for t in props["Targets"]} & queues:
            continue
        text = json.dumps(props["EventPattern"])
        prefixes |= set(re.findall(r'\{"prefix": "([^"]+)"\}', text))
    return prefixes


def _uploads_objects(statement: dict[str, Any]) -> list[str]:
    found = []
    for resource in _as_list(statement["Resource"]):
        text = resource.get("Fn::Sub", "") if isinstance(resource, dict) else str(resource)
        if isinstance(text, str) and text.startswith("${UploadsBucket.Arn}/"):
            found.append(text.removeprefix("${UploadsBucket.Arn}/"))
    return found


def test_each_function_reads_only_its_rules_prefixes_of_the_uploads_bucket_and_writes_its_reports() -> None:
    checked = 0
    for function_id in of_type("AWS::Lambda::Function"):
        service = functions_service(function_id)
        for statement in _statements(function_id):
            actions = set(_as_list(statement["Action"]))
            assert "s3:*" not in actions and "s3:DeleteObject" not in actions, function_id
            objects = _uploads_objects(statement)
            if "UploadsBucket" in json.dumps(statement["Resource"]) and not objects:
                assert actions == {"s3:ListBucket"}, f"{function_id}: {actions} on the whole uploads bucket"
            for key in objects:
                if actions == {"s3:GetObject"}:
                    # the files its rules route to it, or its own service's reports read back
                    # (billing's import review, issue 33)
                    own_reports = key == f"reports/{service}/*"
                    assert own_reports or key.removesuffix("*") in _rule_prefixes(function_id), (
                        f"{function_id} reads {key}"
                    )
                else:
                    assert actions == {"s3:PutObject"}, function_id
                    assert key == f"reports/{service}/*", f"{function_id} writes {key}"
                checked += 1
    assert checked >= 12


def functions_service(function_id: str) -> str:
    handler = of_type("AWS::Lambda::Function")[function_id]["Properties"]["Handler"]
    return str(handler.split(".")[0])


def test_email_is_sent_from_the_notice_identity_and_nothing_else_of_ses_is_allowed() -> None:
    senders = 0
    for function_id in of_type("AWS::Lambda::Function"):
        for statement in _statements(function_id):
            actions = {a for a in _as_list(statement["Action"]) if a.startswith("ses:")}
            if not actions:
                continue
            assert actions <= {"ses:SendRawEmail", "ses:SendEmail"}, function_id
            [resource] = _as_list(statement["Resource"])
            assert resource["Fn::Sub"].endswith(":identity/${NoticeSender}"), function_id
            assert statement["Condition"] == {"StringEquals": {"ses:FromAddress": {"Ref": "NoticeSender"}}}
            senders += 1
    assert senders == 2  # the notice-event consumer and the print batch (held bills by email)


def test_events_are_put_on_the_bus_only_with_the_publishers_own_source() -> None:
    publishers = 0
    for function_id in of_type("AWS::Lambda::Function"):
        for statement in _statements(function_id):
            if "events:PutEvents" not in _as_list(statement["Action"]):
                continue
            assert statement["Resource"] == {"Fn::GetAtt": ["EventBus", "Arn"]}, function_id
            source = f"sewerbill.{functions_service(function_id)}"
            assert statement["Condition"] == {"StringEquals": {"events:source": source}}, function_id
            publishers += 1
    assert publishers == 5


def test_every_event_a_service_publishes_carries_its_own_source() -> None:
    # With the condition above, an event of another source would be refused by IAM.
    import importlib

    from common.events import Event

    for service in ("metering", "sampling", "stormwater", "billing", "notices"):
        module = importlib.import_module(f"{service}.events")
        events = [
            v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Event) and v.SOURCE
        ]
        own = [e for e in events if e.__module__ == module.__name__]
        assert own, service
        assert {e.SOURCE for e in own} == {f"sewerbill.{service}"}, service
