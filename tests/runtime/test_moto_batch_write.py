"""A BatchWriteItem answered with the runtime's shim is moto's as shipped (issue 7).

The shim skips moto's JSON dump of every put item (its duplicate check) when no two items
can be duplicates (`motoshim._duplicate_puts_possible`); otherwise the check is moto's. Here
the same batches run against moto with the shim and as shipped: the answers (status and
error message) and the tables' items must be the same, for items that differ, items that
are the same (refused), items that share a key but differ (moto as shipped takes them: the
shim must too), attributes in another order, deletes and puts across two tables.
"""

from __future__ import annotations

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
