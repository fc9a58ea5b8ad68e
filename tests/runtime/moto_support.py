"""What the tests comparing the runtime's shim with moto as shipped share (the `emulator`
fixture is in conftest)."""

from __future__ import annotations

from typing import Any


def make_indexed_table(ddb: Any, name: str) -> None:
    """A table keyed pk/sk with a global secondary index on `v` (the answers of index
    queries go through moto's own path) and a stream of new and old images."""
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "v", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-v",
                "KeySchema": [
                    {"AttributeName": "v", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )


def make_table(ddb: Any, name: str, *, stream: str | None = None, sort_type: str = "S") -> None:
    """A table keyed pk (a string) and sk (``sort_type``), with a stream of the ``stream``
    view type if given."""
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": sort_type},
        ],
        BillingMode="PAY_PER_REQUEST",
        **({"StreamSpecification": {"StreamEnabled": True, "StreamViewType": stream}} if stream else {}),
    )
