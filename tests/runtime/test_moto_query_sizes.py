"""A Query on the table's key pages at 1 MB exactly where moto as shipped pages.

moto sizes each item a Query keeps twice in a row (against the 1 MB page, then into the
page's total); `motoshim._item_size` answers the second from the first. Here a partition of
items of about 100 KB (about ten to a page) and items of every size class is read page by
page, with and without a sort-key condition, forwards and backwards, with the shim and with
moto as shipped: the same items on the same pages, the same last keys.
"""

from __future__ import annotations

from typing import Any

import pytest
from moto_support import make_table

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator

pytestmark = pytest.mark.integration


def _pages(emulator: Emulator, table: str) -> list[Any]:
    ddb = emulator.client("dynamodb")
    make_table(ddb, table)
    for i in range(40):
        # 60-140 KB of text, a number, a list and a map: each size branch of `_value_size`
        extra = {
            "n": {"N": str(i * 1.5)},
            "l": {"L": [{"S": "é"}, {"N": "1"}]},
            "m": {"M": {"k": {"BOOL": True}}},
        }
        ddb.put_item(
            TableName=table,
            Item={
                "pk": {"S": "P"},
                "sk": {"S": f"S#{i:03d}"},
                "text": {"S": "x" * (60_000 + 2_000 * i)},
                **extra,
            },
        )
    pages: list[Any] = []
    for query in (
        {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "P"}}},
        {
            "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": {"S": "P"}},
            "ScanIndexForward": False,
        },
        {
            "KeyConditionExpression": "pk = :p AND sk > :s",
            "ExpressionAttributeValues": {":p": {"S": "P"}, ":s": {"S": "S#007"}},
        },
    ):
        start: dict[str, Any] | None = None
        while True:
            answer = ddb.query(TableName=table, **query, **({"ExclusiveStartKey": start} if start else {}))
            pages.append(([item["sk"]["S"] for item in answer["Items"]], answer.get("LastEvaluatedKey")))
            start = answer.get("LastEvaluatedKey")
            if not start:
                break
    return pages


def test_a_query_pages_at_1_mb_where_moto_as_shipped_pages(emulator: Emulator) -> None:
    fast = _pages(emulator, "sized-fast")
    with motoshim.shipped():
        shipped = _pages(emulator, "sized-shipped")

    assert fast == shipped
    # not vacuous: every query took several pages, each cut by size (about 1 MB of 60-140 KB items)
    assert len(fast) >= 9
    assert all(0 < len(items) < 20 for items, _ in fast)
