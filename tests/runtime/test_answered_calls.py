"""A client's JSON calls to moto in the same process are answered without botocore's HTTP
request path (`worker.answered_by`: the runtime's own clients, the handlers' under
isolate="modules" and, over the pipe, a function worker's), and each answer is the one
botocore's normal path gives: the same parsed answer, binary attributes, errors raised as
the same `ClientError` with the same response (the item returned on a failed condition when
asked), the same pages. The normal path here is a client made without the handler, whose
requests go through `Endpoint.make_request` to the same moto (motoshim's before-send hook).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, ParamValidationError
from moto_support import make_indexed_table

from sewerbill.local import motoshim, worker
from sewerbill.local.emulator import Emulator

pytestmark = pytest.mark.integration

# Differ per call however the call is made: the request's id and the time of the answer.
PER_CALL = ("RequestId", "x-amzn-requestid", "date", "x-amz-crc32", "content-length")


def client(emulator: Emulator, service: str, answered: bool) -> Any:
    """A client of `emulator` whose calls are answered in place (`answered`) or sent through
    botocore's own request path."""
    session = boto3.Session(
        region_name=emulator.region,
        aws_access_key_id=emulator.credentials["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=emulator.credentials["AWS_SECRET_ACCESS_KEY"],
    )
    if not answered:
        session._session.unregister("creating-client-class", motoshim._answered_here)
    made = session.client(
        service,
        endpoint_url=emulator.endpoint_url,
        config=Config(retries={"max_attempts": 3, "mode": "standard"}),
    )
    assert any(c.__name__ == "AnsweredHere" for c in type(made).__mro__) is answered
    return made


def outcome(call: Any, table: str) -> Any:
    """What a call answered or raised, with what differs per call left out and the table's
    name replaced (each run has its own table)."""
    try:
        return "answer", normalise(call(), table)
    except ClientError as exc:
        return "raised", type(exc).__name__, str(exc).replace(table, "T"), normalise(exc.response, table)


def normalise(value: Any, table: str) -> Any:
    if isinstance(value, dict):
        return {k: normalise(v, table) for k, v in value.items() if k not in PER_CALL}
    if isinstance(value, list):
        return [normalise(v, table) for v in value]
    if isinstance(value, str):
        return value.replace(table, "T")
    return value


def dynamodb_calls(ddb: Any, table: str) -> list[Any]:
    key = {"pk": {"S": "P#1"}, "sk": {"S": "S"}}
    item = {**key, "b": {"B": b"\x00\xffbinary"}, "bs": {"BS": [b"a", b"\x01"]}, "n": {"N": "12.50"}}
    calls = [
        lambda: ddb.put_item(TableName=table, Item=item),  # a success, a binary attribute
        lambda: ddb.get_item(TableName=table, Key=key, ConsistentRead=True),  # the binary read back
        lambda: ddb.put_item(  # ConditionalCheckFailed, the item returned as asked
            TableName=table,
            Item=item,
            ConditionExpression="attribute_not_exists(pk)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        ),
        lambda: ddb.put_item(TableName=table, Item=item, ConditionExpression="attribute_not_exists(pk)"),
        lambda: ddb.get_item(TableName=table, Key={"pk": {"S": "P#1"}}),  # a validation error: no sort key
        lambda: ddb.query(
            TableName=table, KeyConditionExpression="pk = :p AND", ExpressionAttributeValues={}
        ),
        lambda: ddb.describe_table(TableName="no-such-table"),  # ResourceNotFound (moto's own path)
    ]
    answers = [outcome(call, table) for call in calls]
    for n in range(5):
        ddb.put_item(TableName=table, Item={"pk": {"S": "P#page"}, "sk": {"S": f"S#{n}"}, "v": {"S": str(n)}})
    pages = ddb.get_paginator("query").paginate(
        TableName=table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "P#page"}},
        PaginationConfig={"PageSize": 2},
    )
    answers.append(("pages", [normalise(page, table) for page in pages]))
    return answers


def answered_by(emulator: Emulator, ask: Any) -> boto3.Session:
    """A session whose clients are answered by ``ask``, as a function worker's are."""
    session = boto3.Session(
        region_name=emulator.region,
        aws_access_key_id=emulator.credentials["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=emulator.credentials["AWS_SECRET_ACCESS_KEY"],
    )
    session._session.unregister("creating-client-class", motoshim._answered_here)
    session._session.register("creating-client-class", worker.answered_by(ask))
    return session


def test_dynamodb_calls_answered_in_place_equal_botocore_s_normal_path(emulator: Emulator) -> None:
    answered, normal = client(emulator, "dynamodb", True), client(emulator, "dynamodb", False)
    make_indexed_table(answered, "answered")
    make_indexed_table(normal, "normalpth")
    sent: list[str] = []
    answered.meta.events.register("before-send", lambda request, **_: sent.append(request.url))

    here, there = dynamodb_calls(answered, "answered"), dynamodb_calls(normal, "normalpth")

    assert [a[0] for a in here] == [
        "answer",
        "answer",
        "raised",
        "raised",
        "raised",
        "raised",
        "raised",
        "pages",
    ]
    for i, (a, b) in enumerate(zip(here, there, strict=True)):
        assert a == b, f"call {i} answered differently"
    assert here[1][1]["Item"]["b"] == {"B": b"\x00\xffbinary"}  # bytes, as botocore parses a blob
    assert here[2][1] == "ConditionalCheckFailedException"
    assert here[2][3]["Item"]["n"] == {"N": "12.50"}  # the item, returned as asked
    assert "Item" not in here[3][3]
    assert here[4][3]["Error"]["Code"] == "ValidationException"
    assert [len(p["Items"]) for p in here[-1][1]] == [2, 2, 1]  # 5 items, pages of 2
    assert here[0][1]["ResponseMetadata"]["RetryAttempts"] == 0
    assert sent == []  # none went through botocore's request path


def test_other_json_services_answer_in_place_and_s3_keeps_botocore_s_path(emulator: Emulator) -> None:
    """SQS and EventBridge (JSON) are answered in place with the same answers; S3 (REST, its
    bodies streamed) goes through botocore's own path and still streams."""
    results = []
    for answered in (True, False):
        sqs, events = client(emulator, "sqs", answered), client(emulator, "events", answered)
        name = f"q-{answered}"
        url = sqs.create_queue(QueueName=name)["QueueUrl"]
        sqs.send_message(
            QueueUrl=url,
            MessageBody="hello",
            MessageAttributes={"k": {"DataType": "Binary", "BinaryValue": b"\x00"}},
        )
        got = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"])["Messages"][0]
        put = events.put_events(Entries=[{"Source": "s", "DetailType": "d", "Detail": "{}"}])
        missing = outcome(lambda sqs=sqs: sqs.get_queue_url(QueueName="no-such-queue"), name)
        results.append(
            (
                got["Body"],
                got["MessageAttributes"],
                got["MD5OfBody"],
                put["FailedEntryCount"],
                missing,
                normalise(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"]), name),
            )
        )
    assert results[0] == results[1]
    assert results[0][1]["k"]["BinaryValue"] == b"\x00"
    assert results[0][4][1] == "QueueDoesNotExist"

    s3 = client(emulator, "s3", True)
    sent: list[str] = []
    s3.meta.events.register("before-send", lambda request, **_: sent.append(request.method))
    s3.create_bucket(Bucket="answered-bucket")
    s3.put_object(Bucket="answered-bucket", Key="k", Body=b"x" * 100_000)
    body = s3.get_object(Bucket="answered-bucket", Key="k")["Body"]
    assert b"".join(body.iter_chunks(4096)) == b"x" * 100_000
    assert sent == ["PUT", "PUT", "GET"]


def test_a_worker_s_calls_answer_through_the_runtime_as_in_place(emulator: Emulator) -> None:
    """A worker's `ask` (here the runtime's answer to its pipe message, `_aws_call`, after a
    pickle round trip) gives the answers the in-place client gives."""
    import pickle

    from sewerbill.local.invoker import _aws_call

    asked: list[str] = []

    def ask(method: str, url: str, headers: dict[str, str], body: bytes) -> Any:
        asked.append(headers.get("X-Amz-Target", ""))
        return pickle.loads(
            pickle.dumps(_aws_call(*pickle.loads(pickle.dumps((method, url, headers, body)))))
        )

    session = answered_by(emulator, ask)
    via_pipe = session.client("dynamodb", endpoint_url=emulator.endpoint_url)
    make_indexed_table(client(emulator, "dynamodb", True), "viapipe")
    make_indexed_table(client(emulator, "dynamodb", True), "inplace")

    here = dynamodb_calls(via_pipe, "viapipe")
    there = dynamodb_calls(client(emulator, "dynamodb", True), "inplace")

    assert here == there
    assert asked.count("DynamoDB_20120810.PutItem") == 3 + 5


def test_a_call_the_runtime_does_not_answer_or_fails_goes_botocore_s_own_way(emulator: Emulator) -> None:
    """`ask` answering None (another endpoint, or IAM authorisation on) or a 5xx (moto
    failing, which botocore's retry handler would retry) leaves the call to botocore's own
    request path, which sends it (here to the same moto, through motoshim's before-send)."""
    answers: Iterator[Any] = iter([None, (500, {}, b'{"__type":"InternalFailure"}')])
    asked: list[str] = []

    def ask(method: str, url: str, headers: dict[str, str], body: bytes) -> Any:
        asked.append(headers["X-Amz-Target"])
        return next(answers)

    session = answered_by(emulator, ask)
    ddb = session.client("dynamodb", endpoint_url=emulator.endpoint_url)
    make_indexed_table(client(emulator, "dynamodb", True), "fallback")
    sent: list[str] = []
    ddb.meta.events.register(
        "before-send", lambda request, **_: sent.append(request.headers["X-Amz-Target"].decode())
    )

    tables = ddb.list_tables()["TableNames"]
    described = ddb.describe_table(TableName=tables[0])["Table"]["TableName"]

    assert described == tables[0]
    assert asked == ["DynamoDB_20120810.ListTables", "DynamoDB_20120810.DescribeTable"]
    assert sent == asked  # both sent again by botocore's request path


def test_a_function_worker_s_json_calls_skip_botocore_s_request_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the local runtime (functions in processes): the upload's chain runs as before,
    and the workers' DynamoDB and EventBridge calls reach the runtime as botocore serialized
    them, without botocore's request path (which adds its ``amz-sdk-invocation-id`` header
    on the way); S3's calls keep that path."""
    from conftest import FIXTURES, START
    from sewerbill.local import LocalRuntime

    reached: list[tuple[str, bool]] = []
    answer = motoshim._answer_in_process

    def counted(method: str, url: str, headers: Any, body: Any) -> Any:
        target = headers.get("X-Amz-Target") or "s3"
        reached.append((target, "amz-sdk-invocation-id" in {k.lower() for k in headers}))
        return answer(method, url, headers, body)

    monkeypatch.setattr(motoshim, "_answer_in_process", counted)
    with LocalRuntime.start(
        FIXTURES / "template.yaml", start_time=START, stack_name="answered", isolate="process", gateway=False
    ) as rt:
        reached.clear()
        rt.upload("UploadsBucket", "reads/2025-01.csv", b"meter,gal\nm1,100\n")
        assert [i.error for i in rt.invocations] == [None] * len(rt.invocations)

    json_calls = [(t, through) for t, through in reached if t != "s3"]
    assert ("DynamoDB_20120810.PutItem", False) in json_calls
    assert ("AWSEvents.PutEvents", False) in json_calls
    assert all(not through for _, through in json_calls)
    assert ("s3", True) in reached


def test_an_answered_client_resolves_an_endpoint_once_per_call_s_parameters_as_botocore_would(
    emulator: Emulator,
) -> None:
    """A client answered in place keeps the endpoint its ruleset gave for a call's parameters
    (`worker.resolved_endpoint`): the same answer as botocore's resolution for every call,
    resolved once for a call made again with the same parameters, again for other parameters
    or when a handler can customise the resolution (a Stubber's, S3's)."""
    ddb = client(emulator, "dynamodb", answered=True)
    plain = client(emulator, "dynamodb", answered=False)
    make_indexed_table(ddb, "ep")
    resolved: list[str] = []
    construct = ddb._ruleset_resolver.construct_endpoint

    def counted(operation_model: Any, **kwargs: Any) -> Any:
        resolved.append(operation_model.name)
        return construct(operation_model=operation_model, **kwargs)

    ddb._ruleset_resolver.construct_endpoint = counted
    key = {"pk": {"S": "P#1"}, "sk": {"S": "S"}}
    for _ in range(3):
        ddb.get_item(TableName="ep", Key=key)
    ddb.get_item(TableName="ep", Key={"pk": {"S": "P#2"}, "sk": {"S": "S"}})
    ddb.put_item(TableName="ep", Item=key)
    ddb.get_item(TableName="ep", Key=key)
    assert resolved == ["GetItem", "GetItem", "PutItem"]  # the repeated GetItem: once

    for name, params in (
        ("GetItem", {"TableName": "ep", "Key": key}),
        ("Query", {"TableName": "ep", "KeyConditionExpression": "pk = :p"}),
        ("BatchGetItem", {"RequestItems": {"ep": {"Keys": [key]}}}),
    ):
        model = ddb._service_model.operation_model(name)
        for ignore_signing_region in (False, True):
            mine, theirs = {}, {}
            ours = ddb._resolve_endpoint_ruleset(model, params, mine, ignore_signing_region)
            ours_again = ddb._resolve_endpoint_ruleset(model, params, mine, ignore_signing_region)
            botocore_s = plain._resolve_endpoint_ruleset(model, params, theirs, ignore_signing_region)
            assert ours == ours_again == botocore_s
            assert mine == theirs  # the request's context: left as botocore's resolution leaves it

    # A handler that may change the builtins: every call resolved, as botocore does.
    seen: list[str] = []
    ddb.meta.events.register(
        "before-endpoint-resolution.dynamodb", lambda model, **_: seen.append(model.name)
    )
    resolved.clear()
    ddb.get_item(TableName="ep", Key=key)
    ddb.get_item(TableName="ep", Key=key)
    assert resolved == seen == ["GetItem", "GetItem"]


def test_an_answered_client_serializes_a_call_s_parameters_once_into_botocore_s_request(
    emulator: Emulator,
) -> None:
    """A client answered in place keeps the request botocore's validation and serializer made
    for a call's parameters (`worker.KeptSerializations`): each call's request is the one
    botocore's own client makes for it, repeated or not, a repeated call is not validated
    and serialized again, and parameters that fail validation raise botocore's error each time."""
    ddb = client(emulator, "dynamodb", answered=True)
    plain = client(emulator, "dynamodb", answered=False)
    make_indexed_table(ddb, "ser")
    key = {"pk": {"S": "P#1"}, "sk": {"S": "S"}}
    calls = [
        ("GetItem", {"TableName": "ser", "Key": key}),
        ("GetItem", {"TableName": "ser", "Key": key}),
        ("GetItem", {"TableName": "ser", "Key": key, "ConsistentRead": True}),
        ("PutItem", {"TableName": "ser", "Item": {**key, "b": {"B": b"\x00\xff"}, "n": {"N": "1.5"}}}),
        ("PutItem", {"TableName": "ser", "Item": {**key, "b": {"B": b"\x00\xff"}, "n": {"N": "1.5"}}}),
        (
            "Query",
            {
                "TableName": "ser",
                "KeyConditionExpression": "pk = :p",
                "ExpressionAttributeValues": {":p": {"S": "P#1"}},
            },
        ),
    ]
    serialized: list[str] = []
    for name, params in calls:
        model = ddb._service_model.operation_model(name)
        botocore_s = plain._convert_to_request_dict(params, model, emulator.endpoint_url, context={})
        ours = ddb._convert_to_request_dict(params, model, emulator.endpoint_url, context={})
        assert {k: v for k, v in ours.items() if k != "context"} == {
            k: v for k, v in botocore_s.items() if k != "context"
        }
        ours["headers"]["X-Changed"] = "by the caller"  # the kept request is not changed
        again = ddb._convert_to_request_dict(params, model, emulator.endpoint_url, context={})
        assert "X-Changed" not in again["headers"]
        assert again["body"] == botocore_s["body"]

    counted = ddb._serializer.serializer.serialize_to_request

    def counting(parameters: Any, operation_model: Any) -> Any:
        serialized.append(operation_model.name)
        return counted(parameters, operation_model)

    ddb._serializer.serializer.serialize_to_request = counting
    ddb.get_item(TableName="ser", Key={"pk": {"S": "P#9"}, "sk": {"S": "S"}})
    ddb.get_item(TableName="ser", Key={"pk": {"S": "P#9"}, "sk": {"S": "S"}})
    ddb.get_item(TableName="ser", Key=key)  # made above
    assert serialized == ["GetItem"]  # the new key only: the repeated call and `key`'s were kept
    # A batch (parameters past KEPT_PARAMETERS_MAX pickled) is serialized every time and not
    # kept: it never comes again, and keeping it would cost memory for nothing.
    batch = {
        "ser": [
            {"PutRequest": {"Item": {"pk": {"S": f"B#{i}"}, "sk": {"S": f"{i:03d}" + "x" * 400}}}}
            for i in range(25)
        ]
    }
    kept_before = len(ddb._serializer.kept)
    ddb.batch_write_item(RequestItems=batch)
    ddb.batch_write_item(RequestItems=batch)
    assert serialized == ["GetItem", "BatchWriteItem", "BatchWriteItem"]
    assert len(ddb._serializer.kept) == kept_before

    for _ in range(2):  # a validation error, raised as botocore raises it, every time
        with pytest.raises(ParamValidationError) as ours_error:
            ddb.get_item(TableName="ser", Key={"pk": {"Z": "bad"}})
        with pytest.raises(ParamValidationError) as botocore_error:
            plain.get_item(TableName="ser", Key={"pk": {"Z": "bad"}})
        assert str(ours_error.value) == str(botocore_error.value)


def test_a_batch_s_parameters_are_never_kept_nor_pickled(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of items or keys never comes again (`worker.NEVER_KEPT`): even a small one is
    resolved and serialized every time, as botocore does, without pickling its parameters to
    look it up; its request and endpoint are botocore's own."""
    ddb = client(emulator, "dynamodb", answered=True)
    plain = client(emulator, "dynamodb", answered=False)
    make_indexed_table(ddb, "nb")
    pickled: list[Any] = []
    dumps = worker.pickle.dumps

    def counted(value: Any, *args: Any, **kwargs: Any) -> bytes:
        pickled.append(value)
        return dumps(value, *args, **kwargs)

    monkeypatch.setattr(worker.pickle, "dumps", counted)
    key = {"pk": {"S": "P#1"}, "sk": {"S": "S"}}
    kept = len(ddb._serializer.kept)
    endpoints = dict(ddb.__dict__.get("_endpoints_resolved", {}))
    for _ in range(2):
        ddb.batch_get_item(RequestItems={"nb": {"Keys": [key]}})
        ddb.batch_write_item(RequestItems={"nb": [{"PutRequest": {"Item": key}}]})
    assert pickled == [] and len(ddb._serializer.kept) == kept
    assert ddb.__dict__.get("_endpoints_resolved", {}) == endpoints
    model = ddb._service_model.operation_model("BatchGetItem")
    params = {"RequestItems": {"nb": {"Keys": [key]}}}
    ours = ddb._convert_to_request_dict(params, model, emulator.endpoint_url, context={})
    theirs = plain._convert_to_request_dict(params, model, emulator.endpoint_url, context={})
    assert {k: v for k, v in ours.items() if k != "context"} == {
        k: v for k, v in theirs.items() if k != "context"
    }
    ddb.get_item(TableName="nb", Key=key)  # a small call is still kept, so pickled
    assert pickled
