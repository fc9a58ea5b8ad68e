"""Small helpers over the low-level DynamoDB client shared by every service's adapters.

Items use the single-table convention of the template: string keys ``pk`` and ``sk``.
Adapters take an injected client (STYLE 3), so tests pass a moto client and the local
runtime passes one pointed at its emulator. Deployed code, so public boto3/botocore APIs only:
items are built and read with boto3's ``TypeSerializer``/``TypeDeserializer``, and the
clients are botocore's own (no private serializer, parser or client attribute replaced).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import boto3
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.config import Config
from botocore.exceptions import ClientError

from common.errors import TransientError

MAX_TRANSACT_ACTIONS = 100
MAX_BATCH_GET = 100

# For the clients of bulk paths (a read file's batches, a chunk of consumptions): botocore's
# client-side check of the request against the API model walks every attribute value of every
# item (a tenth of a 10,000-row read file's CPU, issue 7); DynamoDB checks the same on its
# side, and the adapters bound their inputs before the call (STYLE "bound every input").
BULK_CLIENT = Config(parameter_validation=False)


def plain_answers_client() -> Any:
    """The services' reading client (a daily run's mark, a page of an account): botocore's
    own, with its client-side validation, so a bad call raises botocore's error."""
    return boto3.client("dynamodb")


def bulk_client() -> Any:
    """A DynamoDB client for bulk paths: botocore's own without client-side validation
    (:data:`BULK_CLIENT`). Public APIs only: its request bodies and answers are botocore's
    walk of the model (``tests/benchmarks/bench_dynamo_wire.py`` measures that walk beside
    a serializer that copies plain items as they are)."""
    return boto3.client("dynamodb", config=BULK_CLIENT)


_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


# DynamoDB refusals that say "try again" (conflicts, throttling, a service fault): raised as
# TransientError so the message is retried, then dead-lettered.
TRANSIENT_CODES = frozenset(
    {
        "TransactionConflictException",
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
    }
)


def _attribute(value: Any) -> dict[str, Any]:
    """boto3's ``TypeSerializer.serialize`` with strings and booleans answered first (its own
    answers for them: bulk items are mostly strings); numbers, sets, lists and maps are its own."""
    kind = type(value)
    if kind is str:
        return {"S": value}
    if kind is bool:
        return {"BOOL": value}
    return _serializer.serialize(value)


def _value(attribute: Mapping[str, Any]) -> Any:
    """boto3's ``TypeDeserializer.deserialize`` with a string answered first."""
    if len(attribute) == 1 and "S" in attribute:
        return attribute["S"]
    return _deserializer.deserialize(attribute)


def to_item(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _attribute(v) for k, v in values.items() if v is not None}


def from_item(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _value(v) for k, v in item.items()}


def key_of(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def put_if_absent(table: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """A TransactWriteItems ``Put`` that fails if an item with the same key exists."""
    return {
        "Put": {
            "TableName": table,
            "Item": to_item(values),
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }


class ConditionFailed(Exception):
    """A conditional write found its item already there (``indexes``: the failed actions)."""

    def __init__(self, indexes: list[int]) -> None:
        super().__init__(f"condition failed on transaction actions {indexes}")
        self.indexes = indexes


def transact(client: Any, actions: Sequence[dict[str, Any]]) -> None:
    """Write ``actions`` atomically.

    Raises :class:`ConditionFailed` when a condition did not hold (the caller decides what
    that means in its domain) and :class:`TransientError` for conflicts and throttling.
    """
    if not actions:
        return
    if len(actions) > MAX_TRANSACT_ACTIONS:
        raise ValueError(f"a transaction holds at most {MAX_TRANSACT_ACTIONS} actions, got {len(actions)}")
    try:
        client.transact_write_items(TransactItems=list(actions))
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code == "TransactionCanceledException":
            reasons = exc.response.get("CancellationReasons") or []
            failed = [i for i, r in enumerate(reasons) if r.get("Code") == "ConditionalCheckFailed"]
            if failed:
                raise ConditionFailed(failed) from exc
            raise TransientError(f"transaction cancelled: {reasons}") from exc
        if code in TRANSIENT_CODES:
            raise TransientError(code) from exc
        raise


def batch_get(
    client: Any, table: str, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], dict[str, Any]]:
    """Read many items by (pk, sk); missing ones are absent from the result."""
    wanted = list(dict.fromkeys(keys))
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for start in range(0, len(wanted), MAX_BATCH_GET):
        pending: list[dict[str, Any]] = [key_of(pk, sk) for pk, sk in wanted[start : start + MAX_BATCH_GET]]
        attempts = 0
        while pending:
            attempts += 1
            if attempts > 8:
                raise TransientError("BatchGetItem kept returning unprocessed keys")
            resp = client.batch_get_item(RequestItems={table: {"Keys": pending, "ConsistentRead": True}})
            for raw in resp.get("Responses", {}).get(table, []):
                item = from_item(raw)
                found[(item["pk"], item["sk"])] = item
            pending = resp.get("UnprocessedKeys", {}).get(table, {}).get("Keys", [])
    return found


def get(client: Any, table: str, pk: str, sk: str) -> dict[str, Any] | None:
    resp = client.get_item(TableName=table, Key=key_of(pk, sk), ConsistentRead=True)
    raw = resp.get("Item")
    return from_item(raw) if raw else None


MAX_BATCH_WRITE = 25


def batch_put(client: Any, table: str, items: Iterable[Mapping[str, Any]]) -> int:
    """Put ``items`` with BatchWriteItem, 25 per call, retrying unprocessed ones.

    Not conditional and not atomic (DynamoDB's own limits): use it for items whose
    rewrite with the same content is harmless, in an order that makes a crash harmless
    (see ``metering.app.ingest``). Returns the number of calls made.
    """
    calls = 0
    batch: list[dict[str, Any]] = []

    def flush(requests: list[dict[str, Any]]) -> None:
        nonlocal calls
        attempts = 0
        while requests:
            attempts += 1
            if attempts > 8:
                raise TransientError("BatchWriteItem kept returning unprocessed items")
            calls += 1
            try:
                resp = client.batch_write_item(RequestItems={table: requests})
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code", "")
                if code in {
                    "ProvisionedThroughputExceededException",
                    "ThrottlingException",
                    "RequestLimitExceeded",
                }:
                    raise TransientError(code) from exc
                raise
            requests = resp.get("UnprocessedItems", {}).get(table, [])

    for values in items:
        batch.append({"PutRequest": {"Item": to_item(values)}})
        if len(batch) == MAX_BATCH_WRITE:
            flush(batch)
            batch = []
    if batch:
        flush(batch)
    return calls


def put_new(client: Any, table: str, values: Mapping[str, Any]) -> bool:
    """Put one item unless its key is there; False if it was (a repeat).

    One conditional ``PutItem``: for a single item a transaction adds nothing but its cost
    (on AWS twice the write units; on the embedded default a transaction's bookkeeping).
    Conflicts and throttling raise :class:`TransientError`, as :func:`transact` does.
    """
    try:
        client.put_item(TableName=table, Item=to_item(values), ConditionExpression="attribute_not_exists(pk)")
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code == "ConditionalCheckFailedException":
            return False
        if code in TRANSIENT_CODES:
            raise TransientError(code) from exc
        raise
    return True
