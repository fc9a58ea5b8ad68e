"""A fault of the deploy is retried, never acknowledged as bad data (issue 30).

``common.handling.consume_sqs`` rejects a permanent error (records ``MessageRejected`` and
deletes the message). A missing environment variable (``ConfigError``) or an AWS permission
refusal (``AccessDenied`` from botocore) is not the message's fault: the record is failed so
SQS redelivers it and, after ``maxReceiveCount``, dead-letters it for a redrive once the
deploy is fixed. One test per kind, each through ``consume_sqs``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from common.clock import FixedClock
from common.config import ConfigError, FunctionConfig, load
from common.errors import PermanentError
from common.handling import MessageRejected, consume_sqs
from metering.adapters.s3 import S3ObjectStore
from metering.app.ingest import ObjectMissing


class Sink:
    service = "metering"
    max_receive_count = 5

    def __init__(self) -> None:
        self.clock = FixedClock(datetime(2026, 1, 5, 12, 0, tzinfo=UTC))
        self.rejected: list[MessageRejected] = []

    def reject(self, rejection: MessageRejected) -> None:
        self.rejected.append(rejection)


def sqs_event(*ids: str, group: str | None = None) -> dict[str, Any]:
    attributes = {"ApproximateReceiveCount": "1", "SentTimestamp": "1767614400000"}
    if group:
        attributes["MessageGroupId"] = group
    return {
        "Records": [
            {
                "messageId": i,
                "receiptHandle": f"rh-{i}",
                "body": json.dumps({"n": i}),
                "attributes": attributes,
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q",
                "awsRegion": "us-east-1",
            }
            for i in ids
        ]
    }


def failed(response: Any) -> list[str]:
    return [f["itemIdentifier"] for f in response["batchItemFailures"]]


class NeedsAVariable(FunctionConfig):
    table_name: str


def access_denied(operation: str = "GetObject") -> ClientError:
    return ClientError({"Error": {"Code": "AccessDenied", "Message": "not allowed"}}, operation)


def test_a_bad_message_is_still_rejected_and_acknowledged() -> None:
    sink = Sink()

    def handler(record: Any) -> None:
        raise PermanentError("tenant: unknown tenant 'nowhere'")

    assert failed(consume_sqs(sqs_event("m1"), None, handler, rejections=sink)) == []
    assert [r.message_id for r in sink.rejected] == ["m1"]


def test_a_missing_environment_variable_is_retried_not_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVENT_BUS_NAME", "bus")
    monkeypatch.delenv("TABLE_NAME", raising=False)
    sink = Sink()

    def handler(record: Any) -> None:
        load(NeedsAVariable)  # a composition root built lazily inside the record's work

    with pytest.raises(ConfigError, match="TABLE_NAME"):
        load(NeedsAVariable)
    assert failed(consume_sqs(sqs_event("m1", "m2"), None, handler, rejections=sink)) == ["m1", "m2"]
    assert sink.rejected == []


def test_an_access_denied_answer_is_retried_not_rejected() -> None:
    sink = Sink()
    s3 = boto3.client("s3", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(s3)
    stub.add_client_error("get_object", service_error_code="AccessDenied", http_status_code=403)
    store = S3ObjectStore(s3)

    def handler(record: Any) -> None:
        b"".join(store.stream("uploads", "reads/2026-01.csv"))

    with stub:
        assert failed(consume_sqs(sqs_event("m1"), None, handler, rejections=sink)) == ["m1"]
    assert sink.rejected == []


@pytest.mark.parametrize(
    "code",
    ["AccessDenied", "AccessDeniedException", "UnrecognizedClientException", "KMS.AccessDeniedException"],
)
def test_a_permission_refusal_wrapped_as_a_permanent_error_is_retried_not_rejected(code: str) -> None:
    # An adapter that took a refusal for a missing object must not make it bad data.
    sink = Sink()

    def handler(record: Any) -> None:
        try:
            raise ClientError({"Error": {"Code": code, "Message": "no"}}, "GetObject")
        except ClientError as exc:
            raise ObjectMissing("s3://uploads/reads/2026-01.csv no longer exists") from exc

    assert failed(consume_sqs(sqs_event("m1"), None, handler, rejections=sink)) == ["m1"]
    assert sink.rejected == []


def test_a_missing_object_is_still_bad_data() -> None:
    sink = Sink()
    s3 = boto3.client("s3", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(s3)
    stub.add_client_error("get_object", service_error_code="NoSuchKey", http_status_code=404)
    store = S3ObjectStore(s3)

    def handler(record: Any) -> None:
        b"".join(store.stream("uploads", "reads/2026-01.csv"))

    with stub:
        assert failed(consume_sqs(sqs_event("m1"), None, handler, rejections=sink)) == []
    assert [r.error for r in sink.rejected] == ["ObjectMissing"]


def test_on_a_fifo_queue_a_failure_holds_back_the_rest_of_its_group() -> None:
    # One at a time and in order (template: the FIFO queues): a record that will be retried
    # is never overtaken by the records after it.
    sink = Sink()
    seen: list[str] = []

    def handler(record: Any) -> None:
        seen.append(record.message_id)
        if record.message_id == "m2":
            raise access_denied()

    response = consume_sqs(sqs_event("m1", "m2", "m3", group="g"), None, handler, rejections=sink)
    assert failed(response) == ["m2", "m3"]
    assert seen == ["m1", "m2"]
    assert sink.rejected == []
