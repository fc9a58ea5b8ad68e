"""Bulk reads and writes on billing's table (injected low-level client).

Writes go in BatchWriteItem requests of 25 (unprocessed items retried), reads as range
queries over one partition; transactions where two items must change together, or where
new items must not overwrite what another writer put meanwhile (`put_all_new`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from botocore.exceptions import ClientError

from common.dynamo import MAX_TRANSACT_ACTIONS, ConditionFailed, batch_get, from_item, to_item, transact
from common.errors import TransientError

BATCH_WRITE_MAX = 25
MAX_ATTEMPTS = 8


class Store:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table
        self.requests: dict[str, int] = {}  # counted requests (the benchmark's cost figures)

    def _count(self, op: str) -> None:
        self.requests[op] = self.requests.get(op, 0) + 1

    def write(self, items: Iterable[dict[str, Any]], deletes: Iterable[tuple[str, str]] = ()) -> int:
        """Put ``items`` (and delete ``deletes``) in batches of 25; returns the items written."""
        requests: list[dict[str, Any]] = [{"PutRequest": {"Item": to_item(i)}} for i in items]
        requests += [{"DeleteRequest": {"Key": {"pk": {"S": pk}, "sk": {"S": sk}}}} for pk, sk in deletes]
        for start in range(0, len(requests), BATCH_WRITE_MAX):
            pending = requests[start : start + BATCH_WRITE_MAX]
            for attempt in range(MAX_ATTEMPTS):
                self._count("BatchWriteItem")
                try:
                    resp = self.client.batch_write_item(RequestItems={self.table: pending})
                except ClientError as exc:
                    code = exc.response.get("Error", {}).get("Code", "")
                    if code in (
                        "ProvisionedThroughputExceededException",
                        "ThrottlingException",
                        "RequestLimitExceeded",
                    ):
                        time.sleep(0.05 * 2**attempt)
                        continue
                    raise
                pending = resp.get("UnprocessedItems", {}).get(self.table, [])
                if not pending:
                    break
                time.sleep(0.02 * 2**attempt)
            else:
                raise TransientError("BatchWriteItem kept returning unprocessed items")
        return len(requests)

    def query(
        self, pk: str, *, prefix: str | None = None, between: tuple[str, str] | None = None
    ) -> Iterator[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "ConsistentRead": True,
            "ExpressionAttributeValues": {":pk": {"S": pk}},
        }
        if prefix is not None:
            kwargs["KeyConditionExpression"] = "pk = :pk AND begins_with(sk, :p)"
            kwargs["ExpressionAttributeValues"][":p"] = {"S": prefix}
        elif between is not None:
            kwargs["KeyConditionExpression"] = "pk = :pk AND sk BETWEEN :a AND :b"
            kwargs["ExpressionAttributeValues"][":a"] = {"S": between[0]}
            kwargs["ExpressionAttributeValues"][":b"] = {"S": between[1]}
        else:
            kwargs["KeyConditionExpression"] = "pk = :pk"
        while True:
            self._count("Query")
            resp = self.client.query(**kwargs)
            for raw in resp.get("Items", []):
                yield from_item(raw)
            last = resp.get("LastEvaluatedKey")
            if not last:
                return
            kwargs["ExclusiveStartKey"] = last

    def accounts_range(self, pk: str, first: str, last: str) -> Iterator[dict[str, Any]]:
        """Items whose sort key starts with an account id between ``first`` and ``last``."""
        return self.query(pk, between=(first, last + "#\uffff"))

    def get_many(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        if not keys:
            return {}
        self._count("BatchGetItem")
        return batch_get(self.client, self.table, keys)

    def get(self, pk: str, sk: str) -> dict[str, Any] | None:
        return self.get_many([(pk, sk)]).get((pk, sk))

    def put_new(self, item: dict[str, Any]) -> bool:
        """A conditional put of one item; False if its key is already there."""
        return self.put_if(item, "attribute_not_exists(pk)")

    def put_all_new(self, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Put each item on condition that its key is not there yet, 100 to a transaction
        (TransactWriteItems: a batch write cannot be conditional); returns the items whose
        key another writer put first (none of them written). A transaction that one of them
        cancels is written again without them, so each call of 100 new items is one request
        when no writer raced it."""
        present: list[dict[str, Any]] = []
        for start in range(0, len(items), MAX_TRANSACT_ACTIONS):
            pending = list(items[start : start + MAX_TRANSACT_ACTIONS])
            while pending:
                self._count("TransactWriteItems")
                try:
                    transact(
                        self.client,
                        [
                            {
                                "Put": {
                                    "TableName": self.table,
                                    "Item": to_item(item),
                                    "ConditionExpression": "attribute_not_exists(pk)",
                                }
                            }
                            for item in pending
                        ],
                    )
                except ConditionFailed as failed:
                    present += [pending[i] for i in failed.indexes]
                    pending = [item for i, item in enumerate(pending) if i not in set(failed.indexes)]
                    continue
                break
        return present

    def put_if(self, item: dict[str, Any], condition: str, values: dict[str, Any] | None = None) -> bool:
        """Put one item if ``condition`` (with its ``values``, typed) holds; False if it did not."""
        self._count("PutItem")
        extra = {"ExpressionAttributeValues": values} if values else {}
        try:
            self.client.put_item(
                TableName=self.table, Item=to_item(item), ConditionExpression=condition, **extra
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True
