"""`common.dynamo.to_item` / `from_item` answer strings and booleans themselves (issue 7: bulk
items are mostly strings); every answer must be boto3's TypeSerializer/TypeDeserializer's."""

from __future__ import annotations

from decimal import Decimal

import pytest
from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer

from common.dynamo import from_item, to_item

VALUES = {
    "s": "USAGE#pleasant-prairie-sewer#2026-02-01#2026-03-01",
    "empty": "",
    "unicode": "Ærø – 水",
    "yes": True,
    "no": False,
    "int": 3,
    "zero": 0,
    "big": 10**37,
    "dec": Decimal("1234.5670"),
    "map": {"a": "b", "n": Decimal(2), "nested": {"t": True}},
    "list": ["x", 1, False, None],
    "strings": {"a", "b"},
    "numbers": {Decimal(1), Decimal("2.5")},
    "bytes": b"\x00\x01",
    "binary": Binary(b"raw"),
}


def test_items_are_written_as_boto3_writes_them_on_every_attribute_type() -> None:
    serializer = TypeSerializer()
    assert to_item(VALUES) == {k: serializer.serialize(v) for k, v in VALUES.items()}


def test_items_are_read_as_boto3_reads_them_on_every_attribute_type() -> None:
    raw = {k: TypeSerializer().serialize(v) for k, v in VALUES.items()}
    raw["null"] = {"NULL": True}
    deserializer = TypeDeserializer()
    assert from_item(raw) == {k: deserializer.deserialize(v) for k, v in raw.items()}


def test_none_is_left_out_and_bad_values_are_refused_as_boto3_refuses_them() -> None:
    assert to_item({"pk": "P", "gone": None}) == {"pk": {"S": "P"}}
    with pytest.raises(TypeError):
        to_item({"f": 1.5})  # floats are not DynamoDB numbers (STYLE: money is Decimal)
    with pytest.raises(TypeError):
        from_item({"x": {"Q": "?"}})
