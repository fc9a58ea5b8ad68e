"""Repair a live DynamoDB table in place from a restored copy of it (DEPLOY.md section 7).

A point-in-time restore always lands in a new table, while the stack's functions, its
stream and its event source mappings stay bound to the live one. The preferred way back is
therefore to repair the live table: compare it with the restored copy item by item, write
back what was lost, and (only when asked) overwrite what was damaged and delete what was
written since the restore point. This module is that comparison and that repair, for staff
to run with `sewerbill table compare` against AWS or the local runtime.

Items are compared in DynamoDB's own JSON (the low-level client's attribute values), so a
number written as "12.50" and read as "12.5" is not mistaken for a change by a conversion of
ours. Writes go in batches of 25 (the BatchWriteItem limit), and what DynamoDB hands back as
unprocessed is sent again with a growing pause, so a throttled table is repaired, not
half-repaired.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

Item = dict[str, Any]
Key = tuple[tuple[str, str], ...]

BATCH = 25


def key_names(client: Any, table: str) -> list[str]:
    """The table's key attribute names, partition key first."""
    schema = client.describe_table(TableName=table)["Table"]["KeySchema"]
    return [k["AttributeName"] for k in sorted(schema, key=lambda k: k["KeyType"] != "HASH")]


def scan(client: Any, table: str) -> Iterator[Item]:
    """Every item of a table, page by page, in DynamoDB JSON (consistent reads)."""
    args: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = client.scan(**args)
        yield from page.get("Items", [])
        last = page.get("LastEvaluatedKey")
        if not last:
            return
        args["ExclusiveStartKey"] = last


def _key(item: Item, names: Sequence[str]) -> Key:
    out = []
    for name in names:
        value = item[name]
        ((kind, text),) = value.items()
        out.append((kind, str(text)))
    return tuple(out)


def _pk_text(key: Key) -> str:
    return key[0][1]


@dataclass
class Comparison:
    """What differs between the live table and the restored copy, by item key.

    `missing` are in the copy and not in the live table (lost since the restore point),
    `changed` are in both with different attributes, `newer` are only in the live table
    (written after the restore point, or items the copy never had).
    """

    live: str
    copy: str
    key_names: list[str]
    same: int = 0
    missing: dict[Key, Item] = field(default_factory=dict)
    changed: dict[Key, tuple[Item, Item]] = field(default_factory=dict)
    newer: dict[Key, Item] = field(default_factory=dict)

    @property
    def equal(self) -> bool:
        return not (self.missing or self.changed or self.newer)

    def summary(self) -> dict[str, int]:
        return {
            "same": self.same,
            "missing": len(self.missing),
            "changed": len(self.changed),
            "newer": len(self.newer),
        }


def _selected(key: Key, prefixes: Sequence[str]) -> bool:
    return not prefixes or any(_pk_text(key).startswith(p) for p in prefixes)


def compare(client: Any, live: str, copy: str, pk_prefixes: Sequence[str] = ()) -> Comparison:
    """Compare two tables with the same key schema, item by item.

    `pk_prefixes` narrows the comparison to items whose partition key starts with one of
    them (e.g. `LEDGER#` to repair only the ledgers).
    """
    names = key_names(client, live)
    copy_names = key_names(client, copy)
    if names != copy_names:
        raise ValueError(f"{copy} has the key {copy_names}, {live} has {names}: not a copy of it")
    result = Comparison(live=live, copy=copy, key_names=names)
    restored: dict[Key, Item] = {}
    for item in scan(client, copy):
        key = _key(item, names)
        if _selected(key, pk_prefixes):
            restored[key] = item
    for item in scan(client, live):
        key = _key(item, names)
        if not _selected(key, pk_prefixes):
            continue
        old = restored.pop(key, None)
        if old is None:
            result.newer[key] = item
        elif old == item:
            result.same += 1
        else:
            result.changed[key] = (item, old)
    result.missing = restored
    return result


@dataclass
class Repair:
    written: int = 0
    overwritten: int = 0
    deleted: int = 0


def _batches(requests: Iterable[Item]) -> Iterator[list[Item]]:
    batch: list[Item] = []
    for request in requests:
        batch.append(request)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _write(
    client: Any,
    table: str,
    requests: Iterable[Item],
    sleep: Callable[[float], None] = time.sleep,
    attempts: int = 8,
) -> int:
    done = 0
    for batch in _batches(requests):
        pending = batch
        for attempt in range(attempts):
            answer = client.batch_write_item(RequestItems={table: pending})
            left = answer.get("UnprocessedItems", {}).get(table, [])
            done += len(pending) - len(left)
            if not left:
                break
            pending = left
            sleep(min(0.05 * 2**attempt, 2.0))
        else:
            raise RuntimeError(f"{table}: {len(pending)} writes still unprocessed after {attempts} attempts")
    return done


def repair(
    client: Any,
    comparison: Comparison,
    overwrite_changed: bool = False,
    delete_newer: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> Repair:
    """Write the copy's missing items back into the live table.

    Changed items are overwritten with the copy's version, and newer items deleted, only
    when asked: an item changed or written after the restore point is usually the
    system's later, correct work (a payment posted since), not damage.
    """
    names = comparison.key_names
    table = comparison.live
    result = Repair()
    result.written = _write(
        client, table, ({"PutRequest": {"Item": i}} for i in comparison.missing.values()), sleep
    )
    if overwrite_changed:
        result.overwritten = _write(
            client, table, ({"PutRequest": {"Item": old}} for _, old in comparison.changed.values()), sleep
        )
    if delete_newer:
        result.deleted = _write(
            client,
            table,
            ({"DeleteRequest": {"Key": {n: item[n] for n in names}}} for item in comparison.newer.values()),
            sleep,
        )
    return result


def describe_key(key: Key, names: Sequence[str]) -> str:
    return " ".join(f"{n}={text}" for n, (_, text) in zip(names, key, strict=True))
