"""A transaction on the local stack costs the items it touches, not the size of the table.

Counted, not timed: moto creates a DynamoDB `Item` object for each item it writes or
copies, and `motoshim.items_created()` counts them (the timing is in
tests/benchmarks/bench_schedules.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from moto_support import make_table

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def ddb(emulator: Emulator) -> Any:
    client = emulator.client("dynamodb")
    make_table(client, "tx", stream="NEW_IMAGE")
    return client


def state_and_outbox(n: int) -> list[dict[str, Any]]:
    """The pattern the services use: a state item and its outbox item, both new."""
    new = "attribute_not_exists(pk)"
    return [
        {
            "Put": {
                "TableName": "tx",
                "Item": {"pk": {"S": f"READ#{n}"}, "sk": {"S": "S"}},
                "ConditionExpression": new,
            }
        },
        {
            "Put": {
                "TableName": "tx",
                "Item": {"pk": {"S": f"OUTBOX#{n}"}, "sk": {"S": "E"}},
                "ConditionExpression": new,
            }
        },
    ]


def items_created_by(ddb: Any, n: int) -> int:
    before = motoshim.items_created()
    ddb.transact_write_items(TransactItems=state_and_outbox(n))
    return motoshim.items_created() - before


def test_the_2000th_transaction_on_a_2000_item_table_copies_what_the_first_copies(ddb: Any) -> None:
    first = items_created_by(ddb, 1)
    # Two puts: 2 new items, plus a backup of each touched key (absent, so nothing to copy).
    assert first == 2
    backend = _backend()  # transactions 2..1999 straight into moto: the same code, no HTTP
    for n in range(2, 2000):
        backend.transact_write_items(state_and_outbox(n))
    assert ddb.describe_table(TableName="tx")["Table"]["ItemCount"] == 3998
    assert items_created_by(ddb, 2000) == first


def test_without_the_shim_moto_copies_the_whole_table_per_transaction(ddb: Any) -> None:
    # Proves the count above can fail: moto as shipped deep-copies all ~4,000 items.
    with motoshim.shipped():
        assert items_created_by(ddb, 5000) > 4000


def test_a_cancelled_transaction_leaves_the_items_and_the_stream_as_they_were(ddb: Any) -> None:
    ddb.put_item(TableName="tx", Item={"pk": {"S": "ACCT#1"}, "sk": {"S": "S"}, "balance": {"N": "10"}})
    shard = _stream_length(ddb)
    with pytest.raises(ddb.exceptions.TransactionCanceledException):
        ddb.transact_write_items(
            TransactItems=[
                {
                    "Update": {
                        "TableName": "tx",
                        "Key": {"pk": {"S": "ACCT#1"}, "sk": {"S": "S"}},
                        "UpdateExpression": "SET balance = :b",
                        "ExpressionAttributeValues": {":b": {"N": "99"}},
                    }
                },
                {"Put": {"TableName": "tx", "Item": {"pk": {"S": "NEW#1"}, "sk": {"S": "S"}}}},
                # READ#1 exists: the condition fails and the whole transaction is cancelled.
                {
                    "Put": {
                        "TableName": "tx",
                        "Item": {"pk": {"S": "READ#1"}, "sk": {"S": "S"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )
    got = ddb.get_item(TableName="tx", Key={"pk": {"S": "ACCT#1"}, "sk": {"S": "S"}})["Item"]
    assert got["balance"] == {"N": "10"}
    assert "Item" not in ddb.get_item(TableName="tx", Key={"pk": {"S": "NEW#1"}, "sk": {"S": "S"}})
    assert _stream_length(ddb) == shard  # a cancelled transaction writes no stream record


def test_items_are_not_kept_alive_for_moto_s_dashboard() -> None:
    from moto.dynamodb.models.dynamo_type import Item
    from moto.dynamodb.models.table import StreamRecord

    assert list(Item.instances_tracked) == []  # type: ignore[attr-defined]
    assert list(StreamRecord.instances_tracked) == []  # type: ignore[attr-defined]


def _backend() -> Any:
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends["123456789012"]["us-east-1"]


def _stream_length(ddb: Any) -> int:
    return len(_backend().tables["tx"].stream_shard.items)
