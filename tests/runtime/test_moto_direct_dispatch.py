"""A DynamoDB call handed to moto's handler directly answers, byte for byte, what moto's own
dispatch answers.

`motoshim._dynamodb_handler_direct` sets a `DynamoHandler`'s attributes from the request
instead of building moto's werkzeug `Request` and running `setup_class`; moto's
`call_action` then runs as shipped. Here every data-plane action the services use runs
twice, on two tables that see the same calls: once with the direct path and once with it
turned off (moto's `dispatch` on moto's `Request`, as before). The raw answers (status,
headers, body) must be the same, bar the random request id and a table name in a message.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto_support import make_indexed_table

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator

pytestmark = pytest.mark.integration

TABLE_NAMES = ("fast", "slow")  # the same length: the answers' sizes stay comparable


def item(n: int, **extra: Any) -> dict[str, Any]:
    return {"pk": {"S": f"P#{n}"}, "sk": {"S": "S"}, "v": {"S": f"v{n % 3}"}, "n": {"N": str(n)}, **extra}


KEY = {"pk": {"S": "P#1"}, "sk": {"S": "S"}}
NEW = "attribute_not_exists(pk)"


def calls(t: str) -> list[Callable[[Any], Any]]:
    """Each action as the services call it, with its errors, returned values and capacities."""
    return [
        lambda c: c.put_item(TableName=t, Item=item(1, m={"M": {"l": {"L": [{"S": "é漢"}]}}})),
        lambda c: c.put_item(
            TableName=t, Item=item(2), ConditionExpression=NEW, ReturnConsumedCapacity="TOTAL"
        ),
        # ConditionalCheckFailed, with the item it failed on
        lambda c: c.put_item(
            TableName=t, Item=item(1), ConditionExpression=NEW, ReturnValuesOnConditionCheckFailure="ALL_OLD"
        ),
        lambda c: c.put_item(TableName=t, Item=item(1), ConditionExpression=NEW),
        lambda c: c.put_item(
            TableName=t, Item=item(3), ReturnValues="ALL_OLD", ReturnConsumedCapacity="INDEXES"
        ),
        lambda c: c.put_item(TableName=t, Item=item(3, x={"S": "again"}), ReturnValues="ALL_OLD"),
        lambda c: c.put_item(TableName=t, Item=item(4, big={"S": "x" * 410_000})),  # over 400 KB: refused
        lambda c: c.put_item(TableName="missing", Item=item(5)),  # ResourceNotFound
        lambda c: c.put_item(TableName=t, Item={"pk": {"S": "no sort key"}}),  # ValidationException
        lambda c: c.put_item(TableName=t, Item=item(6, text={"S": "Smith & Sons"})),  # moto's own path
        lambda c: c.put_item(TableName=t, Item=item(7, b={"B": b"\x00\x01"})),  # binary: moto's own path
        lambda c: c.get_item(TableName=t, Key=KEY, ConsistentRead=True, ReturnConsumedCapacity="TOTAL"),
        lambda c: c.get_item(TableName=t, Key={"pk": {"S": "none"}, "sk": {"S": "S"}}),
        lambda c: c.get_item(
            TableName=t, Key=KEY, ProjectionExpression="#n, m.l[0]", ExpressionAttributeNames={"#n": "n"}
        ),
        lambda c: c.update_item(
            TableName=t,
            Key=KEY,
            UpdateExpression="SET n = n + :one, extra = :e",
            ExpressionAttributeValues={":one": {"N": "1"}, ":e": {"L": [{"S": "a"}]}},
            ReturnValues="UPDATED_OLD",
        ),
        lambda c: c.update_item(
            TableName=t,
            Key=KEY,
            UpdateExpression="REMOVE extra",
            ReturnValues="ALL_NEW",
            ReturnConsumedCapacity="TOTAL",
        ),
        lambda c: c.update_item(
            TableName=t,
            Key=KEY,
            UpdateExpression="SET n = :z",
            ConditionExpression="n = :nope",
            ExpressionAttributeValues={":z": {"N": "0"}, ":nope": {"N": "-1"}},
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        ),
        lambda c: c.update_item(TableName=t, Key=KEY, UpdateExpression="SET = broken"),  # a syntax error
        lambda c: c.batch_write_item(
            RequestItems={t: [{"PutRequest": {"Item": item(i)}} for i in range(10, 35)]},
            ReturnConsumedCapacity="TOTAL",
            ReturnItemCollectionMetrics="SIZE",
        ),
        lambda c: c.batch_write_item(
            RequestItems={t: [{"PutRequest": {"Item": item(40)}}] * 2}
        ),  # duplicates
        lambda c: c.batch_write_item(
            RequestItems={t: [{"DeleteRequest": {"Key": {"pk": {"S": "P#10"}, "sk": {"S": "S"}}}}]}
        ),
        lambda c: c.batch_get_item(
            RequestItems={
                t: {"Keys": [KEY, {"pk": {"S": "P#11"}, "sk": {"S": "S"}}], "ConsistentRead": True}
            },
            ReturnConsumedCapacity="TOTAL",
        ),
        lambda c: c.query(
            TableName=t,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "P#1"}},
            ReturnConsumedCapacity="TOTAL",
        ),
        lambda c: c.query(
            TableName=t,
            IndexName="by-v",
            KeyConditionExpression="v = :v",
            ExpressionAttributeValues={":v": {"S": "v1"}},
            Limit=4,
            ScanIndexForward=False,
        ),
        lambda c: c.query(
            TableName=t,
            IndexName="by-v",
            KeyConditionExpression="v = :v",
            FilterExpression="n > :n",
            ExpressionAttributeValues={":v": {"S": "v2"}, ":n": {"N": "20"}},
            Select="COUNT",
        ),
        lambda c: c.query(
            TableName=t, KeyConditionExpression="nope = :p", ExpressionAttributeValues={":p": {"S": "x"}}
        ),
        lambda c: c.scan(TableName=t, Limit=7, ReturnConsumedCapacity="TOTAL"),
        lambda c: c.scan(
            TableName=t, FilterExpression="n > :z", ExpressionAttributeValues={":z": {"N": "20"}}
        ),
        lambda c: c.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": t, "Item": item(50), "ConditionExpression": NEW}},
                {
                    "Update": {
                        "TableName": t,
                        "Key": KEY,
                        "UpdateExpression": "SET w = :w",
                        "ExpressionAttributeValues": {":w": {"S": "1"}},
                    }
                },
            ],
            ReturnConsumedCapacity="TOTAL",
        ),
        # TransactionCanceled, with a reason per action and the item the failed one saw
        lambda c: c.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": t, "Item": item(51), "ConditionExpression": NEW}},
                {
                    "ConditionCheck": {
                        "TableName": t,
                        "Key": KEY,
                        "ConditionExpression": NEW,
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                },
            ]
        ),
        lambda c: c.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": t, "Item": item(52)}},
                {"Delete": {"TableName": t, "Key": {"pk": {"S": "P#52"}, "sk": {"S": "S"}}}},
            ]
        ),  # two actions on one item: refused
        lambda c: c.transact_get_items(TransactItems=[{"Get": {"TableName": t, "Key": KEY}}]),
        lambda c: c.delete_item(
            TableName=t,
            Key={"pk": {"S": "P#2"}, "sk": {"S": "S"}},
            ReturnValues="ALL_OLD",
            ReturnConsumedCapacity="TOTAL",
        ),
        lambda c: c.delete_item(
            TableName=t,
            Key={"pk": {"S": "P#2"}, "sk": {"S": "S"}},
            ConditionExpression="attribute_exists(pk)",
        ),
    ]


def run(emulator: Emulator, table: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], int]:
    """The raw answers to `calls(table)` (status, headers, body), and how many went directly."""
    answers: list[Any] = []
    fast = {"n": 0}
    direct, handler_direct = motoshim._dynamodb_direct, motoshim._dynamodb_handler_direct

    def recorded(request: Any, body: Any) -> Any:
        answer = direct(request, body)
        if answer is not None:
            answers.append(answer)
        return answer

    def counted(request: Any, body: Any, action: str) -> Any:
        answer = handler_direct(request, body, action)
        fast["n"] += answer is not None
        return answer

    ddb = emulator.client("dynamodb")
    make_indexed_table(ddb, table)
    with monkeypatch.context() as patch:
        patch.setattr(motoshim, "_dynamodb_direct", recorded)
        patch.setattr(motoshim, "_dynamodb_handler_direct", counted)
        for call in calls(table):
            before = len(answers)
            try:
                call(ddb)
            except ClientError:
                pass
            assert len(answers) == before + 1  # one request each (no retry of a refusal)
    return [_normalised(answer, table) for answer in answers], fast["n"]


def _normalised(answer: tuple[int, dict[str, Any], Any], table: str) -> tuple[int, dict[str, Any], str]:
    status, headers, body = answer
    text = body.decode() if isinstance(body, bytes) else body
    headers = dict(headers)
    assert headers.pop("x-amzn-requestid")  # random in both
    crc = headers.pop("x-amz-crc32")  # moto's checksum of its own body
    assert crc == str(binascii.crc32(text.encode()))
    return status, headers, text.replace(table, "T")


def test_the_direct_path_answers_what_moto_s_dispatch_answers_byte_for_byte(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, went_direct = run(emulator, TABLE_NAMES[0], monkeypatch)
    with monkeypatch.context() as patch:
        patch.setattr(motoshim, "_dynamodb_handler_direct", lambda *_: None)
        slow, none_direct = run(emulator, TABLE_NAMES[1], monkeypatch)

    assert none_direct == 0
    # all but the binary item and the body with a "&" (moto's own path) went directly
    assert went_direct == len(calls("x")) - 2
    for i, (a, b) in enumerate(zip(fast, slow, strict=True)):
        assert a == b, f"call {i} answered differently"
    statuses = [status for status, _, _ in fast]
    bodies = [body for _, _, body in fast]
    # the comparison covers the refusals, not only successes
    assert statuses.count(400) >= 9
    assert '"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"' in bodies[2].replace(
        " ", ""
    )
    assert '"Item"' in bodies[2]  # ReturnValuesOnConditionCheckFailure
    assert "ResourceNotFoundException" in bodies[7]
    assert "TransactionCanceledException" in bodies[29] and "CancellationReasons" in bodies[29]
    assert '"ConsumedCapacity"' in bodies[1]


def test_the_direct_path_is_off_while_moto_runs_as_shipped(emulator: Emulator) -> None:
    ddb = emulator.client("dynamodb")
    make_indexed_table(ddb, "shipped")
    taken = {"n": 0}
    handler_direct = motoshim._dynamodb_handler_direct

    def counted(*args: Any) -> Any:
        taken["n"] += 1
        return handler_direct(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(motoshim, "_dynamodb_handler_direct", counted)
        with motoshim.shipped():
            ddb.put_item(TableName="shipped", Item=item(1))
        assert taken["n"] == 0
        ddb.put_item(TableName="shipped", Item=item(2))  # installed again: taken
        assert taken["n"] == 1
