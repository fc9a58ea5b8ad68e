"""The runtime's stream reads answer what moto as shipped answers.

motoshim measures a stream record's `SizeBytes` (moto: the length of its JSON dump) when the
record is first read instead of when it is written, and the runtime's stream poller reads
moto's shard directly (`motoshim.stream_entries`) and applies a mapping's filters before it
converts a record. Here the same writes run against moto with the shim and against moto as
shipped, and the records (every field but the random event id) must be equal, sizes included,
also for an item updated in place after its record was made and for deletes; and the
poller's Lambda records and filter answers must be those of the API path.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from moto_support import make_table

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator
from sewerbill.local.filters import record_passes
from sewerbill.local.sources import StreamPoller
from sewerbill.local.stack import StreamSource

pytestmark = pytest.mark.integration

# moto stamps each record with utcnow(); its JSON dump (so the size) depends on the digits
WHEN = datetime(2026, 3, 3, 12, 0, 0, 123456)


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    import moto.dynamodb.models.table as table_module

    monkeypatch.setattr(table_module, "utcnow", lambda: WHEN)


def every_type(n: int) -> dict[str, Any]:
    return {
        "pk": {"S": f"P#{n}"},
        "sk": {"S": "S\u00e9"},
        "s": {"S": '\u6f22\U0001f600 "quoted" \\ ascii'},
        "n": {"N": "12.50"},
        "big": {"N": "12345678901234567890123456789012345678"},
        "b": {"B": b"\x00\x01binary"},
        "bs": {"BS": [b"a", b"bc"]},
        "ss": {"SS": ["x", "\u00e9"]},
        "ns": {"NS": ["1", "2.5"]},
        "flag": {"BOOL": True},
        "none": {"NULL": True},
        "m": {"M": {"l": {"L": [{"S": "\u00e9\u6f22"}, {"N": "-0.001"}, {"M": {}}]}, "k": {"S": "v"}}},
        "l": {"L": [{"S": "a"}, {"M": {"x": {"N": "1"}}}]},
    }


def streamed_table(ddb: Any, name: str, view: str = "NEW_AND_OLD_IMAGES") -> str:
    make_table(ddb, name, stream=view)
    arn: str = ddb.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    return arn


def write(ddb: Any, table: str) -> None:
    key = {"pk": {"S": "P#1"}, "sk": {"S": "S\u00e9"}}
    ddb.put_item(TableName=table, Item=every_type(1))
    # in place, after the record above was made: list, map, sets and number all change
    ddb.update_item(
        TableName=table,
        Key=key,
        UpdateExpression="SET l = list_append(l, :more), m.k = :v, m.l[0] = :s ADD ss :ss, ns :ns, n :one",
        ExpressionAttributeValues={
            ":more": {"L": [{"S": "appended"}]},
            ":v": {"S": "changed"},
            ":s": {"S": "also changed"},
            ":ss": {"SS": ["new"]},
            ":ns": {"NS": ["7"]},
            ":one": {"N": "1"},
        },
    )
    ddb.update_item(TableName=table, Key=key, UpdateExpression="REMOVE bs, b")
    ddb.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": every_type(n)}} for n in range(2, 6)]})
    ddb.delete_item(TableName=table, Key={"pk": {"S": "P#2"}, "sk": {"S": "S\u00e9"}})
    ddb.put_item(TableName=table, Item={"pk": {"S": "OUTBOX#1"}, "sk": {"S": "E"}, "detail_type": {"S": "X"}})
    ddb.delete_item(TableName=table, Key=key)  # OldImage: the item as the updates left it


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "eventID"} for r in records]


def test_stream_records_and_their_sizes_are_moto_s_as_shipped(emulator: Emulator) -> None:
    ddb = emulator.client("dynamodb")
    fast_arn = streamed_table(ddb, "streams-fast")
    write(ddb, "streams-fast")
    fast = motoshim.stream_records(fast_arn, None, 1000)  # sized only now, after every update
    with motoshim.shipped():
        shipped_arn = streamed_table(ddb, "streams-shipped")
        write(ddb, "streams-shipped")
        shipped = motoshim.stream_records(shipped_arn, None, 1000)

    assert [r["eventName"] for r in fast] == ["INSERT", "MODIFY", "MODIFY"] + ["INSERT"] * 4 + [
        "REMOVE",
        "INSERT",
        "REMOVE",
    ]
    assert comparable(fast) == comparable(shipped)
    sizes = [r["dynamodb"]["SizeBytes"] for r in fast]
    assert all(size > 100 for size in sizes[:-2])  # measured, not moto's placeholder 1
    # the first record's image is the item as put, not as updated after it
    assert fast[0]["dynamodb"]["NewImage"]["m"]["M"]["k"] == {"S": "v"}
    assert fast[-1]["dynamodb"]["OldImage"]["m"]["M"]["k"] == {"S": "changed"}


def plain(n: int) -> dict[str, Any]:
    """An item of strings, numbers, binaries, booleans and nulls only (the shim's own image)."""
    return {k: v for k, v in every_type(n).items() if k in ("pk", "sk", "s", "n", "big", "b", "flag", "none")}


def put_plain(n: int) -> dict[str, Any]:
    """An item of strings, numbers, booleans and nulls only: a plain put (change 13), whose
    record's new image the shim makes when the record is read (change 19)."""
    return {k: v for k, v in plain(n).items() if k != "b"}


def write_plain(ddb: Any, table: str, item: Callable[[int], dict[str, Any]] = plain) -> None:
    """A read file's writes: plain items put over earlier ones (MODIFY), batched, updated."""
    key = {"pk": {"S": "P#1"}, "sk": {"S": "S\u00e9"}}
    ddb.put_item(TableName=table, Item=item(1))
    ddb.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": item(n)}} for n in range(1, 5)]})
    ddb.update_item(
        TableName=table,
        Key=key,
        UpdateExpression="SET s = :s ADD n :one",
        ExpressionAttributeValues={":s": {"S": "changed"}, ":one": {"N": "1"}},
    )
    ddb.put_item(TableName=table, Item={**item(1), "m": {"M": {"k": {"S": "v"}}}})  # then a map
    ddb.update_item(
        TableName=table,
        Key=key,
        UpdateExpression="SET m.k = :v",
        ExpressionAttributeValues={":v": {"S": "w"}},
    )
    ddb.put_item(TableName=table, Item=item(1))  # plain again, over the item with a map
    ddb.delete_item(TableName=table, Key=key)


def write_put_plain(ddb: Any, table: str) -> None:
    write_plain(ddb, table, put_plain)


@pytest.mark.parametrize("view", ["NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"])
@pytest.mark.parametrize("writes", [write, write_plain, write_put_plain])
def test_each_view_type_keeps_the_images_moto_as_shipped_keeps(
    emulator: Emulator, view: str, writes: Any
) -> None:
    """A record holds only the images its view type keeps, and an image made by the shim
    (`_image`, items of plain values) or by moto (sets, lists, maps) is moto's as shipped."""
    ddb = emulator.client("dynamodb")
    name = f"views-{view.lower().replace('_', '-')}-{writes.__name__.replace('_', '-')}"
    fast_arn = streamed_table(ddb, f"{name}-fast", view)
    writes(ddb, f"{name}-fast")
    fast = motoshim.stream_records(fast_arn, None, 1000)
    with motoshim.shipped():
        shipped_arn = streamed_table(ddb, f"{name}-shipped", view)
        writes(ddb, f"{name}-shipped")
        shipped = motoshim.stream_records(shipped_arn, None, 1000)
    assert len(fast) > 5
    assert comparable(fast) == comparable(shipped)
    # the same order of fields too (a plain put's image, made when read, in moto's place)
    assert [list(r["dynamodb"]) for r in fast] == [list(r["dynamodb"]) for r in shipped]
    images = {k for r in fast for k in r["dynamodb"] if k.endswith("Image")}
    assert (
        images
        == {
            "NEW_IMAGE": {"NewImage"},
            "OLD_IMAGE": {"OldImage"},
            "NEW_AND_OLD_IMAGES": {"NewImage", "OldImage"},
            "KEYS_ONLY": set(),
        }[view]
    )


def poller(emulator: Emulator, arn: str, filters: list[dict[str, Any]], direct: bool) -> StreamPoller:
    source = StreamSource(function="F", stream_arn=arn, table_name="streams-poll", filters=filters)
    streams = emulator.client("dynamodbstreams")
    entries = motoshim.stream_entries if direct else None
    return StreamPoller(source, streams, None, emulator.region, lambda *_: None, entries)  # type: ignore[arg-type]


FILTERS: list[list[dict[str, Any]]] = [
    [],
    [{"eventName": ["INSERT"], "dynamodb": {"Keys": {"pk": {"S": [{"prefix": "OUTBOX#"}]}}}}],
    [{"eventName": ["INSERT"], "dynamodb": {"NewImage": {"detail_type": {"S": [{"exists": True}]}}}}],
    [{"dynamodb": {"OldImage": {"ss": {"SS": ["new"]}}}}, {"eventName": ["MODIFY"]}],
    [{"dynamodb": {"NewImage": {"b": {"B": [{"exists": True}]}}, "SizeBytes": [{"numeric": [">", 900]}]}}],
    [{"dynamodb": {"NewImage": {"m": {"M": {"l": {"L": {"S": ["\u00e9\u6f22"]}}}}}}}],
    [{"eventVersion": ["1.1"], "awsRegion": [{"anything-but": ["nowhere"]}]}],
    # patterns reading the creation time (epoch seconds in the Lambda record: the part copied
    # and converted first), and one on the whole part
    [{"dynamodb": {"ApproximateCreationDateTime": [{"numeric": [">", 1_000_000_000]}]}}],
    [{"eventName": ["INSERT"]}, {"dynamodb": [{"exists": True}], "eventName": ["REMOVE"]}],
    # a key missing from the record, and keys of the record that the Lambda record sets
    [
        {
            "eventSourceARN": [{"prefix": "arn:aws:dynamodb:"}],
            "dynamodb": {"Keys": {"nope": [{"exists": False}]}},
        }
    ],
    # a string of the new image: write_plain's puts, whose images are made when read
    [{"dynamodb": {"NewImage": {"s": {"S": [{"prefix": "\u6f22"}]}}}}],
    # a binary as the Lambda event carries it (base64 of b"\x00\x01binary"), as from the API
    [{"eventName": ["REMOVE"], "dynamodb": {"OldImage": {"b": {"B": ["AAFiaW5hcnk="]}}}}],
]


@pytest.mark.parametrize("writes", [write, write_plain, write_put_plain])
@pytest.mark.parametrize("filters", FILTERS)
def test_the_poller_reads_and_filters_moto_s_shard_as_the_api_gives_it(
    emulator: Emulator, filters: list[dict[str, Any]], writes: Any
) -> None:
    """Also on a plain put's record, whose image the shim makes only when it is read (a
    filter on the images reads it made, one on the keys reads the record without it)."""
    ddb = emulator.client("dynamodb")
    table = f"streams-poll-{FILTERS.index(filters)}-{writes.__name__.replace('_', '-')}"
    arn = streamed_table(ddb, table)
    writes(ddb, table)
    answers = []
    for direct in (True, False):
        p = poller(emulator, arn, filters, direct)
        shard = p._shards()[0]
        read = p._read(shard, 4) + p._read(shard, 4) + p._read(shard, 4)  # from where it stopped
        assert p._read(shard, 4) == []
        kept = [p.record(whole()) for view, whole in read if p.passes(view)]
        # filtering before converting answers what filtering the converted record answers
        assert kept == [e for e in (p.record(whole()) for _, whole in read) if record_passes(filters, e)]
        answers.append([{k: v for k, v in e.items() if k != "eventID"} for e in kept])
    direct_kept, api_kept = answers
    assert direct_kept == api_kept
    if writes is not write and filters == FILTERS[-2]:  # all but the update of s, and the delete
        assert [(e["eventName"], e["dynamodb"]["Keys"]["pk"]["S"]) for e in direct_kept] == [
            ("INSERT", "P#1"),
            ("MODIFY", "P#1"),
            ("INSERT", "P#2"),
            ("INSERT", "P#3"),
            ("INSERT", "P#4"),
            ("MODIFY", "P#1"),
            ("MODIFY", "P#1"),
            ("MODIFY", "P#1"),
        ]
    if writes is not write:
        return
    if filters == FILTERS[1]:
        assert [e["dynamodb"]["Keys"]["pk"] for e in direct_kept] == [{"S": "OUTBOX#1"}]
    if filters == FILTERS[4]:  # of the images with a binary, only the first update's is > 900 bytes
        assert [(e["eventName"], e["dynamodb"]["Keys"]["pk"]) for e in direct_kept] == [
            ("MODIFY", {"S": "P#1"})
        ]
    if filters == FILTERS[-1]:  # P#1's last image has no binary left; P#2's has
        assert [e["dynamodb"]["Keys"]["pk"] for e in direct_kept] == [{"S": "P#2"}]


def test_a_record_s_event_id_is_the_uuid4_moto_draws_from_the_same_seed() -> None:
    """A record's id is `MotoRandom.uuid4().hex` without the `UUID` object (motoshim's
    `_uuid4_hex`): from the same seed, the same 128 bits and the same version-4 text."""
    from moto.moto_api._internal.moto_random import MotoRandom

    moto_s, shim_s = MotoRandom(), MotoRandom()
    for seed in range(500):
        moto_s.seed(seed)
        shim_s.seed(seed)
        assert motoshim._uuid4_hex(shim_s) == moto_s.uuid4().hex


def test_a_put_whose_record_fails_leaves_no_image_values_on_its_item(emulator: Emulator) -> None:
    """Change 19 hands a plain put's values to its record through the item; if adding the
    record fails before the record takes them (here moto's read of the view type), they are
    not left on the item for the record of a later update to take as its image."""
    from moto.dynamodb.models import dynamodb_backends

    ddb = emulator.client("dynamodb")
    streamed_table(ddb, "streams-failed-add", "NEW_IMAGE")
    table = dynamodb_backends["123456789012"][emulator.region].get_table("streams-failed-add")
    specification, table.stream_specification = table.stream_specification, None
    try:
        with pytest.raises(TypeError):
            table.put_item(put_plain(1))
    finally:
        table.stream_specification = specification
    (item,) = [i for partition in table.items.values() for i in partition.values()]
    assert "_stream_values" not in vars(item)
