"""An unconditional put answered by the runtime's shim is moto's as shipped (issue 7).

motoshim's `_plain_put` takes moto's `Table.put_item` step for step for a put without a
condition, without walking every plain value's type checks, and makes keys and plain values
without `DynamoType`'s chain of type tests; `DynamoType`'s hash and equality answer two
strings first. Here the same puts run against moto with the shim and as shipped: the answer
(the item, or the error's type and message), the table's items and the stream's records
(every field but the random event id) must be the same, for plain items, items with sets,
lists, maps and binaries, a second put of a key (a MODIFY), a missing or mistyped key, keys
too long for the table or for an index, a null that is not true, a number given as a
number, a string given as a number, and a conditional put (moto's own path).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.dynamo_type import DynamoType
from moto_support import make_indexed_table, make_table

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator

pytestmark = pytest.mark.integration

WHEN = datetime(2026, 3, 3, 12, 0, 0, 123456)


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    import moto.dynamodb.models.table as table_module

    monkeypatch.setattr(table_module, "utcnow", lambda: WHEN)


def item(pk: str, **attrs: Any) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": "S\u00e9"}, **attrs}


PLAIN = item("P#1", s={"S": "\u6f22 text"}, n={"N": "12.50"}, flag={"BOOL": False}, none={"NULL": True})
PUTS: dict[str, list[dict[str, Any]]] = {
    "a plain item, then the same key again (INSERT then MODIFY)": [PLAIN, {**PLAIN, "n": {"N": "13"}}],
    "every kind of value": [
        item(
            "P#2",
            b={"B": b"\x00\x01"},
            ss={"SS": ["x", "y"]},
            ns={"NS": ["1", "2"]},
            m={"M": {"N": {"S": "a map key named N"}, "l": {"L": [{"N": "1"}, {"S": "x"}]}}},
            l={"L": [{"M": {"S": {"N": "2"}}}]},
        )
    ],
    "no hash key": [{"sk": {"S": "S"}, "v": {"S": "x"}}],
    "no range key": [{"pk": {"S": "P#3"}, "v": {"S": "x"}}],
    "a hash key of another type": [{"pk": {"N": "3"}, "sk": {"S": "S"}}],
    "a range key of another type": [{"pk": {"S": "P#3"}, "sk": {"N": "1"}}],
    "a hash key too long": [item("P" * 2049)],
    "a range key too long": [{"pk": {"S": "P#4"}, "sk": {"S": "s" * 1025}}],
    "an index key too long": [item("P#5", v={"S": "v" * 2049})],
    "a null that is false": [item("P#6", none={"NULL": False})],
    "a number given as a number": [item("P#7", n={"N": 7})],
    "a string given as a number": [item("P#8", s={"S": 8})],
    "a value of two tags": [item("P#9", two={"S": "x", "N": "1"})],
    "an item over 400 KB": [item("P#10", big={"S": "x" * 410_000})],
    # at moto's limit (405,000 bytes), counted in UTF-8 bytes: "\u00e9" is 2; the names and
    # keys add 14 ("pk" 2, "P#11" 4, "sk" 2, "S\u00e9" 3, "big" 3): 404,814 within, 405,006 over
    "a plain item just within moto's size limit": [item("P#11", big={"S": "\u00e9" * 202_400})],
    "a plain item just over it": [item("P#11", big={"S": "\u00e9" * 202_496})],
}


def table_state(backend: Any, name: str) -> tuple[list[Any], list[Any]]:
    """The table's items and its stream's records (without the random event id)."""
    table = backend.get_table(name)
    items = sorted((str(i.to_json()) for i in table.all_items()), key=str)
    records = []
    for record in table.stream_shard.items:
        shown = dict(record.to_json())
        shown.pop("eventID")
        records.append(shown)
    return items, records


def run(emulator: Emulator, prefix: str, puts: list[dict[str, Any]], *, condition: str | None = None) -> Any:
    ddb = emulator.client("dynamodb")
    make_table(ddb, f"{prefix}-new", stream="NEW_IMAGE")
    make_indexed_table(ddb, f"{prefix}-both")
    backend = dynamodb_backends["123456789012"][emulator.region]
    answers = []
    for name in (f"{prefix}-new", f"{prefix}-both"):
        for attrs in puts:
            try:
                put = backend.put_item(name, attrs, condition_expression=condition)
                answers.append(("ok", put.to_json()))
            except Exception as exc:  # noqa: BLE001 - the error itself is compared
                answers.append((type(exc).__name__, str(exc)))
        answers.append(table_state(backend, name))
    return answers


@pytest.mark.parametrize("case", list(PUTS))
def test_a_put_with_the_shim_answers_and_stores_what_moto_as_shipped_does(
    emulator: Emulator, case: str
) -> None:
    slug = f"plain-{list(PUTS).index(case)}"
    with motoshim.shipped():
        expected = run(emulator, f"{slug}-shipped", PUTS[case])
    assert run(emulator, f"{slug}-shim", PUTS[case]) == expected


def test_a_conditional_put_is_moto_s_own(emulator: Emulator) -> None:
    condition = "attribute_not_exists(pk)"
    with motoshim.shipped():
        expected = run(emulator, "plain-cond-shipped", [PLAIN, PLAIN], condition=condition)
    assert run(emulator, "plain-cond-shim", [PLAIN, PLAIN], condition=condition) == expected
    assert expected[1][0] == "ConditionalCheckFailed"  # the second put is refused


def test_the_plain_put_is_the_one_taken(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above is of the shim's own path: a plain put does not reach moto's."""
    original = motoshim._originals["table_put_item"]
    monkeypatch.setitem(motoshim._originals, "table_put_item", lambda *a, **k: pytest.fail("moto's put"))
    assert run(emulator, "plain-taken", [PLAIN, PUTS["every kind of value"][0]])[0][0] == "ok"
    monkeypatch.setitem(motoshim._originals, "table_put_item", original)


def test_a_plain_put_s_item_is_counted_as_moto_s_items_are(emulator: Emulator) -> None:
    """Change 2 counts the items moto makes (tests read it): a plain put's item too."""
    before = motoshim.items_created()
    run(emulator, "plain-counted", [PLAIN])
    assert motoshim.items_created() - before >= 2  # one put into each of the two tables


@pytest.mark.parametrize(
    "left, right",
    [
        ({"S": "a"}, {"S": "a"}),
        ({"S": "a"}, {"S": "b"}),
        ({"S": "1"}, {"N": "1"}),
        ({"N": "1"}, {"N": "1.0"}),
        ({"SS": ["a"]}, {"SS": ["a"]}),
        ({"NULL": True}, {"S": ""}),
    ],
)
def test_hash_and_equality_of_values_are_moto_s(
    emulator: Emulator, left: dict[str, Any], right: dict[str, Any]
) -> None:
    a, b = DynamoType(left), DynamoType(right)
    shim = (a == b, b == a, hash(a) == hash(b), hash(a)) if a.type != "SS" else (a == b, b == a)
    with motoshim.shipped():
        shipped = (a == b, b == a, hash(a) == hash(b), hash(a)) if a.type != "SS" else (a == b, b == a)
    assert shim == shipped


def test_a_handler_s_backend_is_moto_s_for_its_account_and_region(emulator: Emulator) -> None:
    """motoshim looks a request handler's backend up once (`_handler_backend`): it is the one
    moto's property gives, and another account or region gets its own."""
    from moto.dynamodb.responses import DynamoHandler

    handler = DynamoHandler()
    handler.current_account, handler.region = "123456789012", "us-east-1"
    assert handler.dynamodb_backend is dynamodb_backends["123456789012"]["us-east-1"]
    assert handler.dynamodb_backend is handler.dynamodb_backend
    handler.region = "eu-west-1"
    assert handler.dynamodb_backend is dynamodb_backends["123456789012"]["eu-west-1"]
    handler.current_account = "210987654321"
    assert handler.dynamodb_backend is dynamodb_backends["210987654321"]["eu-west-1"]
