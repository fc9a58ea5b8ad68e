"""`common.dynamo.bulk_client` puts plain items (no binary value) in a request as they are and
answers plain items as DynamoDB sent them, instead of botocore's walk of the model (issue 7):
the request bodies must be botocore's byte for byte and the parsed answers equal to botocore's,
for every attribute type, binary ones (botocore's own path) included."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from tests.common.test_dynamo_items import VALUES

from common.dynamo import BULK_CLIENT, bulk_client, plain_wire, to_item

PLAIN = {k: v for k, v in VALUES.items() if k not in ("bytes", "binary")}
NESTED_BINARY = {"pk": {"S": "P"}, "l": {"L": [{"S": "x"}, {"M": {"b": {"B": b"\x00"}}}]}}


def _clients() -> tuple[Any, Any]:
    kwargs: dict[str, Any] = {
        "region_name": "us-east-1",
        "aws_access_key_id": "k",
        "aws_secret_access_key": "s",
    }
    botocores = boto3.client("dynamodb", config=BULK_CLIENT, **kwargs)
    return botocores, plain_wire(boto3.client("dynamodb", config=BULK_CLIENT, **kwargs))


def _body(client: Any, operation: str, params: dict[str, Any]) -> bytes:
    model = client.meta.service_model.operation_model(operation)
    return client._serializer.serialize_to_request(params, model)["body"]


def _parsed(client: Any, operation: str, answer: dict[str, Any]) -> Any:
    model = client.meta.service_model.operation_model(operation)
    parser = client._endpoint._response_parser_factory.create_parser("json")
    response = {"body": json.dumps(answer).encode(), "headers": {}, "status_code": 200, "context": {}}
    return parser.parse(response, model.output_shape)


@pytest.mark.parametrize(
    "item",
    [to_item(PLAIN), to_item(VALUES), NESTED_BINARY, {"pk": {"S": "P"}, "both": {"S": "a", "N": "1"}}],
    ids=["plain", "with-binary", "nested-binary", "two-tags"],
)
def test_a_batch_write_and_a_batch_get_send_what_botocore_sends(item: dict[str, Any]) -> None:
    botocores, ours = _clients()
    write = {"RequestItems": {"t": [{"PutRequest": {"Item": item}}, {"DeleteRequest": {"Key": item}}]}}
    get = {"RequestItems": {"t": {"Keys": [item, {"pk": {"S": "Q"}}], "ConsistentRead": True}}}
    put = {"TableName": "t", "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}
    for operation, params in (("BatchWriteItem", write), ("BatchGetItem", get), ("PutItem", put)):
        assert _body(ours, operation, params) == _body(botocores, operation, params)


def test_answers_are_parsed_as_botocore_parses_them_binary_and_nulls_included() -> None:
    botocores, ours = _clients()
    plain = json.loads(json.dumps(to_item(PLAIN), default=str)) | {"null": {"NULL": True}}
    plain["list"]["L"].append(None)  # a sparse list's null stays a null
    binary = json.loads(_body(botocores, "PutItem", {"TableName": "t", "Item": to_item(VALUES)}))["Item"]
    answer = {"Responses": {"t": [plain, binary]}, "UnprocessedKeys": {"t": {"Keys": [{"pk": {"S": "Q"}}]}}}
    ours_parsed = _parsed(ours, "BatchGetItem", answer)
    assert ours_parsed == _parsed(botocores, "BatchGetItem", answer)
    assert ours_parsed["Responses"]["t"][1]["bytes"] == {"B": b"\x00\x01"}  # decoded by botocore's path
    item = {"Item": plain}
    assert _parsed(ours, "GetItem", item) == _parsed(botocores, "GetItem", item)


def test_odd_answers_take_botocores_own_path() -> None:
    botocores, ours = _clients()
    for odd in ({"S": "a", "N": "1"}, {"S": None}, {"X": "unknown"}, {"L": [{"B": "AAE="}]}):
        answer = {"Item": {"pk": {"S": "P"}, "odd": odd}}
        assert _parsed(ours, "GetItem", answer) == _parsed(botocores, "GetItem", answer)


def test_a_plain_item_is_not_walked_member_by_member(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of it: botocore walks every attribute value of a plain item (21 here, the
    map's and the list's members included) once to send it and once to read it; ours none."""
    from botocore.parsers import BaseJSONParser
    from botocore.serialize import JSONSerializer

    walked: list[str] = []
    send, read = JSONSerializer._serialize_type_structure, BaseJSONParser._handle_structure
    monkeypatch.setattr(
        JSONSerializer,
        "_serialize_type_structure",
        lambda self, out, value, shape, key: walked.append(shape.name) or send(self, out, value, shape, key),
    )
    monkeypatch.setattr(
        BaseJSONParser,
        "_handle_structure",
        lambda self, shape, value: walked.append(shape.name) or read(self, shape, value),
    )
    botocores, ours = _clients()
    item = to_item(PLAIN)
    answer = {"Item": json.loads(_body(botocores, "PutItem", {"TableName": "t", "Item": item}))["Item"]}
    for client, expected in ((botocores, 2 * 21), (ours, 0)):
        walked.clear()
        _body(client, "PutItem", {"TableName": "t", "Item": item})
        _parsed(client, "GetItem", answer)
        assert walked.count("AttributeValue") == expected


def test_the_bulk_client_has_the_plain_wire_and_no_client_side_validation_wrapped_around_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    client = bulk_client()
    assert type(client._serializer).__name__ == "_PlainWireSerializer"
    assert type(client._endpoint._response_parser_factory).__name__ == "_PlainWireParsers"


def test_the_services_reading_client_keeps_botocore_s_validation_and_reads_plain_answers_as_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`plain_answers_client` (the daily runs' marks): botocore's validation and serializer
    as they are, so a bad call raises botocore's error and a request is botocore's; its
    answers parsed as botocore parses them, a plain item without the walk."""
    from botocore.exceptions import ParamValidationError

    from common.dynamo import plain_answers_client

    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    ours, botocores = plain_answers_client(), boto3.client("dynamodb")
    assert type(ours._serializer) is type(botocores._serializer)  # validation wrapped as botocore wraps it
    assert type(ours._endpoint._response_parser_factory).__name__ == "_PlainWireParsers"
    with pytest.raises(ParamValidationError):
        ours.get_item(TableName="t", Key={"pk": {"Z": "not a type"}})
    put = {"TableName": "t", "Item": to_item(VALUES)}
    assert _body(ours, "PutItem", put) == _body(botocores, "PutItem", put)
    plain = json.loads(json.dumps(to_item(PLAIN), default=str))
    for answer in ({"Item": plain}, {"Item": json.loads(_body(botocores, "PutItem", put))["Item"]}, {}):
        assert _parsed(ours, "GetItem", answer) == _parsed(botocores, "GetItem", answer)
