"""A BatchWriteItem answered with the runtime's shim is moto's as shipped (issue 7).

The shim skips moto's JSON dump of every put item (its duplicate check) when no two items
can be duplicates (`motoshim._duplicate_puts_possible`); otherwise the check is moto's. Here
the same batches run against moto with the shim and as shipped: the answers (status and
error message) and the tables' items must be the same, for items that differ, items that
are the same (refused), items that share a key but differ (moto as shipped takes them: the
shim must too), attributes in another order, deletes and puts across two tables.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto_support import make_table

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator

pytestmark = pytest.mark.integration


def put(pk: str, **attrs: Any) -> dict[str, Any]:
    return {"PutRequest": {"Item": {"pk": {"S": pk}, "sk": {"S": "S"}, **attrs}}}


BATCHES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "different items": [("a", put(f"P#{i}", v={"N": str(i)}, s={"S": "x" * 700})) for i in range(25)],
    "the same item twice": [("a", put("P#1", v={"N": "1"})), ("a", put("P#1", v={"N": "1"}))],
    "one key, two items": [("a", put("P#1", v={"N": "1"})), ("a", put("P#1", v={"N": "2"}))],
    "one partition, the same item twice": [("a", put("P#1", v={"N": "1"})), ("a", put("P#1", v={"N": "1"}))]
    + [("a", {"PutRequest": {"Item": {"pk": {"S": "P#1"}, "sk": {"S": f"S{i}"}}}}) for i in range(3)],
    "same attributes, other order": [
        ("a", {"PutRequest": {"Item": {"pk": {"S": "P#1"}, "sk": {"S": "S"}}}}),
        ("a", {"PutRequest": {"Item": {"sk": {"S": "S"}, "pk": {"S": "P#1"}}}}),
    ],
    "the same item in two tables": [("a", put("P#1")), ("b", put("P#1"))],
    "the same delete twice": [
        ("a", {"DeleteRequest": {"Key": {"pk": {"S": "P#1"}, "sk": {"S": "S"}}}}),
        ("a", {"DeleteRequest": {"Key": {"pk": {"S": "P#1"}, "sk": {"S": "S"}}}}),
    ],
    "a put and a delete": [
        ("a", put("P#2", b={"B": b"\x00\x01"}, m={"M": {"l": {"L": [{"S": "x"}]}}})),
        ("b", {"DeleteRequest": {"Key": {"pk": {"S": "P#1"}, "sk": {"S": "S"}}}}),
    ],
    "an empty key": [("a", put(""))],
}


def make_tables(ddb: Any, prefix: str) -> None:
    for name in ("a", "b"):
        make_table(ddb, f"{prefix}-{name}")


def run(ddb: Any, prefix: str, batch: list[tuple[str, dict[str, Any]]]) -> tuple[str, list[Any]]:
    """The answer to the batch (``ok`` or the error's message) and both tables' items after it."""
    ddb.batch_write_item(RequestItems={f"{prefix}-a": [put("P#1", v={"N": "0"})]})
    requests: dict[str, list[dict[str, Any]]] = {}
    for table, request in batch:
        requests.setdefault(f"{prefix}-{table}", []).append(request)
    try:
        resp = ddb.batch_write_item(RequestItems=requests)
        answer = f"ok {resp['UnprocessedItems']}"
    except ClientError as exc:
        answer = f"{exc.response['Error']['Code']}: {exc.response['Error']['Message']}"
    items = [sorted(map(str, ddb.scan(TableName=f"{prefix}-{t}")["Items"])) for t in ("a", "b")]
    return answer, items


@pytest.mark.parametrize("case", list(BATCHES))
def test_a_batch_write_answers_what_moto_as_shipped_answers(emulator: Emulator, case: str) -> None:
    ddb = emulator.client("dynamodb")
    slug = case.replace(" ", "-").replace(",", "")
    make_tables(ddb, f"bw-fast-{slug}")
    fast = run(ddb, f"bw-fast-{slug}", BATCHES[case])
    with motoshim.shipped():
        make_tables(ddb, f"bw-shipped-{slug}")
        shipped = run(ddb, f"bw-shipped-{slug}", BATCHES[case])
    assert fast == shipped
    if case == "the same item twice":
        assert "duplicates" in fast[0]  # the check still runs where it can find something


def test_only_items_that_could_be_duplicates_are_dumped() -> None:
    """The shortcut is taken: 25 items that differ in their first two values need no dump, nor
    do items of one partition that differ in their second (billing's kept consumptions of a
    period); two with the same names in the same order and the same first two values do."""
    differ = [{"pk": {"S": f"P#{i}"}, "sk": {"S": "S"}} for i in range(25)]
    assert not motoshim._duplicate_puts_possible(differ)
    one_partition = [{"pk": {"S": "USAGE#t#a#b"}, "sk": {"S": f"A{i}"}, "v": {"N": "1"}} for i in range(25)]
    assert not motoshim._duplicate_puts_possible(one_partition)
    assert motoshim._duplicate_puts_possible(
        [
            {"pk": {"S": "P"}, "v": {"N": "1"}, "w": {"N": "1"}},
            {"pk": {"S": "P"}, "v": {"N": "1"}, "w": {"N": "2"}},
        ]
    )
    assert not motoshim._duplicate_puts_possible(
        [{"pk": {"S": "P"}, "v": {"N": "1"}}, {"v": {"N": "1"}, "pk": {"S": "P"}}]
    )


KEYS = {
    "different keys": [{"pk": {"S": f"P#{i}"}, "sk": {"S": "S"}} for i in range(100)],
    "one key twice": [{"pk": {"S": "P#1"}, "sk": {"S": "S"}}, {"pk": {"S": "P#1"}, "sk": {"S": "S"}}],
    "one key twice, other order": [
        {"pk": {"S": "P#1"}, "sk": {"S": "S"}},
        {"sk": {"S": "S"}, "pk": {"S": "P#1"}},
    ],
    "a number key": [{"pk": {"S": "P#1"}, "sk": {"N": "1"}}, {"pk": {"S": "P#1"}, "sk": {"N": "1.0"}}],
}


@pytest.mark.parametrize("case", list(KEYS))
def test_a_batch_get_answers_what_moto_as_shipped_answers(emulator: Emulator, case: str) -> None:
    ddb = emulator.client("dynamodb")
    slug = case.replace(" ", "-").replace(",", "")

    def get(prefix: str) -> Any:
        make_tables(ddb, prefix)
        ddb.batch_write_item(RequestItems={f"{prefix}-a": [put(f"P#{i}", v={"N": str(i)}) for i in range(3)]})
        try:
            resp = ddb.batch_get_item(RequestItems={f"{prefix}-a": {"Keys": KEYS[case]}})
            return sorted(map(str, resp["Responses"][f"{prefix}-a"]))
        except ClientError as exc:
            return f"{exc.response['Error']['Code']}: {exc.response['Error']['Message']}"

    fast = get(f"bg-fast-{slug}")
    with motoshim.shipped():
        shipped = get(f"bg-shipped-{slug}")
    assert fast == shipped
    assert ("duplicates" in str(fast)) == case.startswith("one key twice")


def key(pk: str, sk: str = "S") -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


# RequestItems by case ("{p}" is the case's table prefix): the ones the shim answers itself
# (change 20: keys only, string key attributes) and the ones it leaves to moto
BATCH_GETS: dict[str, tuple[bool, dict[str, Any]]] = {
    "found, missing, another partition": (
        True,
        {"{p}-a": {"Keys": [key("P#2"), key("P#9"), key("P#1"), key("P#1", "other"), key("P#0")]}},
    ),
    "two tables, consistent": (
        True,
        {
            "{p}-a": {"Keys": [key("P#1"), key("P#2")], "ConsistentRead": True},
            "{p}-b": {"Keys": [key("P#1"), key("P#7")]},
            "{p}-h": {"Keys": [{"pk": {"S": "H#1"}}, {"pk": {"S": "H#2"}}, {"pk": {"S": "H#9"}}]},
        },
    ),
    "a key with another attribute too": (True, {"{p}-a": {"Keys": [{**key("P#1"), "v": {"N": "1"}}]}}),
    "a projection": (False, {"{p}-a": {"Keys": [key("P#1")], "ProjectionExpression": "v"}}),
    "attribute names": (
        False,
        {
            "{p}-a": {
                "Keys": [key("P#1")],
                "ProjectionExpression": "#v",
                "ExpressionAttributeNames": {"#v": "v"},
            }
        },
    ),
    "a key without its sort key": (False, {"{p}-a": {"Keys": [{"pk": {"S": "P#1"}}]}}),
    "a number where a string is": (False, {"{p}-a": {"Keys": [{"pk": {"S": "P#1"}, "sk": {"N": "1"}}]}}),
    "a table that does not exist": (False, {"{p}-nope": {"Keys": [key("P#1")]}}),
    "101 keys": (False, {"{p}-a": {"Keys": [key(f"P#{i}") for i in range(101)]}}),
    "101 keys in two tables": (
        False,
        {
            "{p}-a": {"Keys": [key(f"P#{i}") for i in range(60)]},
            "{p}-b": {"Keys": [key(f"P#{i}") for i in range(41)]},
        },
    ),
    "duplicates in the second table": (
        False,
        {"{p}-a": {"Keys": [key("P#1")]}, "{p}-b": {"Keys": [key("P#1"), key("P#1")]}},
    ),
}


@pytest.mark.parametrize("case", list(BATCH_GETS))
def test_a_batch_get_of_keys_is_answered_as_moto_as_shipped_answers_it(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """The whole answer (items in moto's order, unprocessed keys, consumed capacity, errors)
    and the same tables after it, whether the shim answers the batch itself (change 20) or
    leaves it to moto; and the shim answers exactly the cases it says it does."""
    ddb = emulator.client("dynamodb")
    slug = case.replace(" ", "-").replace(",", "")
    plain, request = BATCH_GETS[case]
    answered_here: list[bool] = []
    batch_get_plain = motoshim._batch_get_plain

    def counted(handler: Any) -> Any:
        answer = batch_get_plain(handler)
        answered_here.append(answer is not None)
        return answer

    monkeypatch.setattr(motoshim, "_batch_get_plain", counted)

    def get(prefix: str) -> Any:
        make_tables(ddb, prefix)
        ddb.create_table(
            TableName=f"{prefix}-h",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        writes = {
            f"{prefix}-{t}": [put(f"P#{i}", v={"N": str(i)}, m={"M": {"k": {"S": t}}}) for i in range(3)]
            for t in "ab"
        }
        writes[f"{prefix}-h"] = [
            {"PutRequest": {"Item": {"pk": {"S": f"H#{i}"}, "v": {"BOOL": True}}}} for i in range(3)
        ]
        ddb.batch_write_item(RequestItems=writes)
        items = {k.replace("{p}", prefix): v for k, v in request.items()}
        try:
            resp = ddb.batch_get_item(RequestItems=items, ReturnConsumedCapacity="TOTAL")
            # compared as JSON text, so that a capacity of 1 is not taken for moto's 1.0
            answer: Any = {k: v for k, v in resp.items() if k != "ResponseMetadata"}
            answer = json.dumps(answer, sort_keys=True).replace(prefix, "{p}")
        except ClientError as exc:
            answer = f"{exc.response['Error']['Code']}: {exc.response['Error']['Message']}".replace(
                prefix, "{p}"
            )
        tables = [sorted(map(str, ddb.scan(TableName=f"{prefix}-{t}")["Items"])) for t in "abh"]
        return answer, tables

    fast = get(f"bgk-fast-{slug}")
    with motoshim.shipped():
        shipped = get(f"bgk-shipped-{slug}")
    assert fast == shipped
    assert answered_here == [plain]


def test_a_batch_get_sizes_each_item_it_answers_once(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moto's loop asks each found item's size twice in a row; the shim answers the second
    from the first (motoshim change 18). Three items of three attributes: 9 attribute sizes, not 18."""
    ddb = emulator.client("dynamodb")
    make_tables(ddb, "bg-once")
    ddb.batch_write_item(RequestItems={"bg-once-a": [put(f"P#{i}", v={"N": str(i)}) for i in range(3)]})
    sized: list[Any] = []
    value_size = motoshim._value_size

    def counted(value: Any) -> int:
        sized.append(value)
        return value_size(value)

    monkeypatch.setattr(motoshim, "_value_size", counted)
    keys = [{"pk": {"S": f"P#{i}"}, "sk": {"S": "S"}} for i in range(5)]  # two are not there
    found = ddb.batch_get_item(RequestItems={"bg-once-a": {"Keys": keys}})["Responses"]["bg-once-a"]
    assert len(found) == 3 and len(sized) == 9
    assert motoshim._last_sized.get() is None  # only while moto answers the batch


def test_a_batch_get_past_16_mb_leaves_the_same_keys_unprocessed_as_moto(emulator: Emulator) -> None:
    """The answer's 16 MB limit reads the items' sizes (the one the shim keeps): 42 items of
    399,912 bytes (399,900 + "big" 3 + "pk" 2 + "P#00" 4 + "sk" 2 + "S" 1); 41 are 16,396,392
    bytes, a 42nd would make 16,796,304, past 16 MiB (16,777,216): moto answers 41 and leaves
    one unprocessed."""
    ddb = emulator.client("dynamodb")

    def get(prefix: str) -> Any:
        make_tables(ddb, prefix)
        for start in range(0, 42, 10):
            ddb.batch_write_item(
                RequestItems={
                    f"{prefix}-a": [
                        put(f"P#{i:02d}", big={"S": "x" * 399_900}) for i in range(start, min(42, start + 10))
                    ]
                }
            )
        keys = [{"pk": {"S": f"P#{i:02d}"}, "sk": {"S": "S"}} for i in range(42)]
        resp = ddb.batch_get_item(RequestItems={f"{prefix}-a": {"Keys": keys}})
        answered = sorted(i["pk"]["S"] for i in resp["Responses"][f"{prefix}-a"])
        left = resp.get("UnprocessedKeys", {}).get(f"{prefix}-a", {}).get("Keys", [])
        return answered, sorted(k["pk"]["S"] for k in left)

    fast = get("bg-big-fast")
    with motoshim.shipped():
        shipped = get("bg-big-shipped")
    assert fast == shipped
    assert len(fast[0]) == 41 and len(fast[1]) == 1


def test_duplicates_are_found_as_moto_finds_them() -> None:
    from moto.dynamodb.responses import DynamoHandler

    motoshim.install()
    handler = DynamoHandler()
    original = motoshim._originals["contains_duplicates"]
    for keys in (
        *KEYS.values(),
        ["a", "b", "a"],
        ["a", "b"],
        [{"pk": {"S": "x"}}, {"pk": {"N": "1"}}],
        [1, 1.0],
    ):
        assert motoshim._contains_duplicates(handler, list(keys)) == original(handler, list(keys)), keys
