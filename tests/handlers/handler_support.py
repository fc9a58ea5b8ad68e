"""Test support for handler tests: moto resources named as the template names them (Stage
``local``), and Lambda-shaped events (SQS, DynamoDB stream, HTTP API)."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

REGION = "us-east-1"
ACCOUNT = "123456789012"
BUS = "sewerbill-local"
UPLOADS = f"sewerbill-local-uploads-{ACCOUNT}-{REGION}"
TABLES = {
    "metering": "sewerbill-local-metering",
    "billing": "sewerbill-local-billing",
    "sampling": "sewerbill-local-sampling",
    "notices": "sewerbill-local-notices",
}
MAIL = f"sewerbill-local-mail-{ACCOUNT}-{REGION}"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "events"


def issued(
    opted_in: bool = True,
    account: str = "GR-1",
    *,
    bill_id: str | None = None,
    bill_number: str | None = None,
    email: str | None = "ada@example.org",
) -> Any:
    """A Grafton quarter's ``BillIssued`` (GR-SVC 45.00) to Ada Lovelace, for the notices
    tests: ``opted_in`` to email or not, on ``account`` (bill ``B-<account>``, printed
    ``GR-2026Q3-<account>`` unless given)."""
    from datetime import UTC, date, datetime
    from decimal import Decimal

    from billing.events import BillIssued, IssuedLine, Party

    return BillIssued(
        occurred_at=datetime(2026, 10, 1, 12, tzinfo=UTC),
        tenant="grafton-sewer",
        account_id=account,
        bill_id=bill_id or f"B-{account}",
        bill_number=bill_number or f"GR-2026Q3-{account}",
        period_start=date(2026, 7, 1),
        period_end=date(2026, 10, 1),
        bill_date=date(2026, 10, 1),
        due_date=date(2026, 11, 1),
        lines=(
            IssuedLine(
                rule_id="GR-SVC",
                description="Quarterly service charge",
                quantity="1",
                unit="quarter",
                rate="45.00",
                amount=Decimal("45.00"),
            ),
        ),
        total=Decimal("45.00"),
        previous_balance=Decimal("0"),
        payments_since=Decimal("0"),
        amount_due=Decimal("45.00"),
        recipient=Party(
            name="Ada Lovelace", address="12 Oak St; Grafton, WI 53024", email=email, email_opt_in=opted_in
        ),
    )


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@dataclass
class Stack:
    ddb: Any
    s3: Any
    sqs: Any
    events: Any
    streams: Any
    capture_queue_url: str
    _iterators: dict[str, str] = field(default_factory=dict)

    def items(self, service: str) -> list[dict[str, Any]]:
        from common.dynamo import from_item

        pages = self.ddb.get_paginator("scan").paginate(TableName=TABLES[service], ConsistentRead=True)
        return sorted(
            (from_item(i) for page in pages for i in page["Items"]), key=lambda i: (i["pk"], i["sk"])
        )

    def outbox(self, service: str) -> list[dict[str, Any]]:
        return [i for i in self.items(service) if i["pk"].startswith("OUTBOX#")]

    def state(self, service: str) -> list[dict[str, Any]]:
        return [i for i in self.items(service) if not i["pk"].startswith("OUTBOX#")]

    def put_upload(self, key: str, body: bytes) -> dict[str, Any]:
        resp = self.s3.put_object(Bucket=UPLOADS, Key=key, Body=body)
        return object_created(key, resp["ETag"].strip('"'), len(body))

    def stream_records(self, service: str) -> list[dict[str, Any]]:
        """New records on the table's stream since the last call (Lambda record shape)."""
        arn = self.ddb.describe_table(TableName=TABLES[service])["Table"]["LatestStreamArn"]
        records: list[dict[str, Any]] = []
        for shard in self.streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
            shard_id = shard["ShardId"]
            iterator = (
                self._iterators.get(shard_id)
                or self.streams.get_shard_iterator(
                    StreamArn=arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
                )["ShardIterator"]
            )
            resp = self.streams.get_records(ShardIterator=iterator)
            records.extend(resp["Records"])
            self._iterators[shard_id] = resp["NextShardIterator"]
        for record in records:
            record["eventSourceARN"] = arn
        return records

    def captured(self) -> list[dict[str, Any]]:
        """EventBridge events that reached the capture queue (every sewerbill.* event)."""
        found: list[dict[str, Any]] = []
        while True:
            resp = self.sqs.receive_message(QueueUrl=self.capture_queue_url, MaxNumberOfMessages=10)
            messages = resp.get("Messages", [])
            if not messages:
                return found
            for m in messages:
                found.append(json.loads(m["Body"]))
                self.sqs.delete_message(QueueUrl=self.capture_queue_url, ReceiptHandle=m["ReceiptHandle"])


def create_stack() -> Stack:
    ddb = boto3.client("dynamodb", region_name=REGION)
    for table in TABLES.values():
        ddb.create_table(
            TableName=table,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        )
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket=UPLOADS)
    events = boto3.client("events", region_name=REGION)
    events.create_event_bus(Name=BUS)
    sqs = boto3.client("sqs", region_name=REGION)
    capture = sqs.create_queue(QueueName="capture")["QueueUrl"]
    capture_arn = sqs.get_queue_attributes(QueueUrl=capture, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    events.put_rule(
        Name="capture", EventBusName=BUS, EventPattern=json.dumps({"source": [{"prefix": "sewerbill."}]})
    )
    events.put_targets(Rule="capture", EventBusName=BUS, Targets=[{"Id": "q", "Arn": capture_arn}])
    return Stack(
        ddb=ddb,
        s3=s3,
        sqs=sqs,
        events=events,
        # botocore would route StreamArn calls to <account>.streams-ddb..., which moto does not mock.
        streams=boto3.client(
            "dynamodbstreams", region_name=REGION, config=Config(account_id_endpoint_mode="disabled")
        ),
        capture_queue_url=capture,
    )


def sqs_event(*bodies: str) -> dict[str, Any]:
    """A Lambda SQS event with one record per body (message ids ``m0``, ``m1``...)."""
    return {
        "Records": [
            {
                "messageId": f"m{i}",
                "receiptHandle": f"rh{i}",
                "body": body,
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "SentTimestamp": "1767225600000",
                    "SenderId": ACCOUNT,
                    "ApproximateFirstReceiveTimestamp": "1767225600000",
                },
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": f"arn:aws:sqs:{REGION}:{ACCOUNT}:queue",
                "awsRegion": REGION,
            }
            for i, body in enumerate(bodies)
        ]
    }


def eventbridge_body(event: Any) -> str:
    """What a rule on the bus delivers to a queue for a sewerbill event."""
    return json.dumps(
        {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": event.detail_type(),
            "source": event.SOURCE,
            "account": ACCOUNT,
            "time": "2026-10-01T12:00:00Z",
            "region": REGION,
            "resources": [],
            "detail": json.loads(event.detail_json()),
        }
    )


def object_created(key: str, etag: str, size: int, bucket: str = UPLOADS) -> dict[str, Any]:
    body = json.loads(fixture_text("s3.ObjectCreated.reads.json"))
    body["detail"]["bucket"]["name"] = bucket
    body["detail"]["object"].update({"key": key, "etag": etag, "size": size})
    body["id"] = str(uuid.uuid4())
    return body


def http_event(method: str, path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) event, as the local gateway builds them."""
    query = query or {}
    return {
        "version": "2.0",
        "routeKey": f"{method} {path}",
        "rawPath": path,
        "rawQueryString": "&".join(f"{k}={v}" for k, v in query.items()),
        "headers": {"accept": "application/json"},
        "queryStringParameters": query or None,
        "requestContext": {
            "accountId": ACCOUNT,
            "apiId": "portal",
            "domainName": "localhost",
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": "t",
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": f"{method} {path}",
            "stage": "$default",
            "time": "01/Oct/2026:12:00:00 +0000",
            "timeEpoch": 1790856000000,
        },
        "isBase64Encoded": False,
    }


class LambdaContext:
    """What Lambda passes as ``context`` (the attributes Powertools' Logger and Metrics read)."""

    def __init__(self, function_name: str = "test-function") -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{function_name}"
        self.memory_limit_in_mb = 512
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = "2026/10/01/[$LATEST]test"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def lambda_context(function_name: str = "test-function") -> LambdaContext:
    """A fresh context per invocation, as Lambda gives (handlers decorated with @observed need one)."""
    return LambdaContext(function_name)


def rejections(stack: Stack) -> list[dict[str, Any]]:
    """MessageRejected events a consumer recorded in its service's outbox (every table), shaped
    as the bus delivers them (``source``, ``detail-type``, ``detail``)."""
    found: list[dict[str, Any]] = []
    for service in TABLES:
        for item in stack.outbox(service):
            if item["detail_type"] == "MessageRejected":
                found.append(
                    {
                        "source": item["source"],
                        "detail-type": item["detail_type"],
                        "detail": json.loads(item["detail"]),
                    }
                )
    return found


def authorized_http_event(
    method: str,
    path: str,
    claims: dict[str, str],
    query: dict[str, str] | None = None,
    body: str | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``http_event`` with the JWT claims the authorizer passes (lists as "[a b]") and a body."""
    event = http_event(method, path, query)
    event["requestContext"]["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
    event["headers"].update(headers or {})
    if body is not None:
        event["body"] = body
        event["headers"]["content-type"] = "application/json"
    return event


def dynamodb_calls(monkeypatch: Any) -> list[str]:
    """The DynamoDB operations every client makes from here on, in order."""
    from botocore.client import BaseClient

    calls: list[str] = []
    real = BaseClient._make_api_call

    def counted(self: Any, operation: str, params: Any) -> Any:
        if self.meta.service_model.service_name == "dynamodb":
            calls.append(operation)
        return real(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", counted)
    return calls
