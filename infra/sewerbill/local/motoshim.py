"""What the local runtime changes in moto, in its own process only (never in deployed code).

Three changes, installed by `install()` when the runtime starts moto itself:

1. **A transaction backs up only the items it touches.** moto 5.2.5's
   `transact_write_items` deep-copies every table a transaction names ("Create a backup in
   case any of the transactions fail"), so each transaction costs the size of the table and
   a file taken in with one transaction per row costs the square of its rows. Here the
   backup is the touched items (and each table's stream length) only: moto's own code still
   checks conditions, writes and raises; on failure the shim puts those items back and
   drops the stream records the failed transaction wrote, as DynamoDB does (a cancelled
   transaction leaves no stream record). moto's whole-table copy is made a no-op inside a
   transaction through `Table.__deepcopy__`, and its restore then puts back the same table.
2. **No leak of DynamoDB items.** moto records every model instance in
   `BaseModel.instances_tracked` for its dashboard, so every item and stream record ever
   created (and every transaction's copy) stays alive. For `Item` and `StreamRecord` the
   list is replaced by a counter: nothing is kept, and the count is what the tests read.
3. **Activity.** SQS `Queue.add_message` (sends, EventBridge and S3 deliveries, redrives to
   a DLQ) and `StreamShard.add` (a stream record) tell the runtime which source received
   something, so a drain polls only those instead of every queue and stream.

And `serve_in_process(endpoint)`: boto3 clients in this process (the runtime's and the
handlers') that call moto's endpoint are answered by moto's own WSGI application in the
calling thread (a botocore `before-send` hook, as moto's `mock_aws` does), without a socket
or a hop to the server thread. The same application serves both, on the same backends, so
the answers are the server's; other processes (the CLI, the AWS CLI) still use the server.
"""

from __future__ import annotations

import contextvars
import copy
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import Item
from moto.dynamodb.models.table import StreamRecord, StreamShard, Table
from moto.sqs.models import Queue

_in_transaction: contextvars.ContextVar[bool] = contextvars.ContextVar("in_transaction", default=False)
_listeners: list[Callable[[str, str], None]] = []
_originals: dict[str, Any] = {}
_lock = threading.Lock()


class Created:
    """Stands in for moto's per-class `instances_tracked` list: counts, keeps nothing."""

    def __init__(self) -> None:
        self.count = 0

    def append(self, _instance: object) -> None:
        self.count += 1

    def __iter__(self) -> Iterator[object]:
        return iter(())

    def __len__(self) -> int:
        return 0


class TransactionCost:
    """What the last transactions cost the emulator: items backed up, tables copied."""

    items_backed_up = 0
    tables_copied = 0


def items_created() -> int:
    """DynamoDB `Item` objects moto has created since install (puts, updates and copies)."""
    tracked = Item.instances_tracked  # type: ignore[attr-defined]
    return tracked.count if isinstance(tracked, Created) else len(tracked)


# --- 1. transactions ----------------------------------------------------------------------
def _table_deepcopy(self: Table, memo: dict[int, Any]) -> Table:
    if _in_transaction.get():
        return self  # the shim keeps the touched items itself
    TransactionCost.tables_copied += 1
    clone: Table = object.__new__(type(self))
    memo[id(self)] = clone
    clone.__dict__.update(copy.deepcopy(self.__dict__, memo))
    return clone


class _Undo:
    """The items a transaction touches, as they were, and each table's stream length."""

    def __init__(self, backend: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
        self.items: list[tuple[Table, Any, Any, Item | None]] = []
        self.streams: dict[str, tuple[StreamShard, int]] = {}
        for action in transact_items:
            op_type, op = next(iter(action.items()))
            table = backend.tables.get(op.get("TableName", ""))
            if table is None or op_type == "ConditionCheck":
                continue
            key = op.get("Key") if op_type != "Put" else op.get("Item")
            try:
                hash_key, range_key = backend.get_keys_value(table, key or {})
            except Exception:  # noqa: BLE001 - moto raises its own validation error for it
                continue
            current = table.get_item(hash_key, range_key)
            self.items.append((table, hash_key, range_key, copy.deepcopy(current)))
            TransactionCost.items_backed_up += 1
            if table.stream_shard is not None and table.name not in self.streams:
                self.streams[table.name] = (table.stream_shard, len(table.stream_shard.items))

    def apply(self) -> None:
        for table, hash_key, range_key, before in reversed(self.items):
            if range_key is None:
                if before is None:
                    table.items.pop(hash_key, None)
                else:
                    table.items[hash_key] = before
                continue
            ranges = table.items[hash_key]
            if before is None:
                ranges.pop(range_key, None)
                if not ranges:
                    table.items.pop(hash_key, None)
            else:
                ranges[range_key] = before
        for shard, length in self.streams.values():
            del shard.items[length:]


def _transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
    undo = _Undo(self, transact_items) if len(transact_items) <= 100 else None
    token = _in_transaction.set(True)
    try:
        _originals["transact_write_items"](self, transact_items)
    except Exception:
        if undo is not None:
            undo.apply()
        raise
    finally:
        _in_transaction.reset(token)


# --- 3. activity ------------------------------------------------------------------------------
def _notify(kind: str, name: str) -> None:
    for listener in list(_listeners):
        listener(kind, name)


def _queue_add_message(self: Queue, message: Any) -> None:
    _originals["add_message"](self, message)
    _notify("sqs", self.queue_arn)


def _shard_add(self: StreamShard, old: Any, new: Any) -> None:
    _originals["shard_add"](self, old, new)
    _notify("stream", self.table.name)


@contextmanager
def listening(listener: Callable[[str, str], None]) -> Iterator[None]:
    """Call `listener(kind, name)` ("sqs", queue ARN / "stream", table name) on activity."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)


# --- in-process transport ----------------------------------------------------------------------
_clients: dict[str, Any] = {}  # endpoint URL -> werkzeug test client of moto's application


def _send_in_process(request: Any, **_: Any) -> Any:
    client = next((c for e, c in list(_clients.items()) if request.url.startswith(e + "/")), None)
    if client is None:
        return None
    from botocore.awsrequest import AWSResponse
    from moto.core.botocore_stubber import MockRawResponse

    split = urlsplit(request.url)
    body = request.body
    if hasattr(body, "read"):
        body = body.read()
    headers = [(k, v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()]
    answer = client.open(
        split.path or "/", method=request.method, query_string=split.query, headers=headers, data=body or b""
    )
    return AWSResponse(
        request.url, answer.status_code, dict(answer.headers), MockRawResponse(answer.get_data())
    )


def serve_in_process(endpoint: str) -> None:
    """Answer this process's boto3 calls to `endpoint` with moto's application directly."""
    import boto3
    from botocore.handlers import BUILTIN_HANDLERS
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.test import Client

    with _lock:
        _clients[endpoint] = Client(DomainDispatcherApplication(create_backend_app))
        if ("before-send", _send_in_process) not in BUILTIN_HANDLERS:
            # Every session made from now on, and the default one if it exists already (once:
            # a hook registered twice on a session answers twice, and a streamed body is lost).
            BUILTIN_HANDLERS.append(("before-send", _send_in_process))
            if boto3.DEFAULT_SESSION is not None:
                boto3.DEFAULT_SESSION.events.register("before-send", _send_in_process)


def stop_serving(endpoint: str) -> None:
    with _lock:
        _clients.pop(endpoint, None)


# --- install -----------------------------------------------------------------------------------
def install() -> None:
    """Apply the three changes (idempotent); moto must run in this process to see them."""
    with _lock:
        for model in (Item, StreamRecord):
            if not isinstance(getattr(model, "instances_tracked", None), Created):
                setattr(model, "instances_tracked", Created())  # noqa: B010 - moto's class attribute
        if _originals:
            return
        _originals["transact_write_items"] = DynamoDBBackend.transact_write_items
        _originals["add_message"] = Queue.add_message
        _originals["shard_add"] = StreamShard.add
        DynamoDBBackend.transact_write_items = _transact_write_items  # type: ignore[method-assign]
        Table.__deepcopy__ = _table_deepcopy  # type: ignore[attr-defined]
        Queue.add_message = _queue_add_message  # type: ignore[method-assign]
        StreamShard.add = _shard_add  # type: ignore[method-assign]


def uninstall() -> None:
    """Back to moto as shipped (the benchmark and the tests compare the two)."""
    with _lock:
        if not _originals:
            return
        DynamoDBBackend.transact_write_items = _originals.pop("transact_write_items")  # type: ignore[method-assign]
        Queue.add_message = _originals.pop("add_message")  # type: ignore[method-assign]
        StreamShard.add = _originals.pop("shard_add")  # type: ignore[method-assign]
        del Table.__deepcopy__  # type: ignore[attr-defined]
