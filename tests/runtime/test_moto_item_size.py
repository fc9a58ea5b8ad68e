"""The local runtime's item sizes (motoshim: a string's or number's size read directly) are
moto's: the same size for every attribute type, the same refusal at moto's 405,000-byte limit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from moto.dynamodb.exceptions import ItemSizeTooLarge
from moto.dynamodb.models.dynamo_type import DynamoType, Item

from sewerbill.local import motoshim

ITEMS: list[dict[str, Any]] = [
    {"pk": {"S": "P#1"}, "sk": {"S": "S"}},
    {"pk": {"S": "P#2"}, "s": {"S": "\u00e9\u6f22\U0001f600 ascii"}, "e": {"S": ""}},
    {"pk": {"S": "P#3"}, "n": {"N": "12.50"}, "big": {"N": "12345678901234567890123456789012345678"}},
    {"pk": {"S": "P#4"}, "neg": {"N": "-0.001"}, "exp": {"N": "1E+5"}, "zero": {"N": "0"}},
    {"pk": {"S": "P#5"}, "b": {"B": b"\x00\x01binary"}, "bs": {"BS": [b"a", b"bc"]}},
    {"pk": {"S": "P#6"}, "ss": {"SS": ["x", "\u00e9"]}, "ns": {"NS": ["1", "2.5"]}},
    {"pk": {"S": "P#7"}, "flag": {"BOOL": True}, "off": {"BOOL": False}, "none": {"NULL": True}},
    {"pk": {"S": "P#8"}, "m": {"M": {"l": {"L": [{"S": "\u00e9\u6f22"}, {"N": "-0.001"}, {"M": {}}]}}}},
    {"pk": {"S": "P#9"}, "\u00e9t\u00e9": {"S": "accented name"}, "state": {"S": '{"a":[1,2]}' * 50}},
]


@pytest.fixture
def shim() -> Iterator[None]:
    was = bool(motoshim._originals)
    motoshim.install()
    yield
    if not was:
        motoshim.uninstall()


def sizes() -> list[int]:
    return [Item(DynamoType(i["pk"]), None, i).size() for i in ITEMS]


def outcome(attrs: dict[str, Any]) -> str:
    try:
        Item(DynamoType(attrs["pk"]), None, attrs)
    except ItemSizeTooLarge:
        return "too large"
    return "kept"


def test_every_attribute_type_sizes_as_moto_sizes_it(shim: None) -> None:
    fast = sizes()
    with motoshim.shipped():
        shipped = sizes()
    assert fast == shipped
    # by hand: "pk" + "P#1" + "sk" + "S" = 2 + 3 + 2 + 1 = 8 bytes; "pk" + "P#2" = 5, "s" + UTF-8
    # of "é漢😀 ascii" = 1 + (2 + 3 + 4 + 6) = 16, "e" + "" = 1: 22 bytes
    assert fast[:2] == [8, 22]


@pytest.mark.parametrize("text", ["x", "\u00e9"])
def test_the_size_limit_refuses_what_moto_refuses(shim: None, text: str) -> None:
    # "pk" + "P#1" = 5 bytes and "v" = 1: the value fills moto's 405,000 bytes exactly, then one more
    width = len(text.encode("utf-8"))
    under = {"pk": {"S": "P#1"}, "v": {"S": text * ((405_000 - 6) // width)}}
    over = {"pk": {"S": "P#1"}, "v": {"S": text * ((405_000 - 6) // width + 1)}}
    fast = [outcome(under), outcome(over)]
    with motoshim.shipped():
        shipped = [outcome(under), outcome(over)]
    assert fast == shipped == ["kept", "too large"]
