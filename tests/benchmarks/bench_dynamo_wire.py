"""Benchmark of the DynamoDB client's wire work (not a test: pytest does not collect it).

    .venv/bin/python tests/benchmarks/bench_dynamo_wire.py [ITEMS] [REPEATS]

``common.dynamo``'s clients are botocore's own (public API only): each request body and each
answer is walked member by member against the API model. The deployed code once replaced
botocore's private JSON serializer and parser (``_serialize_type_map``, ``_handle_map``, a
client's ``_serializer`` and its endpoint's parser factory) to put plain items in the body
as they are and to answer them as sent; that way is kept here, as it was, only to measure
what the public way costs. Both run on the same items in one process, interleaved: a
BatchWriteItem body of 25 items (serialized) and a BatchGetItem answer of 100 items
(parsed), on ITEMS (default 10,000) items like a read file's, best of REPEATS (default 7).
Prints microseconds per item written and per item read, each way, their ratio, and what
the difference comes to for ITEMS items written and read once.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
from botocore.parsers import JSONParser, ResponseParserFactory
from botocore.serialize import JSONSerializer

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "services") not in sys.path:
    sys.path.insert(0, str(ROOT / "services"))

from common.dynamo import BULK_CLIENT, to_item  # noqa: E402

# The attribute-value tags whose wire form (DynamoDB's JSON protocol) is the value itself:
# everything but the binary ones (B, BS: base64 on the wire). L and M are plain when all
# their members are.
_PLAIN_TAGS = frozenset({"S", "N", "SS", "NS", "BOOL", "NULL"})


def _plain(attribute: Any) -> bool:
    """True when botocore's JSON serializer would copy ``attribute`` (an AttributeValue)
    unchanged: no binary value and no unknown tag at any depth."""
    if type(attribute) is not dict:
        return False
    for tag, value in attribute.items():
        if tag in _PLAIN_TAGS:
            continue
        if tag == "L":
            if type(value) is not list or not all(_plain(v) for v in value):
                return False
        elif tag == "M":
            if type(value) is not dict or not all(_plain(v) for v in value.values()):
                return False
        else:
            return False
    return True


class _PlainWireSerializer(JSONSerializer):
    """botocore's JSON serializer, except that a map of attribute values (an item, a key)
    whose values are all plain (:func:`_plain`) is put in the body as it is, instead of
    being walked member by member against the model: the same JSON, byte for byte (the
    serializer copies each such value and keeps the input's order), for a fraction of the
    cost (issue 7: the walk was about a third of the read file consumer's CPU). Binary
    values, and anything botocore would treat differently, take botocore's own path."""

    def _serialize_type_map(self, serialized: Any, value: Any, shape: Any, key: Any) -> None:
        if (
            shape.value.name == "AttributeValue"
            and type(value) is dict
            and all(_plain(v) for v in value.values())
        ):
            serialized[key] = value
            return
        super()._serialize_type_map(serialized, value, shape, key)


def _plain_answer(attribute: Any) -> bool:
    """True when botocore's JSON parser would answer ``attribute`` (an AttributeValue as
    DynamoDB sent it) unchanged: exactly one tag, set, known and not binary, at any depth (a
    list's nulls stay nulls); anything else (binary, several tags, an unknown tag) is left to
    botocore, which decodes, raises or flags it."""
    if type(attribute) is not dict or len(attribute) != 1:
        return False
    for tag, value in attribute.items():
        if value is None:
            return False
        if tag in _PLAIN_TAGS:
            return True
        if tag == "L":
            return type(value) is list and all(v is None or _plain_answer(v) for v in value)
        if tag == "M":
            return type(value) is dict and all(_plain_answer(v) for v in value.values())
    return False


class _PlainWireParser(JSONParser):
    """botocore's JSON parser, except that a map of attribute values (an item) whose values
    are all plain (:func:`_plain_answer`) is answered as DynamoDB sent it, a fresh dict from
    the body's ``json.loads``, instead of being rebuilt member by member against the model:
    the same result, for a fraction of the cost (issue 7: a read file's BatchGetItem answers)."""

    def _handle_map(self, shape: Any, value: Any) -> Any:
        if (
            shape.value.name == "AttributeValue"
            and type(value) is dict
            and all(_plain_answer(v) for v in value.values())
        ):
            return value
        return super()._handle_map(shape, value)


class _PlainWireParsers(ResponseParserFactory):
    def create_parser(self, protocol_name: str) -> Any:
        if protocol_name == "json":
            return _PlainWireParser(**self._defaults)
        return super().create_parser(protocol_name)


def plain_wire(client: Any) -> Any:
    """The old way: ``client`` with the plain-wire serializer and parser swapped in."""
    serializer = getattr(client, "_serializer", None)
    if type(serializer) is JSONSerializer:
        fast = _PlainWireSerializer()
        fast.__dict__.update(serializer.__dict__)
        client._serializer = fast
    endpoint: Any = getattr(client, "_endpoint", None)
    factory = getattr(endpoint, "_response_parser_factory", None)
    if type(factory) is ResponseParserFactory:
        parsers = _PlainWireParsers()
        parsers.__dict__.update(factory.__dict__)
        endpoint._response_parser_factory = parsers
    return client


def read_items(n: int) -> list[dict[str, Any]]:
    """Items like a read file's: a meter read's keys, dates, register and status."""
    return [
        to_item(
            {
                "pk": f"METER#pleasant-prairie-sewer#M{i % 2000:06d}",
                "sk": f"READ#2026-{1 + i % 12:02d}-01#{i:08d}",
                "tenant": "pleasant-prairie-sewer",
                "meter_id": f"M{i % 2000:06d}",
                "read_date": f"2026-{1 + i % 12:02d}-01",
                "register": Decimal(100_000 + i),
                "unit": "gal",
                "status": "accepted",
                "source": f"reads/2026-{1 + i % 12:02d}.csv",
                "line": i + 2,
            }
        )
        for i in range(n)
    ]


def client(config: Any) -> Any:
    return boto3.client(
        "dynamodb", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s", config=config
    )


def serialize_all(c: Any, items: list[dict[str, Any]]) -> list[bytes]:
    model = c.meta.service_model.operation_model("BatchWriteItem")
    bodies = []
    for start in range(0, len(items), 25):
        params = {"RequestItems": {"t": [{"PutRequest": {"Item": it}} for it in items[start : start + 25]]}}
        bodies.append(c._serializer.serialize_to_request(params, model)["body"])
    return bodies


def parse_all(c: Any, answers: list[bytes]) -> list[Any]:
    shape = c.meta.service_model.operation_model("BatchGetItem").output_shape
    parser = c._endpoint._response_parser_factory.create_parser("json")
    return [
        parser.parse({"body": body, "headers": {}, "status_code": 200, "context": {}}, shape)
        for body in answers
    ]


def best(work: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.disable()
        began = time.perf_counter()
        work()
        times.append(time.perf_counter() - began)
        gc.enable()
    return min(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    items = read_items(n)
    public, old = client(BULK_CLIENT), plain_wire(client(BULK_CLIENT))
    answers = [
        json.dumps({"Responses": {"t": items[s : s + 100]}, "UnprocessedKeys": {}}).encode()
        for s in range(0, n, 100)
    ]
    # The same bytes sent and the same answers read, both ways, before any timing.
    assert serialize_all(public, items) == serialize_all(old, items)
    assert parse_all(public, answers) == parse_all(old, answers)
    timings: dict[str, list[float]] = {"public": [0.0, 0.0], "old": [0.0, 0.0]}
    for _ in range(2):  # interleaved, each kept at its best
        for name, c in (("public", public), ("old", old)):
            w = best(lambda c=c: serialize_all(c, items), repeats)
            r = best(lambda c=c: parse_all(c, answers), repeats)
            timings[name] = [min(w, timings[name][0] or w), min(r, timings[name][1] or r)]
    (pw, pr), (ow, orr) = timings["public"], timings["old"]
    us = 1e6 / n
    print(f"{n:,} items like a read file's, best of {repeats} (wire work only, no network, no emulator):")
    print(
        f"  written (BatchWriteItem body): public {pw * us:6.2f} us/item   old {ow * us:6.2f} us/item   x{pw / ow:.1f}"
    )
    print(
        f"  read (BatchGetItem answer):    public {pr * us:6.2f} us/item   old {orr * us:6.2f} us/item   x{pr / orr:.1f}"
    )
    print(
        f"  {n:,} items written and read once: public {(pw + pr) * 1e3:.0f} ms, old {(ow + orr) * 1e3:.0f} ms, "
        f"{(pw + pr - ow - orr) * 1e3:+.0f} ms"
    )


if __name__ == "__main__":
    main()
