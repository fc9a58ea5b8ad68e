"""The runtime's fast paths in moto answer exactly what moto as shipped answers.

`motoshim` reads DynamoDB data-plane requests with `json.loads`, writes their answers with
`json.dumps`, builds items without re-summing their size per attribute, lets a Query on
the table's key read its partition only, and hands a DynamoDB request of this process to
moto's handler without its Flask application. Here the same
calls run against moto with the shim and against moto as shipped (`motoshim.uninstall()`),
and botocore's parsed answers, errors included, must be equal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto_support import make_indexed_table, make_table

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator

pytestmark = pytest.mark.integration


def every_kind(n: int) -> dict[str, Any]:
    return {
        "pk": {"S": f"P#{n}"},
        "sk": {"S": "S"},
        "n": {"N": "12.50"},
        "big": {"N": "12345678901234567890123456789012345678"},
        "b": {"B": b"\x00\x01binary"},
        "bs": {"BS": [b"a", b"b"]},
        "ss": {"SS": ["x", "y"]},
        "ns": {"NS": ["1", "2.5"]},
        "flag": {"BOOL": True},
        "none": {"NULL": True},
        "m": {"M": {"l": {"L": [{"S": "\u00e9\u6f22"}, {"N": "-0.001"}, {"M": {}}]}}},
    }


def plain(n: int) -> dict[str, Any]:
    return {"pk": {"S": f"P#{n}"}, "sk": {"S": "S"}, "v": {"S": "x" * n}, "n": {"N": str(n)}}


def calls(table: str) -> list[Callable[[Any], Any]]:
    t = table
    key = {"pk": {"S": "P#1"}, "sk": {"S": "S"}}
    return [
        lambda c: c.put_item(TableName=t, Item=every_kind(1), ReturnConsumedCapacity="TOTAL"),
        lambda c: c.put_item(TableName=t, Item=plain(2)),
        lambda c: c.put_item(TableName=t, Item=plain(2), ConditionExpression="attribute_not_exists(pk)"),
        lambda c: c.put_item(TableName=t, Item=plain(3), ReturnValues="ALL_OLD"),
        lambda c: c.put_item(TableName=t, Item={**plain(4), "huge": {"S": "x" * 410_000}}),
        lambda c: c.get_item(TableName=t, Key=key, ConsistentRead=True),
        lambda c: c.get_item(TableName=t, Key={"pk": {"S": "none"}, "sk": {"S": "S"}}),
        lambda c: c.update_item(
            TableName=t,
            Key=key,
            UpdateExpression="SET n = n + :one, extra = :e",
            ExpressionAttributeValues={":one": {"N": "1"}, ":e": {"L": [{"S": "a"}]}},
            ReturnValues="ALL_NEW",
        ),
        lambda c: c.batch_write_item(
            RequestItems={t: [{"PutRequest": {"Item": plain(i)}} for i in range(10, 35)]},
            ReturnConsumedCapacity="TOTAL",
        ),
        lambda c: c.batch_write_item(RequestItems={t: [{"PutRequest": {"Item": plain(40)}}] * 2}),
        lambda c: c.batch_get_item(
            RequestItems={t: {"Keys": [key, {"pk": {"S": "P#10"}, "sk": {"S": "S"}}], "ConsistentRead": True}}
        ),
        lambda c: c.query(
            TableName=t,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "P#1"}},
            ReturnConsumedCapacity="TOTAL",
        ),
        lambda c: c.batch_write_item(
            RequestItems={
                t: [
                    {
                        "PutRequest": {
                            "Item": {"pk": {"S": "P#many"}, "sk": {"S": f"S#{i:03d}"}, "v": {"S": "x"}}
                        }
                    }
                    for i in range(25)
                ]
            }
        ),
        lambda c: c.query(
            TableName=t,
            KeyConditionExpression="pk = :p AND begins_with(sk, :s)",
            ExpressionAttributeValues={":p": {"S": "P#many"}, ":s": {"S": "S#01"}},
            ScanIndexForward=False,
        ),
        lambda c: c.query(
            TableName=t,
            KeyConditionExpression="pk = :p AND sk BETWEEN :a AND :b",
            ExpressionAttributeValues={":p": {"S": "P#many"}, ":a": {"S": "S#003"}, ":b": {"S": "S#020"}},
            Limit=5,
            ExclusiveStartKey={"pk": {"S": "P#many"}, "sk": {"S": "S#007"}},
        ),
        lambda c: c.query(
            TableName=t,
            IndexName="by-v",
            KeyConditionExpression="v = :v",
            ExpressionAttributeValues={":v": {"S": "x"}},
            Limit=30,
        ),
        lambda c: c.query(
            TableName=t, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "none"}}
        ),
        lambda c: c.scan(TableName=t, Limit=7),
        lambda c: c.scan(
            TableName=t, FilterExpression="n > :z", ExpressionAttributeValues={":z": {"N": "20"}}
        ),
        lambda c: c.query(
            TableName=t, KeyConditionExpression="nope = :p", ExpressionAttributeValues={":p": {"S": "x"}}
        ),
        lambda c: c.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": t, "Item": plain(50)}},
                {"Update": {"TableName": t, "Key": key, "UpdateExpression": "REMOVE extra"}},
            ]
        ),
        lambda c: c.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": t, "Item": plain(51)}},
                {
                    "ConditionCheck": {
                        "TableName": t,
                        "Key": key,
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        ),
        lambda c: c.transact_get_items(TransactItems=[{"Get": {"TableName": t, "Key": key}}]),
        lambda c: c.delete_item(
            TableName=t, Key={"pk": {"S": "P#2"}, "sk": {"S": "S"}}, ReturnValues="ALL_OLD"
        ),
        # a Query's items are not copied when it neither projects nor reads an index: the
        # same answers with a filter, a projection, and after the items it returned changed
        lambda c: c.query(
            TableName=t,
            KeyConditionExpression="pk = :p",
            FilterExpression="v >= :v",
            ExpressionAttributeValues={":p": {"S": "P#many"}, ":v": {"S": "x"}},
            Limit=10,
        ),
        lambda c: c.query(
            TableName=t,
            KeyConditionExpression="pk = :p",
            ProjectionExpression="sk, m.l[0], ns",
            ExpressionAttributeValues={":p": {"S": "P#1"}},
        ),
        lambda c: c.update_item(
            TableName=t,
            Key=key,
            UpdateExpression="SET m.l[0] = :x REMOVE ns",
            ExpressionAttributeValues={":x": {"S": "changed"}},
        ),
        lambda c: c.query(
            TableName=t, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "P#1"}}
        ),
    ]


def outcome(call: Callable[[Any], Any], client: Any, table: str) -> Any:
    try:
        answer = call(client)
    except ClientError as exc:
        return (
            "error",
            exc.response["Error"]["Code"],
            exc.response["Error"].get("Message", "").replace(table, "T"),
            exc.response["ResponseMetadata"]["HTTPStatusCode"],
        )
    assert answer.pop("ResponseMetadata")["HTTPStatusCode"] == 200
    return _normalise(answer, table)


# Differ between any two runs of moto: ids, times, iterators, and SizeBytes (moto measures the
# record's JSON, time stamp included, so its length moves with the clock's microseconds).
IRREPRODUCIBLE = (
    "eventID",
    "ApproximateCreationDateTime",
    "NextShardIterator",
    "LastEvaluatedKey",
    "SizeBytes",
)


def _normalise(value: Any, table: str) -> Any:
    if isinstance(value, dict):
        return {
            (k.replace(table, "T") if isinstance(k, str) else k): _normalise(v, table)
            for k, v in value.items()
            if k not in IRREPRODUCIBLE
        }
    if isinstance(value, list):
        return [_normalise(v, table) for v in value]
    if isinstance(value, str):
        return value.replace(table, "T")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (type(value).__name__, value)  # 1 and 1.0 are different answers on the wire
    return value


def run(emulator: Emulator, table: str) -> list[Any]:
    ddb = emulator.client("dynamodb")
    make_indexed_table(ddb, table)
    answers = [outcome(call, ddb, table) for call in calls(table)]
    streams = emulator.client("dynamodbstreams")
    arn = ddb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")
    records = streams.get_records(ShardIterator=iterator["ShardIterator"])
    answers.append(_normalise({"Records": records["Records"]}, table))
    return answers


def test_the_fast_paths_answer_what_moto_as_shipped_answers(emulator: Emulator) -> None:
    fast = run(emulator, "fast-json")  # names of its own: the emulator fixture is shared
    with motoshim.shipped():
        shipped = run(emulator, "shipped-json")

    assert len(fast) == len(shipped) == len(calls("x")) + 1
    for i, (a, b) in enumerate(zip(fast, shipped, strict=True)):
        assert a == b, f"call {i} answered differently"
    # the comparison covers errors and the stream, not only successes
    assert ("error", "ConditionalCheckFailedException") == fast[2][:2]
    assert fast[4][:2] == ("error", "ValidationException")  # over 400 KB, refused by moto's own check
    assert fast[-1]["Records"][0]["dynamodb"]["NewImage"]["b"] == {"B": b"\x00\x01binary"}


def test_the_fast_paths_are_in_place_only_while_installed(emulator: Emulator) -> None:
    import moto.core.responses
    from moto.core.responses import BaseResponse

    assert BaseResponse.serialized is motoshim._serialized
    assert moto.core.responses.method_names_from_class is motoshim._method_names_from_class
    with motoshim.shipped():
        assert BaseResponse.serialized is not motoshim._serialized
        assert moto.core.responses.method_names_from_class is not motoshim._method_names_from_class


# --- the runtime's own SQS calls, on moto's backend directly (motoshim.DirectSqs) ------------------
_STAMPS = ("SentTimestamp", "ApproximateFirstReceiveTimestamp")


def _sqs_normalise(answer: Any, ids: dict[str, str]) -> Any:
    """Message ids, receipt handles and FIFO sequence numbers are random and timestamps are the clock's: name them
    by order of appearance and keep only that a timestamp is there."""
    if isinstance(answer, dict):
        out = {}
        for k, v in answer.items():
            if k == "ResponseMetadata":
                continue
            if k in ("MessageId", "ReceiptHandle", "SequenceNumber"):
                v = ids.setdefault(v, f"{k}-{len(ids)}")
            elif k in _STAMPS:
                v = v.isdigit()
            else:
                v = _sqs_normalise(v, ids)
            out[k] = v
        return out
    if isinstance(answer, list):
        return [_sqs_normalise(v, ids) for v in answer]
    return answer


def sqs_scenario(emulator: Emulator, sqs: Any, suffix: str) -> list[Any]:
    """Sends, receives (visibility timeout, receive counts), deletes, visibility changes, a
    redrive to the dead-letter queue after maxReceiveCount, a FIFO group held while its
    message is in flight, message attributes of every type, queue counts and errors."""
    api = emulator.client("sqs")
    dlq = api.create_queue(QueueName=f"dlq-{suffix}")["QueueUrl"]
    dlq_arn = api.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    queue = api.create_queue(
        QueueName=f"work-{suffix}",
        Attributes={
            "VisibilityTimeout": "30",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "2"}),
        },
    )["QueueUrl"]
    fifo = api.create_queue(QueueName=f"work-{suffix}.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    answers: list[Any] = []
    ids: dict[str, str] = {}

    def record(call: Callable[[], Any]) -> Any:
        try:
            got = call()
        except ClientError as exc:
            got = ("error", exc.response["Error"]["Code"])
        answers.append(_sqs_normalise(got, ids))
        return got

    def receive(url: str, **extra: Any) -> Any:
        args = {"QueueUrl": url, "MaxNumberOfMessages": 10, "AttributeNames": ["All"]}
        args.update(MessageAttributeNames=["All"], WaitTimeSeconds=0, **extra)
        return record(lambda: sqs.receive_message(**args))

    def counts(url: str) -> Any:
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        return record(lambda: sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names))

    for n in range(3):
        record(lambda n=n: sqs.send_message(QueueUrl=queue, MessageBody=f'{{"n": {n}, "\u00e9": true}}'))
    record(
        lambda: sqs.send_message(
            QueueUrl=queue,
            MessageBody="with attributes",
            MessageAttributes={
                "s": {"DataType": "String", "StringValue": "x\u00e9"},
                "n": {"DataType": "Number", "StringValue": "12.5"},
                "b": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
            },
        )
    )
    counts(queue)
    first = receive(queue)["Messages"]
    counts(queue)
    receive(queue)  # all in flight: nothing
    entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(first)]
    record(lambda: sqs.delete_message_batch(QueueUrl=queue, Entries=entries[:1]))
    again = [dict(e, VisibilityTimeout=0) for e in entries[1:]]
    record(lambda: sqs.change_message_visibility_batch(QueueUrl=queue, Entries=again))
    second = receive(queue)["Messages"]  # received twice now: maxReceiveCount reached
    record(
        lambda: sqs.change_message_visibility_batch(
            QueueUrl=queue,
            Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                for i, m in enumerate(second)
            ],
        )
    )
    receive(queue)  # a third receive moves them to the dead-letter queue
    counts(dlq)
    peeked = receive(dlq, VisibilityTimeout=30)["Messages"]
    record(lambda: sqs.delete_message_batch(QueueUrl=queue, Entries=entries[:1]))  # a stale handle: Failed
    record(
        lambda: sqs.change_message_visibility_batch(
            QueueUrl=dlq,
            Entries=[{"Id": "0", "ReceiptHandle": peeked[0]["ReceiptHandle"], "VisibilityTimeout": 0}],
        )
    )
    for group, dedupe in (("g1", "a"), ("g1", "b"), ("g2", "c"), ("g1", "a")):  # the last one a duplicate
        record(
            lambda group=group, dedupe=dedupe: sqs.send_message(
                QueueUrl=fifo, MessageBody=dedupe, MessageGroupId=group, MessageDeduplicationId=dedupe
            )
        )
    held = receive(fifo, MaxNumberOfMessages=1)["Messages"]
    receive(fifo)  # g1 is in flight: only g2's message
    record(
        lambda: sqs.delete_message_batch(
            QueueUrl=fifo, Entries=[{"Id": "x", "ReceiptHandle": held[0]["ReceiptHandle"]}]
        )
    )
    receive(fifo)
    record(lambda: sqs.send_message(QueueUrl=fifo, MessageBody="no group"))  # refused by moto
    record(lambda: sqs.receive_message(QueueUrl=queue + "-missing", MaxNumberOfMessages=1))
    record(lambda: sqs.get_queue_attributes(QueueUrl=queue + "-missing", AttributeNames=["All"]))
    return answers


def test_the_runtime_s_direct_sqs_calls_answer_what_the_api_answers(emulator: Emulator) -> None:
    from sewerbill.local.motoshim import DirectSqs

    api = emulator.client("sqs")
    account = emulator.client("sts").get_caller_identity()["Account"]
    through_api = sqs_scenario(emulator, api, "api")
    direct = sqs_scenario(emulator, DirectSqs(api, account, emulator.region), "direct")

    assert len(direct) == len(through_api)
    for i, (a, b) in enumerate(zip(direct, through_api, strict=True)):
        assert a == b, f"call {i} answered differently"
    # the scenario covers what the runtime relies on
    flat = json.dumps(direct, default=repr)
    assert '"ApproximateReceiveCount": "2"' in flat  # receive counts kept across redeliveries
    assert ("error", "MissingParameter") in direct or ("error", "InvalidParameterValue") in direct
    assert ("error", "AWS.SimpleQueueService.NonExistentQueue") in direct or (
        "error",
        "QueueDoesNotExist",
    ) in direct
    dlq_counts = direct[13]
    assert dlq_counts == {
        "Attributes": {"ApproximateNumberOfMessages": "3", "ApproximateNumberOfMessagesNotVisible": "0"}
    }


def test_a_receive_answers_with_the_shim_what_moto_as_shipped_answers(emulator: Emulator) -> None:
    """The shim's receive (no deep copy of the message, one draw for its receipt handle)
    against moto as shipped: the same scenario (visibility, receive counts, the redrive to
    the dead-letter queue, FIFO groups, message attributes) gives the same answers, through
    the API and through the runtime's direct calls; a handle keeps moto's form and is new at
    every receive; and the copies handed out are not kept alive."""
    from moto.sqs.models import Message

    from sewerbill.local.motoshim import DirectSqs

    api = emulator.client("sqs")
    account = emulator.client("sts").get_caller_identity()["Account"]
    with motoshim.shipped():
        shipped_api = sqs_scenario(emulator, api, "shipped-api")
        shipped_direct = sqs_scenario(emulator, DirectSqs(api, account, emulator.region), "shipped-direct")
    shim_api = sqs_scenario(emulator, api, "shim-api")
    shim_direct = sqs_scenario(emulator, DirectSqs(api, account, emulator.region), "shim-direct")

    assert shim_api == shipped_api
    assert shim_direct == shipped_direct

    queue = api.create_queue(QueueName="handles")["QueueUrl"]
    api.send_message(QueueUrl=queue, MessageBody="x")
    tracked = len(Message.instances_tracked)
    handles = []
    for _ in range(3):
        got = api.receive_message(QueueUrl=queue, VisibilityTimeout=0)["Messages"][0]
        handles.append(got["ReceiptHandle"])
        assert (
            len(got["ReceiptHandle"]) == 185
            and got["ReceiptHandle"].isalpha()
            and got["ReceiptHandle"].islower()
        )
    assert len(set(handles)) == 3
    assert len(Message.instances_tracked) == tracked  # moto as shipped keeps each copy handed out
    api.delete_message(QueueUrl=queue, ReceiptHandle=handles[-1])
    assert "Messages" not in api.receive_message(QueueUrl=queue)


# --- a Query on a sort-key range bisects to it (motoshim keeps each partition's keys in order) ------
def _ranged_table(ddb: Any, name: str, sort_type: str) -> None:
    make_table(ddb, name, sort_type=sort_type)


def _pages(ddb: Any, **query: Any) -> list[Any]:
    """Every page of a query, each with its LastEvaluatedKey, following it to the end."""
    pages = []
    while True:
        page = ddb.query(**query)
        page.pop("ResponseMetadata")
        pages.append(page)
        if "LastEvaluatedKey" not in page or len(pages) > 60:
            return pages
        query = {**query, "ExclusiveStartKey": page["LastEvaluatedKey"]}


def _ranged_run(emulator: Emulator, table: str) -> list[Any]:
    ddb = emulator.client("dynamodb")
    _ranged_table(ddb, table, "S")
    _ranged_table(ddb, table + "-n", "N")
    puts = [{"pk": {"S": "A"}, "sk": {"S": f"ACC#{i:04d}"}} for i in range(0, 300, 3)]
    puts += [{"pk": {"S": "A"}, "sk": {"S": f"USE#{i:04d}"}} for i in range(0, 300, 7)]
    puts += [{"pk": {"S": "B"}, "sk": {"S": f"ACC#{i:04d}"}} for i in range(5)]
    for at in range(0, len(puts), 25):
        ddb.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": i}} for i in puts[at : at + 25]]})
    for n in (5, -2, 10, 0.5, 7, 100, 3):
        ddb.put_item(TableName=table + "-n", Item={"pk": {"S": "A"}, "sk": {"N": str(n)}})
    t, a = table, {":p": {"S": "A"}}

    def q(condition: str, values: dict[str, Any], **more: Any) -> list[Any]:
        return _pages(
            ddb,
            TableName=t,
            KeyConditionExpression=condition,
            ExpressionAttributeValues={**a, **values},
            **more,
        )

    answers: list[Any] = []
    between = {":x": {"S": "ACC#0030"}, ":y": {"S": "ACC#0150"}}
    for limit in ({}, {"Limit": 7}, {"Limit": 1}):
        for forward in (True, False):
            more = {**limit, "ScanIndexForward": forward}
            answers.append(q("pk = :p AND sk BETWEEN :x AND :y", between, **more))
            answers.append(q("pk = :p AND begins_with(sk, :b)", {":b": {"S": "USE#"}}, **more))
            answers.append(q("pk = :p AND begins_with(sk, :b)", {":b": {"S": "ACC#01"}}, **more))
            answers.append(q("pk = :p", {}, **more))
            for op in ("=", "<", "<=", ">", ">="):
                answers.append(q(f"pk = :p AND sk {op} :v", {":v": {"S": "ACC#0150"}}, **more))
                answers.append(q(f"pk = :p AND sk {op} :v", {":v": {"S": "ACC#0151"}}, **more))
    # a put and a delete between queries: the order follows them
    ddb.put_item(TableName=t, Item={"pk": {"S": "A"}, "sk": {"S": "ACC#0031"}})
    ddb.put_item(TableName=t, Item={"pk": {"S": "A"}, "sk": {"S": "ACC#0033"}, "v": {"S": "replaced"}})
    ddb.delete_item(TableName=t, Key={"pk": {"S": "A"}, "sk": {"S": "ACC#0036"}})
    ddb.delete_item(TableName=t, Key={"pk": {"S": "A"}, "sk": {"S": "ACC#0037"}})  # not there
    answers.append(q("pk = :p AND sk BETWEEN :x AND :y", between, Limit=4))
    answers.append(q("pk = :p AND sk BETWEEN :x AND :y", between, Limit=4, ScanIndexForward=False))
    # an undone transaction puts nothing back in the order that it did not leave
    try:
        ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": t, "Item": {"pk": {"S": "A"}, "sk": {"S": "ACC#0032"}}}},
                {"Delete": {"TableName": t, "Key": {"pk": {"S": "A"}, "sk": {"S": "ACC#0039"}}}},
                {
                    "Put": {
                        "TableName": t,
                        "Item": {"pk": {"S": "A"}, "sk": {"S": "ACC#0042"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )
    except ClientError as exc:
        answers.append(exc.response["Error"]["Code"])
    answers.append(q("pk = :p AND sk BETWEEN :x AND :y", between))
    # a start key of the page before, one that is not an item, one of another partition
    for start in ("ACC#0045", "ACC#0046", "ZZZ"):
        key = {"pk": {"S": "A"}, "sk": {"S": start}}
        answers.append(q("pk = :p AND sk BETWEEN :x AND :y", between, Limit=3, ExclusiveStartKey=key))
    answers.append(q("pk = :p", {}, Limit=3, ExclusiveStartKey={"pk": {"S": "B"}, "sk": {"S": "ACC#0002"}}))
    # a filter expression applies after the limit, as moto applies it
    answers.append(
        q(
            "pk = :p AND sk > :v",
            {":v": {"S": "ACC#0100"}, ":r": {"S": "x"}},
            Limit=5,
            FilterExpression="attribute_exists(v) OR sk < :r",
        )
    )
    # numbers order as numbers, not as strings
    t = table + "-n"
    for op, v in (("BETWEEN :v AND :w", "0"), ("> :v", "3"), ("<= :v", "7")):
        values = {":v": {"N": v}, ":w": {"N": "10"}} if "BETWEEN" in op else {":v": {"N": v}}
        answers.append(q(f"pk = :p AND sk {op}", values, Limit=2))
        answers.append(q(f"pk = :p AND sk {op}", values, ScanIndexForward=False))
    return _normalise(answers, table)


def test_a_range_query_answers_what_moto_as_shipped_answers_page_for_page(emulator: Emulator) -> None:
    fast = _ranged_run(emulator, "ranged-fast")
    with motoshim.shipped():
        shipped = _ranged_run(emulator, "ranged-shipped")

    assert len(fast) == len(shipped)
    for i, (a, b) in enumerate(zip(fast, shipped, strict=True)):
        assert a == b, f"answer {i} differs"
    # the run pages (LastEvaluatedKey is compared too), reverses and finds ranges, not empty answers
    between_by_7 = fast[28]  # BETWEEN ACC#0030 AND ACC#0150, Limit 7: ACC#0030..0150 every 3 = 41 items
    assert [len(p["Items"]) for p in between_by_7] == [7, 7, 7, 7, 7, 6]
    assert [a for a in fast if isinstance(a, str)] == ["TransactionCanceledException"]  # it was undone
