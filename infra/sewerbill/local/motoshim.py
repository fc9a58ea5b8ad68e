"""What the local runtime changes in moto, in its own process only (never in deployed code).

The changes reproduce and replace moto internals of one release, `MOTO_VERSION` (pinned
exactly in pyproject.toml and the lock files); `install()` refuses any other release, since on
another the replaced functions may no longer be moto's own with one change.

Twenty-one changes, installed by `install()` when the runtime starts moto itself:

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
3. **DynamoDB answers serialised as JSON directly.** moto 5.2's generic response serializer
   walks the botocore output shape for every value (about 140 ms for a 1,000-record
   `GetRecords`, a third of a read file's time). For the data-plane operations in `FAST_JSON`
   moto's result is already the wire form (attribute values as `{"S": ...}` maps), so the
   shim writes it with `json.dumps` (timestamps as epoch seconds, bytes as base64, the same
   conversions the serializer makes, and capacity units as doubles, `_as_doubles`); every other operation, and every error, still goes
   through moto's serializer. `tests/runtime/test_moto_fast_json.py` parses both answers with
   botocore and requires them equal.
4. **The backend for a host is looked up once.** moto's dispatcher lists its package
   directory (`os.listdir` and an `isdir` per service) and then tries every service's URL
   pattern for each request; the answer depends on the host only, so it is cached. So are
   the action names of a response class (moto lists them with `inspect.getmembers` on every
   request).
5. **Requests and items without quadratic bookkeeping.** For the same data-plane operations
   a request body that holds no binary attribute is read with `json.loads` (moto's shape
   parser returns exactly that for such bodies, and costs a walk of every value), and an
   `Item` built from a request sums its size once instead of re-summing every attribute
   each time one is added (moto's `LimitedSizeDict`: quadratic in the attributes); an item
   over the 400 KB limit is still refused by moto's own code. An item's size (and `Item.size()`,
   which a BatchGetItem answer asks twice per item) reads a string's or a number's size
   directly instead of through moto's chain of type tests (`tests/runtime/test_moto_item_size.py`
   compares the two on every attribute type).
6. **Sends that do not count the queue, rules that do not rebuild a parser.** moto's
   `send_message` reads `queue.attributes` for one flag, and that property counts every
   message in the queue three times (a clock read per message), so each send costs the
   queue's depth and a deep queue fills in quadratic time; while a message is sent the
   counts are left out (`GetQueueAttributes` still counts), and a receive reads the clock once,
   not twice per queued message. EventBridge rules build a new
   JSONPath parser (its LR tables read again) for every event and target; the parsed paths
   are cached. And moto tries every rule on the bus with a JSON round trip and a flattening
   of the whole event (a bill's event is 2 KB; 10,000 of them against a dozen rules were a
   quarter of a billing cycle's time): a rule whose pattern lists plain strings at a key
   where the event holds another string is skipped first, the answer moto's matcher gives
   (`tests/runtime/test_moto_event_rules.py` compares the deliveries with moto as shipped).
   moto's `PutEvents` then builds each event's message for every rule on the bus (a deep
   copy, the detail parsed again, two clock reads), and for each matched SQS target fills a
   JSONPath template and parses it back: here the message, its flattened view and the
   body are made once per event, matched by moto's own matcher (a pattern's entries on the
   source and detail type once per kind of event, the rest on the flattened view, made only
   when a rule needs it), with one clock reading per event, and each body goes into a
   standard queue as moto's `send_message` puts it there, without its attribute dictionary
   (`test_moto_event_delivery.py`); whatever moto's template would alter, and every other
   kind of target, takes moto's own path (the same test, byte for byte). A send looks up a
   queue attribute's name with a regex once per name.
7. **A Query reads its partition, not the table.** moto's `Table.query` on the table's own
   key takes `all_items()` (every item of the table, sorted) and keeps those of the hash key,
   so each Query costs the size of the table (a 10,000-account cycle's chunk queries walked
   every bill, entry and account). During such a query `all_items()` returns the partition's
   items only (those its sort-key condition keeps, the same test moto's loop makes, with the
   comparison and its bounds looked up once per query, not once per item); moto's
   query then sorts, pages, filters and projects them as shipped. The partition's sort keys
   are kept in order (sorted once, then kept in step by `Table.put_item`/`delete_item`;
   rebuilt when the partition is another dictionary or has another number of keys, and
   after a transaction is undone), so a Query on a sort-key range (=, <, <=, >, >=,
   BETWEEN, begins_with) bisects to its range and starts after its `ExclusiveStartKey`
   instead of testing every item of the partition and skipping the earlier pages item by
   item; with a `Limit` it hands moto one item past the limit (how moto sees that there is
   a next page). moto still tests, skips and pages what it gets, as shipped.
   Queries on an index, and scans, are unchanged. Nor is the answer copied: moto deep-copies
   the items a Query found before converting them (`dynamo_to_dict`) into the dictionaries
   it writes out; a Query that neither projects nor reads an index hands the items
   themselves to that conversion (which only reads them), and the conversion takes string,
   number, boolean and null attributes directly (the rest is moto's own).
8. **Activity.** SQS `Queue.add_message` (sends, EventBridge and S3 deliveries, redrives to
   a DLQ) and `StreamShard.add` (a stream record) tell the runtime which source received
   something, so a drain polls only those instead of every queue and stream.
9. **A stream record is measured when it is read.** moto's `StreamRecord.__init__` JSON-dumps
   the record's `dynamodb` part only to set `SizeBytes`; here the record is built as moto
   builds it and measured by the same dump the first time `to_json()` reads it (its images
   are copies of the item, so a later update of the item does not change the measure). The
   runtime's stream poller reads moto's records (`stream_entries`) and filters on them
   before sizing and converting, so the records an outbox filter drops (almost all of a
   read file's) are never measured (`tests/runtime/test_moto_stream_records.py`). A record
   holds only the images its stream's view type keeps (moto copied the old item of every
   MODIFY on a NEW_IMAGE stream, then dropped it), and an image of an item of plain strings,
   numbers, binaries, booleans and nulls is made without moto's type tests (`_image`; the same
   test module compares every view type with moto as shipped).
10. **A receive hands out a message without a deep copy or 185 random draws.** moto's
   `receive_message` deep-copies each message it hands out (only so that filtering the
   copy's message attributes leaves the queued message's alone), and each copy goes into
   `Message.instances_tracked`, kept alive for the process's life; and each receive makes
   the message's new receipt handle with 185 calls to `random.choice`. Together about half
   of a scheduled firing's receive. Here the copy is the message's fields with its dicts and
   lists deep-copied (the same values, nothing shared that moto or its caller changes), not
   tracked; and the handle is 185 lowercase letters from one draw of 185 random bytes of
   moto's own (seedable) random source. Visibility, receive counts, FIFO groups and the
   redrive are moto's code as shipped (`tests/runtime/test_moto_fast_json.py` runs the SQS
   scenario on moto as shipped and with the shim and requires the same answers).
11. **A batch's duplicate check without a dump of every item.** moto's `batch_write_item`
   JSON-dumps every put item to look for duplicates, and `_contains_duplicates` compares
   each key with every other (4,950 comparisons for a BatchGetItem of 100 keys). Here the
   dumps are made only when two items could be duplicates, and plain keys go through a set
   (`_batch_write_item`, `_contains_duplicates`); whenever either is made, the check is
   moto's own (`tests/runtime/test_moto_batch_write.py` compares answers, errors and tables).
   A request's handler looks its backend up once, not once per item (`_handler_backend`).
12. **A JSON answer is not searched for `<RequestId>`.** moto's `_enrich_response` runs a
   look-behind regex at every position of every answer (a 1 MB Query page); a text body
   without the literal tag is left as the regex leaves it, the headers set by moto's own
   function (`_enrich_response`; `tests/runtime/test_moto_enrich_response.py`).
13. **An unconditional put without moto's generic walks.** moto's `Table.put_item` walks
   every value through `_validate_item_types` (which finds nothing to refuse in strings,
   numbers, booleans and true nulls), makes every key and value with `DynamoType`'s chain of
   type tests, and hashes each key lookup through `cast_value`'s five tests: about a third of
   a put, and a read file puts two items a row. A put without a condition is moto's step for
   step (`_plain_put`: the same checks, lookup, item, store and stream record), with that walk
   skipped for plain items and plain values made directly; `DynamoType`'s hash and equality
   answer two strings first (`_dynamo_hash`, `_dynamo_eq`). A condition, an odd value or a
   bad key takes moto's own path (`tests/runtime/test_moto_plain_put.py`).
14. **SQS reads the clock without re-making the epoch.** moto's SQS models call `unix_time`
   (or `unix_time_millis`) seven times for a scheduled firing's send, receive and delete,
   and each call makes the epoch again (`utcfromtimestamp(0)`, with an import). Here the
   same function of moto's clock (`utcnow`, read as moto reads it) with the epoch made once,
   the same arithmetic and so the same float (`_sqs_unix_time`); and a received message's
   empty dicts, lists and sets are copied as new empty ones rather than through
   `copy.deepcopy` (`_field_copy`, change 10's copy), as is the set of a queue's pending
   message groups (strings: a new set of the same strings). `tests/runtime/test_moto_sqs_clock.py`
   compares them with moto as shipped. moto's `utcnow` itself (an import and an aware time
   made naive again, 2 us) is read as `datetime.utcnow()` on Python 3.11, the same reading
   (`_utcnow_of`: a module's replaced clock is still called), by these SQS models and by
   each stream record change 9 makes (a read file's 20,000: about 40 ms).
15. **A request's action name and missing headers without exceptions.** For every request
   moto converts the action's name with `camelcase_to_underscores` (a regex-free loop that
   catches an `IndexError` at the last letter): kept per name (`_camelcase_to_underscores`,
   a pure function). And the direct path's handler (`_dynamodb_handler_cheaply`) carries its
   headers in a werkzeug `Headers` whose `get` and `in` answer a missing name without
   raising and catching werkzeug's `BadRequestKeyError` (`_headers_class`; moto asks three
   names a DynamoDB request lacks). `tests/runtime/test_moto_direct_dispatch.py` compares
   the answers byte for byte; `tests/runtime/test_moto_sqs_clock.py` the two functions.
16. **A forward Query on the table's key pages its range itself.** After change 7 moto's
   `Table.query` still sorts what it is handed and tests the key condition on every item
   (a third of a 10,000-account cycle's query time). A forward query on the table's own key
   (no index, no legacy QueryFilter, a condition on the sort key `_in_order` knows) takes
   the partition's ordered keys in the range, after the start key, and pages them as
   moto's loop does: up to the limit or the 1 MB page (each item measured by `Item.size`),
   an item that follows a full page (in range or not) giving the next-page key moto gives;
   then moto's own copy, filter expression and projection (`_query_in_order`). Anything
   else is moto's query (`test_moto_fast_json.py`, `test_moto_query_sizes.py`).
17. **A rule on the detail's keys without flattening the event.** Change 6 still flattens
   every event for a rule whose pattern looks into the detail (stormwater's rule on a
   BillIssued's tenant: each of a cycle's 10,000 bills, 2 KB each). A pattern whose rest is
   only lists of filters on top-level keys of the detail, each without a dot, is asked of
   the detail's own values (`_detail_filters`) by moto's own filter test: the values moto's
   flattened view holds under those names (nothing else of the message flattens to them).
   `test_moto_event_delivery.py` compares the answers with moto's matcher on the edge shapes.
   The ids of the events and of the messages they become are written from moto's random
   draw directly (`_uuid4_text`, the same text as moto's `uuid4()`).
18. **A plain put's values made once.** Change 13's put walked a plain item's attributes
   three times: once to find it plain, once to make its values (`_item_init`), once to sum
   their size. `_plain_values` does all three in one pass, and the item is made from those
   values by moto's `Item.__new__` (`_plain_item`: the same three fields `_item_init` sets);
   an item over moto's size limit is still refused by moto's own constructor. A read file
   puts two items a row (issue 7). `tests/runtime/test_moto_plain_put.py` compares the answers,
   errors, tables and stream records with moto as shipped. And a BatchGetItem sizes each item
   it answers once, not twice in a row (`_batch_get_item`: the second `size()` is the first,
   as change 7 does for a Query; `tests/runtime/test_moto_batch_write.py`).
19. **A plain put's stream image made when its record is read.** moto's `StreamRecord`
   copies the new item into its record at the put (change 9's `_image`: a dictionary per
   attribute), and a read file's 20,000 records are all but 200 dropped by the outbox
   mappings' filters, which read only the event name and the keys (py-spy: `_image` was 61
   of the runtime process's 1,003 samples of a 10,000-row read file). For an item change 18 made from a put's plain values, the
   record keeps those values (`_stream_values`: a dictionary of their own, not the item's
   attributes, and each value immutable: an update puts new values into the item, never
   changes these), and the image is made from them when the record is first read, with
   `to_json()` before it is sized, or with `imaged()` (`_stream_record_imaged`), at the place
   in the record where moto puts it, as moto's `Item.to_json()` makes it for such values
   (`{type: value}`). The runtime's poller filters on the record without it unless a filter
   reads an image (`sources._reaches_images`). And `StreamShard.add` appends the record
   without importing moto's Lambda backend for its loop over the table's moto mappings
   (none: the runtime's pollers are its own) on every record (`_shard_add`).
   `tests/runtime/test_moto_stream_records.py`
   compares every view type, an item updated after its put's record, and the poller's
   answers with moto as shipped.
20. **A BatchGetItem of string keys looked up directly.** moto's `batch_get_item` makes both
   key values of every key with `DynamoType`'s constructor, finds the table again
   (`get_table`) and goes through `get_keys_value` and `Table.get_item`, which raises and
   catches a `KeyError` for every key not found: a read file's 400 BatchGetItems of 100 keys
   (metering's meters and accounts, billing's projections) took about 0.35 s of the
   runtime's CPU (thread time of the handler). A request of keys only (`Keys`,
   `ConsistentRead`) whose key attributes are strings, on tables that exist, is answered by
   `_batch_get_plain`: moto's checks (100 keys, duplicates) first, leaving any request that
   fails one to moto's own code, then the same lookups in the table's own dictionaries (a
   miss leaves the same empty partition moto's leaves), the same sizes and 16 MB limit, and
   the same answer built by moto's `DynamoResult`; about 60 ms less in one measure.
   Anything else (a projection, attribute names, another key type, an unknown table) is
   moto's (`tests/runtime/test_moto_batch_write.py` compares whole answers and tables, and
   which requests the shim answers itself).
21. **A rule's delivery known to lack its account.** The runtime puts back the `account`
   moto's default template drops (`sources.fill_eventbridge_account`), and parsed every
   delivered body to see that its top level lacks one (a read file's 200 chunk events, tens
   of KB each: 17 of 430 samples of the runtime process in one profile). A body change 6's `_deliver`
   puts into a queue is that template's event as `_put_events` wrote it (`id`,
   `detail-type`, `source`, `detail`, no `account`): the message is marked
   (`default_event`, kept by moto's receive copies and redrives), `DirectSqs.receive_message`
   names the marked messages it hands out (`default_events`), and the poller writes the
   account in front of their bodies without parsing them; any other message is parsed as
   before (`tests/runtime/test_moto_event_delivery.py` compares the records).

And `DirectSqs`: the runtime's own SQS calls (the scheduler's sends, the pollers' receives,
deletes and visibility changes) made on moto's SQS backend directly, with the backend
methods moto's API calls (see the class).

And `serve_in_process(endpoint)`: boto3 clients in this process (the runtime's and the
handlers') that call moto's endpoint are answered by moto's own WSGI application in the
calling thread (a botocore `before-send` hook, as moto's `mock_aws` does), without a socket
or a hop to the server thread. The same application serves both, on the same backends, so
the answers are the server's; other processes (the CLI, the AWS CLI) still use the server.
The clients made here from then on hand a JSON-protocol call (DynamoDB, EventBridge, SQS)
over before botocore builds its HTTP request (`worker.answered_by`, as a function worker
does over its pipe): botocore serializes the call and parses the answer as always, without
the request object, its signing and events, and the retry checks in between.
A DynamoDB or EventBridge request (while the shim is installed) skips werkzeug's test
environment and Flask: it goes to `DynamoHandler.dispatch` / `EventsHandler.dispatch`, the
callback moto's Flask route calls, with the request, URL and headers that route would pass
(a third of a small call's cost was Flask's). A data-plane DynamoDB request with a plain JSON
body goes further: to `DynamoHandler.call_action`, with the handler's attributes set from the
request as `setup_class` sets them, without moto's werkzeug `Request` (`_dynamodb_handler_direct`;
`tests/runtime/test_moto_direct_dispatch.py` compares the raw answers byte for byte), and so
does an EventBridge `PutEvents` (to `EventsHandler.call_action`, set up by the same
`_handler_from_request`; `tests/runtime/test_moto_event_delivery.py`).
"""

from __future__ import annotations

import base64
import bisect
import calendar
import contextvars
import copy
import functools
import importlib.metadata
import json
import sys
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlparse, urlsplit

import moto.core.utils as moto_core_utils
import moto.dynamodb.models.table as moto_table_module
from moto.core.responses import ActionResult, BaseResponse
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict
from moto.dynamodb.models.table import StreamRecord, StreamShard, Table
from moto.dynamodb.models.utilities import bytesize
from moto.sqs.models import Queue

from sewerbill.local import table_import
from sewerbill.local.worker import answered_by

MOTO_VERSION = "5.2.5"
"""The moto release the changes were written against (pyproject.toml pins the same)."""


class MotoVersionError(RuntimeError):
    """The installed moto is not the release the shim was written for."""


def require_moto_version() -> None:
    """Refuse to patch a moto other than `MOTO_VERSION`, naming both releases."""
    found = importlib.metadata.version("moto")
    if found != MOTO_VERSION:
        raise MotoVersionError(
            f"the local runtime was built for moto {MOTO_VERSION} and found moto {found}: "
            f"its changes to moto replace that release's internals. Install from the lock "
            f"file (make install, requirements/dev.txt) or update the shim to moto {found}."
        )


_in_transaction: contextvars.ContextVar[bool] = contextvars.ContextVar("in_transaction", default=False)
_listeners: list[Callable[[str, str], None]] = []
_originals: dict[str, Any] = {}
_lock = threading.Lock()
# Held while a stream record is appended and while `sewerbill.local.retention` drops old
# ones, so a record's sequence number (the shard's starting number plus its place) is never
# computed from a starting number that is moving.
stream_lock = threading.Lock()


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
        self.streams: dict[str, tuple[StreamShard, int]] = {}  # shard, its next sequence number
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
                shard = table.stream_shard
                self.streams[table.name] = (shard, shard.starting_sequence_number + len(shard.items))

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
        with stream_lock:  # by sequence number: old records may have been dropped meanwhile
            for shard, end in self.streams.values():
                del shard.items[max(0, end - shard.starting_sequence_number) :]
        for table in {id(t): t for t, *_ in self.items}.values():
            _forget_orders(table)  # the undo set the items back without put_item/delete_item


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


# --- 3. answers as JSON -------------------------------------------------------------------------
FAST_JSON = {
    "dynamodb": frozenset(
        {
            "GetItem",
            "PutItem",
            "UpdateItem",
            "DeleteItem",
            "Query",
            "Scan",
            "BatchGetItem",
            "BatchWriteItem",
            "TransactGetItems",
            "TransactWriteItems",
        }
    ),
    "dynamodbstreams": frozenset({"GetRecords"}),
}
_JSON_CONTENT_TYPE = {
    "dynamodb": "application/x-amz-json-1.0",
    "dynamodbstreams": "application/x-amz-json-1.0",
}


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):  # moto's JSON serializer: unix timestamp, milliseconds kept
        base = calendar.timegm(value.utctimetuple())
        return base + (value.microsecond // 1000) / 1000.0 if value.microsecond else base
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, set | frozenset):
        return list(value)
    raise TypeError(f"not serialisable here: {type(value).__name__}")


def _serialized(self: BaseResponse, action_result: ActionResult) -> Any:
    fast = FAST_JSON.get(self.boto3_service_name)
    result = action_result.result
    if (
        fast is not None
        and isinstance(result, dict)
        and type(action_result).execute_result is ActionResult.execute_result
    ):
        if self._get_action() in fast:
            if "ConsumedCapacity" in result:  # capacity units are doubles on the wire (1.0, not 1)
                result = {**result, "ConsumedCapacity": _as_doubles(result["ConsumedCapacity"])}
            try:
                body = json.dumps(result, default=_json_default, separators=(",", ":"))
            except TypeError:
                pass  # something moto's serializer knows better: let it answer
            else:
                headers = {"Content-Type": _JSON_CONTENT_TYPE[self.boto3_service_name]}
                headers.update(self.response_headers)
                return 200, headers, body
    return _originals["serialized"](self, action_result)


def _as_doubles(value: Any) -> Any:
    """``value`` (a ConsumedCapacity: a map or a list of maps) with its whole numbers made
    floats, as moto's serializer writes the model's ``Double`` capacity units (``2.0``; moto
    counts a BatchGetItem's units as an int)."""
    if isinstance(value, dict):
        return {k: _as_doubles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_doubles(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


# --- 4. backend by host ---------------------------------------------------------------------------
_backend_for_host: dict[str | None, Any] = {}


def _get_backend_for_host(self: Any, host: str | None) -> Any:
    try:
        return _backend_for_host[host]
    except KeyError:
        backend = _backend_for_host[host] = _originals["get_backend_for_host"](self, host)
        return backend


_method_names: dict[type, frozenset[str]] = {}


def _method_names_from_class(clazz: Any) -> frozenset[str]:
    """moto's `method_names_from_class` (every function of a response class, found with
    `inspect.getmembers` on every request) once per class: a class's methods do not change."""
    try:
        return _method_names[clazz]
    except KeyError:
        names = _method_names[clazz] = frozenset(_originals["method_names_from_class"](clazz))
        return names


# --- 5. requests and items ------------------------------------------------------------------------
def _parse_parameters(self: BaseResponse, request: Any) -> None:
    fast = FAST_JSON.get(self.boto3_service_name)
    if fast is not None and self._get_action() in fast:
        body = request.data
        if body and b'"B"' not in body and b'"BS"' not in body:
            self.params = json.loads(body)
            return
    _originals["parse_parameters"](self, request)


_ITEM_LIMIT = 405000  # moto's own figure (LimitedSizeDict)


def _value_size(value: DynamoType) -> int:
    """`DynamoType.size()` with its two commonest types answered first: a string's UTF-8 bytes
    and a number's text (moto's own branches for them); any other type asks moto."""
    kind = value.type
    if kind == "S":
        return len(value.value.encode("utf-8"))
    if kind == "N":
        return len(str(value.value))
    return int(value.size())


def _item_size(self: Item) -> int:
    """`Item.size()` (a BatchGetItem answer sizes each item twice, a put sizes it once) without
    moto's type tests per attribute (`is_number`, `is_set`, `is_list`, `is_map`, in turn).
    During a Query on the table's key, moto's loop sizes each item it keeps twice in a row
    (against the 1 MB page, then into the page's total), and a BatchGetItem each item it
    answers (change 18): the second answer is the first (`_last_sized`: nothing changes the
    item between the two)."""
    held = _last_sized.get()
    if held is not None and held[0] is self:
        return int(held[1])
    size = sum(bytesize(k) + _value_size(v) for k, v in self.attrs.items())
    if held is not None:
        held[0], held[1] = self, size
    return size


# The last item `_item_size` measured and its size, while a Query on the table's key (change 7)
# or a BatchGetItem (change 18) is answered: each sizes an item twice in a row.
_last_sized: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("last_sized", default=None)


def _dynamo_type(value: Any) -> DynamoType:
    """`DynamoType(value)`: a request's ``{tag: value}`` of one tag other than a list's or a
    map's is made directly (`_plain_type`); anything else by moto's constructor."""
    if type(value) is dict and len(value) == 1:
        for tag, inner in value.items():
            if tag != "L" and tag != "M":
                return _plain_type(tag, inner)
    return DynamoType(value)


def _item_init(self: Item, hash_key: Any, range_key: Any, attrs: dict[str, Any]) -> None:
    values = {k: _dynamo_type(v) for k, v in attrs.items()}
    if sum(bytesize(k) + _value_size(v) for k, v in values.items()) > _ITEM_LIMIT:
        _originals["item_init"](self, hash_key, range_key, attrs)  # raises ItemSizeTooLarge
        return
    _item_fields(self, hash_key, range_key, values)


def _item_fields(item: Item, hash_key: Any, range_key: Any, values: dict[str, DynamoType]) -> None:
    """The three fields moto's `Item.__init__` sets, from values already made (its attributes
    in a `LimitedSizeDict`, filled without its per-key size checks: the caller checked the
    item's size)."""
    item.hash_key = hash_key
    item.range_key = range_key
    item.attrs = LimitedSizeDict()
    dict.update(item.attrs, values)


# --- 6. sends and rules ------------------------------------------------------------------------------
_sending: contextvars.ContextVar[bool] = contextvars.ContextVar("sending", default=False)


def _visible_messages(self: Queue) -> list[Any]:
    """moto's `Queue.messages` (visible and not delayed), reading the clock once per call
    instead of twice per message (a receive on a deep queue)."""
    from moto.core.utils import unix_time_millis

    now = unix_time_millis()
    return [m for m in self._messages if now > m.visible_at and not now < m.delayed_until]


def _retained(self: Any, queue_name: str, message: Any) -> bool:
    """moto's `SQSBackend.is_message_valid_based_on_retention_period` (asked once for every
    message a receive hands out), reading the queue's retention period itself: moto reads
    it through `get_queue_attributes`, which builds the queue's whole attribute dict (every
    message counted, every name converted) three times for one value."""
    from moto.core.utils import unix_time

    period = self.get_queue(queue_name).message_retention_period
    return bool(period + message.sent_timestamp / 1000 > unix_time())


# moto's receipt handle alphabet (lowercase letters) for each of a random byte's values
_HANDLE_LETTERS = bytes(ord("a") + value % 26 for value in range(256))


def _receipt_handle() -> str:
    """A receipt handle of moto's form (185 lowercase letters) from moto's random source."""
    from moto.moto_api._internal import mock_random

    return mock_random.randbytes(185).translate(_HANDLE_LETTERS).decode()


def _message_copy(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """`copy.deepcopy` as moto's SQS models call it, except that a `Message` is copied field
    by field (its dicts and lists deep-copied, its strings and numbers shared) without
    `BaseModel.__new__`, which keeps every copy in `instances_tracked`."""
    from moto.sqs.models import Message

    if memo is None and type(value) is set and all(type(v) is str for v in value):
        return set(value)  # a queue's pending message groups: deepcopy's answer for strings
    if type(value) is not Message:
        return copy.deepcopy(value, memo)
    clone = object.__new__(Message)
    clone.__dict__.update({k: _field_copy(v) for k, v in value.__dict__.items()})
    return clone


def _field_copy(value: Any) -> Any:
    """A message field as `_message_copy` copies it: a dict, list or set deep-copied, an
    empty plain one as a new empty one (what `copy.deepcopy` makes of it, without its memo
    and dispatch: most of a message's dicts are empty), anything else shared."""
    kind = type(value)
    if kind in _EMPTY_COPIES and not value:
        return kind()
    return copy.deepcopy(value) if isinstance(value, (dict, list, set)) else value


_EMPTY_COPIES = (dict, list, set)


def _install_receive(install: bool) -> None:
    import moto.sqs.models as sqs_models

    if install:
        _originals["receipt_handle"] = sqs_models.generate_receipt_handle
        _originals["sqs_deepcopy"] = sqs_models.deepcopy
        sqs_models.generate_receipt_handle = _receipt_handle
        sqs_models.deepcopy = _message_copy  # type: ignore[assignment]
    else:
        sqs_models.generate_receipt_handle = _originals.pop("receipt_handle")
        sqs_models.deepcopy = _originals.pop("sqs_deepcopy")


def _install_retention(install: bool) -> None:
    from moto.sqs.models import SQSBackend

    if install:
        _originals["retained"] = SQSBackend.is_message_valid_based_on_retention_period
        SQSBackend.is_message_valid_based_on_retention_period = _retained  # type: ignore[method-assign]
    else:
        SQSBackend.is_message_valid_based_on_retention_period = _originals.pop("retained")  # type: ignore[method-assign]


_MOTO_UTCNOW = moto_core_utils.utcnow  # moto's own clock function, as shipped
_UTCNOW_WITHOUT_WARNING = sys.version_info < (3, 12)  # 3.12 deprecates datetime.utcnow()


def _utcnow_of(module: Any) -> datetime:
    """``module.utcnow()``: moto's clock as one of its modules reads it. moto's own `utcnow`
    (`datetime.now(UTC).replace(tzinfo=None)`, after an import, 2 us) is answered by
    `datetime.utcnow()` where Python has it without a warning (0.1 us): the same reading of
    the system clock in the same form, a naive UTC time (CPython makes both with
    `datetime_best_possible` on `gmtime`). A replaced one (a test's fixed clock) is called."""
    now = module.utcnow
    if now is _MOTO_UTCNOW and _UTCNOW_WITHOUT_WARNING:
        return datetime.utcnow()
    return now()


def _sqs_unix_time(dt: datetime | None = None) -> float:
    """moto's `unix_time` as its SQS models call it: moto's clock (`utcnow`) read as moto
    reads it and the same arithmetic (so the same float), with the epoch made once instead of
    by a `utcfromtimestamp(0)` and its import on every call (a scheduled firing's send,
    receive and delete read the clock seven times)."""
    return _unix_time(dt or _utcnow_of(moto_core_utils))


def _sqs_unix_time_millis(dt: datetime | None = None) -> float:
    """moto's `unix_time_millis`: `unix_time(dt) * 1000.0`."""
    return _sqs_unix_time(dt) * 1000.0


def _install_sqs_clock(install: bool) -> None:
    import moto.sqs.models as sqs_models

    if install:
        _originals["sqs_unix_time"] = sqs_models.unix_time
        _originals["sqs_unix_time_millis"] = sqs_models.unix_time_millis
        sqs_models.unix_time = _sqs_unix_time
        sqs_models.unix_time_millis = _sqs_unix_time_millis
    else:
        sqs_models.unix_time = _originals.pop("sqs_unix_time")
        sqs_models.unix_time_millis = _originals.pop("sqs_unix_time_millis")


_COUNTS = frozenset(
    {
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesDelayed",
        "ApproximateNumberOfMessagesNotVisible",
    }
)


def _queue_attributes(self: Queue) -> dict[str, Any]:
    if not _sending.get():
        return _originals["queue_attributes"].fget(self)
    # moto's property as shipped, without the three counts (nothing on the send path reads them)
    result: dict[str, Any] = {}
    names = [a for a in self.BASE_ATTRIBUTES if a not in _COUNTS]
    if self.fifo_queue:
        names += self.FIFO_ATTRIBUTES
    if self.kms_master_key_id:  # type: ignore[attr-defined]
        names += self.KMS_ATTRIBUTES
    for name in names:
        result[name] = getattr(self, _attribute_name(name))
    if self.policy:
        result["Policy"] = self.policy
    if self.redrive_policy:
        result["RedrivePolicy"] = json.dumps(self.redrive_policy)
    return {k: str(v).lower() if isinstance(v, bool) else v for k, v in result.items()}


@functools.lru_cache(maxsize=128)
def _attribute_name(name: str) -> str:
    """moto's attribute of a queue attribute's name (its regex conversion, once per name)."""
    from moto.core.utils import camelcase_to_underscores

    return str(camelcase_to_underscores(name))


def _send_message(self: Any, *args: Any, **kwargs: Any) -> Any:
    token = _sending.set(True)
    try:
        return _originals["send_message"](self, *args, **kwargs)
    finally:
        _sending.reset(token)


def _cannot_match(pattern: Any, event: Any) -> bool:
    """True when a key of ``pattern`` lists plain strings only and the event holds a string
    there that is none of them: moto's matcher (every key must match) would say no."""
    if not isinstance(pattern, dict) or not isinstance(event, dict) or any("." in k for k in event):
        return False  # (a key with a dot could meet a nested one in moto's flattened view)
    for key, wanted in pattern.items():
        value = event.get(key)
        if isinstance(wanted, dict) and key != "$or":
            if _cannot_match(wanted, value):
                return True
        elif (
            isinstance(wanted, list)
            and wanted
            and isinstance(value, str)
            and all(isinstance(w, str) for w in wanted)
            and value not in wanted
        ):
            return True
    return False


def _send_to_targets(self: Any, event: dict[str, Any], transform_input: bool = True) -> None:
    if _cannot_match(self.event_pattern.get_pattern(), event):
        return
    _originals["send_to_targets"](self, event, transform_input)


@functools.lru_cache(maxsize=256)
def _jsonpath(expression: str) -> Any:
    return _originals["jsonpath_parse"](expression)


# --- 6b. PutEvents: each event built, matched and written once -------------------------------------
def _plain(text: Any, *, in_json: bool) -> bool:
    """True when moto's default input template would carry ``text`` unchanged: no ``<``
    (its placeholders are replaced one after the other, inside what was already put in)
    and, for a value put between quotes unescaped (``in_json`` False), no quote, backslash
    or control character."""
    if not isinstance(text, str) or "<" in text:
        return False
    return in_json or ('"' not in text and "\\" not in text and all(c >= " " for c in text))


@functools.lru_cache(maxsize=1024)
def _sqs_queue_of(arn: str) -> str | None:
    from moto.utilities.arns import parse_arn

    parsed = parse_arn(arn)
    return parsed.resource_id if parsed.service == "sqs" else None


def _plain_queues(rule: Any) -> list[str] | None:
    """The queues of ``rule`` when every target is an SQS queue taking the event as moto
    delivers it by default (no input transformer, no message group); else None."""
    queues = []
    for target in rule.targets:
        queue = _sqs_queue_of(target["Arn"])
        if (
            queue is None
            or target.get("InputTransformer")
            or target.get("SqsParameters", {}).get("MessageGroupId")
        ):
            return None
        queues.append(queue)
    return queues


def _put_events(self: Any, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """moto's `EventsBackend.put_events`, building each event's message, its flattened view
    and the body its SQS targets receive once per event instead of once per rule on the bus
    (a deep copy, a parse of the detail, two clock reads, a JSON round trip and flattening,
    a JSONPath template filled and parsed again, per rule and event: three quarters of a
    billing cycle's publishing). What is delivered is what moto delivers: the rules are
    matched by moto's own matcher (`_rule_matches`: the part of a pattern on the event's
    source and detail type once per kind of event, the rest on moto's flattened view of the
    same message, flattened once per event and only when a rule needs it), the body is the
    default template's output (its keys in its order, the time as moto writes it), and a
    standard queue takes it as moto's `send_message` would (`_deliver`).
    Anything else takes moto's own path: an entry moto refuses or warns about, a value
    moto's string template would alter, a ``Time`` given, a rule with any other target."""
    original = _originals["put_events"]
    if len(events) > 10:
        return list(original(self, events))  # moto's ValidationException
    from moto.core import utils as moto_utils
    from moto.moto_api._internal import mock_random
    from moto.sqs import sqs_backends

    entries: list[dict[str, Any]] = []
    buses: dict[Any, Any] = {}  # per request: the bus of a name, the SQS backend of a rule
    backends: dict[tuple[str, str], Any] = {}
    kinds: dict[tuple[Any, str, str], list[tuple[Any, Any, list[str] | None]]] = {}
    for event in events:
        detail_text = event.get("Detail")
        resources = event.get("Resources", [])
        try:
            detail = json.loads(detail_text) if isinstance(detail_text, str) else None
        except ValueError:
            detail = None
        if (
            not isinstance(detail, dict)
            or not _plain_name(event.get("Source"))
            or not _plain_name(event.get("DetailType"))
            or "<" in detail_text  # type: ignore[operator] # a string, as it parsed
            or not isinstance(resources, list)
            or not all(_plain(r, in_json=True) for r in resources)
            or "Time" in event
        ):
            entries.extend(original(self, [event]))
            continue
        event_id = _uuid4_text(mock_random)
        entries.append({"EventId": event_id})
        bus_name = event.get("EventBusName")
        event_bus = buses.get(bus_name)
        if event_bus is None:
            event_bus = buses[bus_name] = self.describe_event_bus(self._normalize_event_bus_arn(bus_name))
        clock = moto_utils.utcnow()  # one clock read: moto's `unix_time()` of it, and its text
        now = _unix_time(clock)
        message = {
            "version": "0",
            "id": event_id,
            "detail-type": event["DetailType"],
            "source": event["Source"],
            "account": self.account_id,
            "time": now,
            "region": self.region_name,
            "resources": resources,
            "detail": detail,
            "ingestion-time": now,
        }
        # moto flattens a JSON round trip of the message: the identity on what is built here
        # from parsed JSON, strings and a float (so the message itself is flattened)
        flat: list[dict[str, Any]] = []
        body: str | None = None
        # the rules whose entries on the source and detail type hold, once per kind of event
        # in this request (the account, region and version are the backend's and "0")
        kind = (bus_name, event["Source"], event["DetailType"])
        candidates = kinds.get(kind)
        if candidates is None:
            candidates = kinds[kind] = [
                (rule, rest, _plain_queues(rule))
                for rule in event_bus.rules.values()
                if (rest := _rest_of(rule.event_pattern, message)) is not _NO_MATCH
            ]
        for rule, rest, queues in candidates:
            if not _rest_matches(rule.event_pattern, rest, message, flat):
                continue
            if queues is None:
                _originals["send_to_targets"](rule, json.loads(json.dumps(message)))
                continue
            if body is None:
                body = json.dumps(
                    {
                        "id": event_id,
                        "time": moto_utils.iso_8601_datetime_without_milliseconds(clock),
                        "version": "0",
                        "detail-type": message["detail-type"],
                        "source": message["source"],
                        "region": message["region"],
                        "resources": resources,
                        "detail": detail,
                    }
                )
            where = (rule.account_id, rule.region_name)
            backend = backends.get(where)
            if backend is None:
                backend = backends[where] = sqs_backends[rule.account_id][rule.region_name]
            for queue in queues:
                _deliver(backend, queue, body, int(now * 1000.0))
    return entries


def _uuid4_text(source: Any) -> str:
    """``str(source.uuid4())`` for moto's random source (`MotoRandom.uuid4`: a UUID of
    ``getrandbits(128)`` with version 4): `_uuid4_hex`'s draw in the UUID's text form, without
    the UUID object (two per event a PutEvents delivers: its id and the message's)."""
    h = _uuid4_hex(source)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_EPOCH = datetime(1970, 1, 1)


def _unix_time(clock: datetime) -> float:
    """moto's `unix_time(clock)` (its arithmetic, so the same float), the epoch made once."""
    delta = clock - _EPOCH
    return (delta.days * 86400) + (delta.seconds + (delta.microseconds / 1e6))


def _plain_name(text: Any) -> bool:
    """`_plain(text, in_json=False)` for a source or a detail type (a few names, each asked
    ten thousand times: the answer is kept per name)."""
    return isinstance(text, str) and _plain_text(text)


@functools.lru_cache(maxsize=256)
def _plain_text(text: str) -> bool:
    return _plain(text, in_json=False)


class _RulePlan:
    """A rule's pattern split for `_rule_matches`: ``head``, the entries on the message's
    fixed top-level names (``source``, ``detail-type``, ...) whose filters are a list, and
    ``rest``, the others; ``memo`` keeps moto's answer on ``head`` per value of its names."""

    __slots__ = ("pattern", "head", "names", "rest", "memo", "detail")

    def __init__(self, pattern: Any) -> None:
        self.pattern = pattern
        entries = pattern if isinstance(pattern, dict) else {}
        self.head = {k: v for k, v in entries.items() if k in _FIXED_NAMES and isinstance(v, list)}
        self.names = tuple(self.head)
        self.rest = {k: v for k, v in entries.items() if k not in self.head} if entries else pattern
        self.memo: dict[tuple[Any, ...], bool] = {}
        self.detail = _detail_filters(self.rest)


def _detail_filters(rest: Any) -> tuple[tuple[str, list[Any]], ...] | None:
    """Change 17: the rest of a pattern when it is only lists of filters on top-level keys of
    the detail (``{"detail": {"tenant": [...]}}``), each key without a dot, as (key, filters);
    else None. moto's flattened view holds such a key's value under ``detail.<key>``, and
    nothing else of the message can be flattened to that name (the message's own names
    have no dot), so the value is the detail's own (undefined when it is a non-empty
    object, which moto flattens further)."""
    if type(rest) is not dict or rest.keys() != {"detail"} or type(rest["detail"]) is not dict:
        return None
    entries = rest["detail"]
    if not entries or any(
        type(k) is not str or "." in k or k == "$or" or type(v) is not list for k, v in entries.items()
    ):
        return None
    return tuple(entries.items())


# top-level names of the message whose values are a few strings (never a dict: moto's
# flattened view holds them under the same name), unlike the id, the times and the detail
_FIXED_NAMES = frozenset({"source", "detail-type", "account", "region", "version"})
_plans: weakref.WeakKeyDictionary[Any, _RulePlan] = weakref.WeakKeyDictionary()
_UNDEFINED = object()  # a name the message lacks, in a memo's key


def _rule_matches(event_pattern: Any, message: dict[str, Any], flat: list[dict[str, Any]]) -> bool:
    """moto's `EventPattern.matches_event(message)`: an empty pattern matches; otherwise
    moto's `_does_event_match` asks every entry of the pattern of the flattened message and
    needs them all, so it is asked here in two parts with the same answer: the entries on
    the message's source, detail type, account, region and version (the same values in the
    flattened view) once per pattern and values of those names (`_rest_of`), then, only if
    they hold, the others on moto's flattened view (`_rest_matches`)."""
    rest = _rest_of(event_pattern, message)
    return rest is not _NO_MATCH and _rest_matches(event_pattern, rest, message, flat)


_NO_MATCH = object()  # `_rest_of`: the entries on the message's fixed names do not hold


def _flat_undefined() -> Any:
    from moto.events.models import UNDEFINED

    return UNDEFINED


_FLAT_UNDEFINED = _flat_undefined()  # moto's marker of a name its flattened view lacks


def _rest_of(event_pattern: Any, message: dict[str, Any]) -> Any:
    """`_NO_MATCH` when the entries of the rule's pattern on the message's source, detail
    type, account, region and version do not hold (moto's matcher would answer no); else
    what is left to ask of the flattened view (empty: the rule matches)."""
    pattern = event_pattern.get_pattern()
    if not pattern:
        return {}
    plan = _plans.get(event_pattern)
    if plan is None or plan.pattern is not pattern:
        plan = _plans[event_pattern] = _RulePlan(pattern)
    if plan.names:
        values = tuple(message.get(name, _UNDEFINED) for name in plan.names)
        held = plan.memo.get(values)
        if held is None:
            held = event_pattern._does_event_match(message, plan.head)
            if len(plan.memo) < 1024:
                plan.memo[values] = held
        if not held:
            return _NO_MATCH
    return plan.rest


def _rest_matches(event_pattern: Any, rest: Any, message: dict[str, Any], flat: list[dict[str, Any]]) -> bool:
    """moto's matcher on ``rest`` (from `_rest_of`) of moto's flattened view of the message,
    made once per event and kept in ``flat``."""
    if not rest and isinstance(rest, dict):
        return True
    plan = _plans.get(event_pattern)
    detail = message.get("detail")
    if plan is not None and plan.rest is rest and plan.detail is not None and type(detail) is dict:
        # change 17: moto's own filter test on the values its flattened view would hold
        for key, filters in plan.detail:
            value = detail.get(key, _FLAT_UNDEFINED)
            if type(value) is dict and value:
                value = _FLAT_UNDEFINED
            if not event_pattern._does_item_match_filters(value, filters):
                return False
        return True
    if not flat:
        from moto.events.models import EventPattern

        flat.append(EventPattern._flatten_dict(message))
    return bool(event_pattern._does_event_match(flat[0], rest))


def _deliver(backend: Any, queue_name: str, body: str, sent_timestamp: int) -> None:
    """moto's `SQSBackend.send_message(queue_name, body)` for a standard queue (what moto's
    events target sends, without a group): the same checks, a `Message` with an id from
    moto's random, sent at ``sent_timestamp`` (the event's clock read, in milliseconds),
    delayed by the queue's delay, added by `Queue.add_message`; without reading the queue's
    attribute dictionary for its deduplication flag (a standard queue has none). A FIFO
    queue, a body over the queue's size limit, a delay moto would refuse: moto's own send."""
    from moto.moto_api._internal import mock_random
    from moto.sqs.models import MAXIMUM_MESSAGE_DELAY, Message

    queue = backend.get_queue(queue_name)  # moto's QueueDoesNotExist, as its send raises
    delay = queue.delay_seconds
    if (
        queue.fifo_queue
        or len(body) > queue.maximum_message_size
        or not isinstance(delay, int)
        or not 0 <= delay <= MAXIMUM_MESSAGE_DELAY
    ):
        backend.send_message(queue_name=queue_name, message_body=body, group_id=None)
        return
    message = Message(_uuid4_text(mock_random), body)
    message.sent_timestamp = sent_timestamp  # type: ignore[assignment] # moto types it None until sent
    message.default_event = True  # type: ignore[attr-defined]  # its body: the default template's (change 21)
    if delay:
        message.delay(delay_seconds=delay)
    queue.add_message(message)


# --- 7. a query's partition -------------------------------------------------------------------------
class _QueryOnKey:
    """What `all_items()` needs of a Query on the table's own key, while moto's query runs."""

    __slots__ = ("table", "hash_key", "comparison", "objs", "limit", "start", "forward", "filtered")

    def __init__(self, table: Table, hash_key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.table, self.hash_key = table, hash_key
        named = ("comparison", "objs", "limit", "start", "forward")
        given = dict(zip(named, args, strict=False))
        self.comparison = given.get("comparison", kwargs.get("range_comparison"))
        self.objs = given.get("objs", kwargs.get("range_objs"))
        self.limit = given.get("limit", kwargs.get("limit"))
        self.start = given.get("start", kwargs.get("exclusive_start_key"))
        self.forward = given.get("forward", kwargs.get("scan_index_forward", True)) is not False
        # a legacy QueryFilter (moto's filter_kwargs) counts toward the limit differently
        self.filtered = bool(set(kwargs) - _QUERY_PARAMETERS)


_QUERY_PARAMETERS = frozenset(
    {
        "range_comparison",
        "range_objs",
        "limit",
        "exclusive_start_key",
        "scan_index_forward",
        "projection_expressions",
        "index_name",
        "consistent_read",
        "filter_expression",
        "hash_key_conditions",
        "range_key_conditions",
    }
)
_partition: contextvars.ContextVar[_QueryOnKey | None] = contextvars.ContextVar("partition", default=None)


def _table_query(self: Table, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
    index_name = args[6] if len(args) > 6 else kwargs.get("index_name")  # moto passes it 8th
    on_table_key = index_name is None and hash_key is not None
    query = _QueryOnKey(self, hash_key, args, kwargs) if on_table_key else None
    token = _partition.set(query)
    sized = _last_sized.set([None, 0] if on_table_key else None)
    try:
        if query is not None:
            answer = _query_in_order(self, query, args, kwargs)
            if answer is not None:
                return answer
        return _originals["table_query"](self, hash_key, *args, **kwargs)
    finally:
        _last_sized.reset(sized)
        _partition.reset(token)


# --- 16. a forward Query on the table's key pages its ordered range itself (issue 12) ---------
def _query_in_order(self: Table, query: _QueryOnKey, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """moto's `Table.query` (5.2.x) for a forward Query on the table's own key, without
    moto's sort of the partition and its key-condition test of every item (a cycle's chunk
    queries: a third of their emulator time). The partition's sort keys are kept in order
    (change 7's `_ordered`) and the condition's range found by bisection (`_in_order`), so
    the page is the range's items in that order, up to the limit or the 1 MB page (each
    item measured as moto measures it), and the next-page key moto's loop answers: an item
    that follows the page, in range or not, ends it at the limit or the size. Then moto's
    own last steps: the copy (change 7b's), the filter expression, the projection. None (moto's
    own query answers) for a reverse query, a legacy QueryFilter, a condition on another
    attribute, a condition or start key moto's loop must test, a partition not there.
    `tests/runtime/test_moto_fast_json.py` and `test_moto_query_sizes.py` compare the pages
    with moto as shipped."""
    if query.filtered or not query.forward or not self.range_key_attr:
        return None
    conditions = kwargs.get("range_key_conditions") or []
    if len(conditions) > 1 or (conditions and conditions[-1][0] != self.range_key_attr):
        return None
    partition = self.items.get(query.hash_key)
    if type(partition) is not dict:
        return None
    try:
        with _orders_lock:
            page = _page_in_order(self, query, partition)
    except TypeError:  # bounds of another type than the keys': moto's own tests answer
        return None
    if page is None:
        return None
    results, last_evaluated_key = page
    scanned_count = len(results)
    import moto.dynamodb.models.table as table_module

    results = table_module.copy.deepcopy(results)  # moto's step (`_TableCopies` while installed)
    filter_expression = args[8] if len(args) > 8 else kwargs.get("filter_expression")
    if filter_expression is not None:
        results = [item for item in results if filter_expression.expr(item)]
    projection_expressions = args[5] if len(args) > 5 else kwargs.get("projection_expressions")
    if projection_expressions:
        results = [r.project(projection_expressions) for r in results]
    return results, scanned_count, last_evaluated_key


def _page_in_order(
    table: Table, query: _QueryOnKey, partition: dict[Any, Item]
) -> tuple[list[Item], dict[str, Any] | None] | None:
    """The page moto's loop keeps, and its next-page key, for a forward query on the table's
    key (the caller holds `_orders_lock`); None: not known here."""
    bounds = _key_range(query, partition)
    if bounds is None:
        return None
    keys, low, high = bounds
    # moto's loop: the items before the range (or up to the start key) add nothing and
    # cannot end a page (nothing is kept yet); each later one is tested against the limit
    # and the page's size first, then kept if it is in range
    limit = query.limit
    results: list[Item] = []
    size = 0
    for at in range(low, len(keys)):
        item = partition.get(keys[at])
        if item is None:  # another request thread deleted it meanwhile
            continue
        item_size = item.size()
        if len(results) == limit or size + item_size > _RESULT_SIZE_LIMIT:
            return results, table._get_last_evaluated_key(results[-1], None)
        if at < high:
            results.append(item)
            size += item_size
        elif size + _ITEM_LIMIT <= _RESULT_SIZE_LIMIT:
            break  # past the range nothing is kept: no later item can end the page
    return results, None


# (id(table), hash key) -> (table, its partition dictionary, the sort keys' values in order, the keys)
_orders: dict[tuple[int, Any], tuple[Table, dict[Any, Item], list[Any], list[Any]]] = {}


def _sort_value(key: Any) -> Any:
    return key.cast_value  # what DynamoType's own comparisons (and moto's sort) compare


_orders_lock = threading.Lock()  # a request thread's put and another's query keep one order


def _ordered(table: Table, hash_key: Any, partition: dict[Any, Item]) -> tuple[list[Any], list[Any]]:
    entry = _orders.get((id(table), hash_key))
    if entry is not None and entry[0] is table and entry[1] is partition and len(entry[3]) == len(partition):
        return entry[2], entry[3]
    keys = sorted(partition, key=_sort_value)
    values = [_sort_value(k) for k in keys]
    _orders[(id(table), hash_key)] = (table, partition, values, keys)
    return values, keys


def _keep_order(table: Table, hash_key: Any, range_key: Any, present: bool) -> None:
    """A put (present) or delete of one key, applied to the partition's order if it has one."""
    with _orders_lock:
        _kept_in_order(table, hash_key, range_key, present)


def _kept_in_order(table: Table, hash_key: Any, range_key: Any, present: bool) -> None:
    entry = _orders.get((id(table), hash_key))
    if entry is None:
        return
    _, partition, values, keys = entry
    if entry[0] is not table or range_key is None or table.items.get(hash_key) is not partition:
        _orders.pop((id(table), hash_key), None)
        return
    value = _sort_value(range_key)
    at = bisect.bisect_left(values, value)
    there = at < len(values) and values[at] == value
    if present and not there:
        values.insert(at, value)
        keys.insert(at, range_key)
    elif not present and there:
        del values[at]
        del keys[at]
    if len(keys) != len(partition):
        _orders.pop((id(table), hash_key), None)


def _forget_orders(table: Table) -> None:
    with _orders_lock:
        for key in [k for k, entry in _orders.items() if entry[0] is table]:
            del _orders[key]


# --- 13. an unconditional put of plain attributes without moto's generic walks (issue 7) ------
_PLAIN_PUT_TAGS = {"S": str, "N": str, "BOOL": bool}


# --- 18. a plain put's values made in the pass that finds them plain (issue 7) -------------------
def _plain_values(item_attrs: dict[str, Any]) -> tuple[bool | None, dict[str, DynamoType] | None, int]:
    """Whether every attribute of ``item_attrs`` (a request's item, each a one-tag dict) is
    one string, number, boolean or ``NULL: true``: the values for which moto's
    `_validate_item_types` finds nothing to refuse (a number given as text, a string not as
    a number, a null that is true, no map where a key is); None if an attribute is not a
    one-tag dict at all. For a plain item (True), in the same pass over its attributes, what
    `_item_init` then made of them in two more: each value as `_plain_type` makes it, and
    the item's size as `_item_init` sums it (`bytesize` of the name plus `_value_size`: a
    string's UTF-8 bytes, a number's text, moto's own `size()` of a boolean or null).
    (answer, None, 0) for anything but a plain item."""
    values: dict[str, DynamoType] = {}
    size = 0
    plain = True
    for name, value in item_attrs.items():
        if type(value) is not dict or len(value) != 1:
            return None, None, 0
        for tag, inner in value.items():
            if tag == "NULL":
                plain = plain and inner is True
            elif type(inner) is not _PLAIN_PUT_TAGS.get(tag):
                plain = False
            if plain:
                made = values[name] = _plain_type(tag, inner)
                size += bytesize(name) + _value_size(made)
    return (True, values, size) if plain else (False, None, 0)


def _plain_item(
    hash_value: DynamoType, range_value: DynamoType | None, values: dict[str, DynamoType]
) -> Item:
    """`Item(hash_value, range_value, attrs)` as `_item_init` makes it, from the values
    `_plain_values` made (an item within moto's size limit): created by moto's `Item.__new__`
    (its instance count, change 2), then the same three fields."""
    item: Item = Item.__new__(Item)  # type: ignore[assignment]  # moto types it as BaseModel's
    _item_fields(item, hash_value, range_value, values)
    return item


def _batch_get_item(self: Any) -> Any:
    """moto's `DynamoHandler.batch_get_item` as shipped, with each item it keeps sized once:
    its loop asks `item.size()` twice in a row for every item found (against the 16 MB
    answer, then into the answer's total), and nothing changes the item in between, so the
    second answer is the first (`_item_size`, `_last_sized`)."""
    token = _last_sized.set([None, 0])
    try:
        plain = _batch_get_plain(self)
        return plain if plain is not None else _originals["batch_get_item"](self)
    finally:
        _last_sized.reset(token)


_BATCH_GET_PLAIN = frozenset({"Keys", "ConsistentRead"})
_ANSWER_LIMIT = 16 * 1024 * 1024  # moto's BatchGetItem answer limit


def _plain_key_value(key: Any, name: str) -> DynamoType | None:
    """`DynamoType(key[name])` for a string key attribute (``{"S": text}``), made without
    moto's constructor; None for anything else."""
    raw = key.get(name)
    if type(raw) is not dict or len(raw) != 1 or type(raw.get("S")) is not str:
        return None
    return _plain_type("S", raw["S"])


def _batch_get_plain(handler: Any) -> Any:
    """moto's `DynamoHandler.batch_get_item` (5.2.x) for a request of keys only (no projection,
    no attribute names) whose key attributes are strings, each table known (change 20): moto's
    checks first (at most 100 keys per table and in all, no duplicates: a request that fails
    one is moto's own, its error included), then each key looked up as moto's `get_item`
    looks it up (`Table.items[hash][range]`, or `Table.items[hash]` for a table without a
    range key: the same dictionaries, the same empty partition left by a miss) with the key
    values made by `_plain_type` instead of `DynamoType`'s constructor and without moto's
    `get_keys_value`, `get_table` and a raised `KeyError` per key; each item found is sized
    and answered (or left unprocessed past 16 MB) as moto's loop does. None: moto's own path."""
    from moto.dynamodb.responses import DynamoResult

    body = handler.body
    batches = body.get("RequestItems") if type(body) is dict else None
    if type(batches) is not dict or not batches:
        return None
    tables = handler.dynamodb_backend.tables
    plan: list[tuple[str, Any, list[Any], list[tuple[DynamoType, DynamoType | None]]]] = []
    total = 0
    for table_name, request in batches.items():
        if type(request) is not dict or not _BATCH_GET_PLAIN.issuperset(request):
            return None
        keys = request.get("Keys")
        table = tables.get(table_name)
        if type(keys) is not list or table is None:
            return None
        total += len(keys)
        if len(keys) > 100 or total > 100:
            return None
        hash_attr, range_attr = table.hash_key_attr, table.range_key_attr
        values: list[tuple[DynamoType, DynamoType | None]] = []
        for key in keys:
            if type(key) is not dict:
                return None
            hash_value = _plain_key_value(key, hash_attr)
            range_value = None if range_attr is None else _plain_key_value(key, range_attr)
            if hash_value is None or (range_attr is not None and range_value is None):
                return None
            values.append((hash_value, range_value))
        if handler._contains_duplicates(keys):
            return None
        plan.append((table_name, table, keys, values))
    results: dict[str, Any] = {"ConsumedCapacity": [], "Responses": {}, "UnprocessedKeys": {}}
    size = 0
    for table_name, table, keys, values in plan:
        answered = results["Responses"][table_name] = []
        items = table.items
        for key, (hash_value, range_value) in zip(keys, values, strict=True):
            item = items.get(hash_value) if range_value is None else items[hash_value].get(range_value)
            if item is None:
                continue
            item_size = item.size()
            if size + item_size > _ANSWER_LIMIT:
                results["UnprocessedKeys"].setdefault(table_name, {"Keys": []})["Keys"].append(key)
            else:
                answered.append(item.attrs)
                size += item_size
        results["ConsumedCapacity"].append({"CapacityUnits": len(keys), "TableName": table_name})
    return DynamoResult(results)


def _install_batch_get(install: bool) -> None:
    from moto.dynamodb.responses import DynamoHandler

    if install:
        _originals["batch_get_item"] = DynamoHandler.__dict__["batch_get_item"]
        DynamoHandler.batch_get_item = _batch_get_item  # type: ignore[method-assign]
    elif "batch_get_item" in _originals:
        DynamoHandler.batch_get_item = _originals.pop("batch_get_item")  # type: ignore[method-assign]


def _plain_type(tag: str, value: Any) -> DynamoType:
    """`DynamoType({tag: value})` for a tag other than a list's or a map's: moto's constructor
    keeps the tag and the value as they are (only lists and maps are converted)."""
    made = object.__new__(DynamoType)
    made.type = tag
    made.value = value
    return made


def _dynamo_hash(self: DynamoType) -> int:
    """`DynamoType.__hash__`, ``hash((type, cast_value))``, with a string's answered first:
    its `cast_value` is its value (moto's chain of five type tests finds that last). Every
    key of a table is looked up by this hash, a put's about five times."""
    if self.type == "S":
        return hash(("S", self.value))
    return int(_originals["dynamo_hash"](self))


def _dynamo_eq(self: DynamoType, other: Any) -> bool:
    """`DynamoType.__eq__`, type and `cast_value` equal, with two strings answered first."""
    if self.type == "S" and type(other) is DynamoType and other.type == "S":
        return bool(self.value == other.value)
    return bool(_originals["dynamo_eq"](self, other))


def _plain_put(
    self: Table,
    item_attrs: Any,
    expected: Any = None,
    condition_expression: Any = None,
    expression_attribute_names: Any = None,
    expression_attribute_values: Any = None,
    overwrite: bool = False,
    return_values_on_condition_check_failure: Any = None,
) -> Item | None:
    """moto's `Table.put_item` (5.2.x) for a put without `Expected` or a condition, step for
    step: the key attributes present and of the table's types, every value's type checked
    (moto's `_validate_item_types`, skipped when every attribute is plain: it finds nothing
    to refuse in `_plain_values`' plain values), the keys within their sizes (the table's and
    its indexes', as moto's `_validate_key_sizes`), the current item read by moto's
    `get_item`, the new one built, stored and given to the stream. Its keys and plain values
    are made without `DynamoType`'s chain of type tests (`_plain_type`). None when a
    condition is given, an attribute is not a one-tag value, or a key is missing, of another
    type or too long: moto's own code then does it all, its errors included
    (tests/runtime/test_moto_plain_put.py compares the two)."""
    if expected is not None or condition_expression is not None or type(item_attrs) is not dict:
        return None
    plain, values, size = _plain_values(item_attrs)
    if plain is None:
        return None
    hash_attr, range_attr = self.hash_key_attr, self.range_key_attr
    hash_raw = item_attrs.get(hash_attr)
    if hash_raw is None or next(iter(hash_raw)) != self.hash_key_type:
        return None
    hash_value = _plain_type(*next(iter(hash_raw.items())))
    range_value = None
    if range_attr is not None:
        range_raw = item_attrs.get(range_attr)
        if range_raw is None or next(iter(range_raw)) != self.range_key_type:
            return None
        range_value = _plain_type(*next(iter(range_raw.items())))
    if not plain:
        self._validate_item_types(item_attrs)  # moto's own walk (and its errors)
    from moto.dynamodb.limits import HASH_KEY_MAX_LENGTH, RANGE_KEY_MAX_LENGTH

    for names, limit in (
        (self.hash_key_names, HASH_KEY_MAX_LENGTH),
        (self.range_key_names, RANGE_KEY_MAX_LENGTH),
    ):
        for name in names:
            raw = item_attrs.get(name)
            if raw and _value_size(_plain_type(*next(iter(raw.items())))) > limit:
                return None
    current = self.get_item(hash_value, range_value)
    made_here = values is not None and size <= _ITEM_LIMIT
    if made_here:
        item = _plain_item(hash_value, range_value, values)  # type: ignore[arg-type]  # not None
    else:
        item = Item(hash_value, range_value, item_attrs)  # moto's (refuses an item too large)
    if range_value is not None:
        self.items[hash_value][range_value] = item
    else:
        self.items[hash_value] = item  # type: ignore[assignment]
    if self.stream_shard is not None:
        if made_here:  # the item's values are `values` (immutable: an update replaces them)
            item.__dict__["_stream_values"] = values  # its record's image, made when read
        try:
            self.stream_shard.add(current, item)
        finally:  # for this record only, even if adding it failed
            item.__dict__.pop("_stream_values", None)
    return item


def _put_item(self: Table, *args: Any, **kwargs: Any) -> Any:
    item = _plain_put(self, *args, **kwargs)
    if item is None:
        item = _originals["table_put_item"](self, *args, **kwargs)
    if self.range_key_attr and item is not None:
        _keep_order(self, item.hash_key, item.range_key, present=True)
    return item


def _delete_item(self: Table, hash_key: Any, range_key: Any = None) -> Any:
    item = _originals["table_delete_item"](self, hash_key, range_key)
    if self.range_key_attr and item is not None:
        _keep_order(self, hash_key, range_key, present=False)
    return item


def _in_order(values: list[Any], comparison: str, bounds: list[Any]) -> tuple[int, int] | None:
    """The slice of the ordered sort-key values that the key condition keeps; None: not known here."""
    left, right = bisect.bisect_left, bisect.bisect_right
    if comparison in ("EQ", "="):
        return left(values, bounds[0]), right(values, bounds[0])
    if comparison in ("LT", "<"):
        return 0, left(values, bounds[0])
    if comparison in ("LE", "<="):
        return 0, right(values, bounds[0])
    if comparison in ("GT", ">"):
        return right(values, bounds[0]), len(values)
    if comparison in ("GE", ">="):
        return left(values, bounds[0]), len(values)
    if comparison == "BETWEEN":
        low = left(values, bounds[0])
        return low, max(low, right(values, bounds[1]))
    if comparison == "BEGINS_WITH" and type(bounds[0]) is str and all(type(v) is str for v in values[:1]):
        low = high = left(values, bounds[0])
        while high < len(values) and values[high].startswith(bounds[0]):
            high += 1
        return low, high
    return None


def _range_of(query: _QueryOnKey, partition: dict[Any, Item]) -> list[Item] | None:
    """The items of the partition moto's loop would look at: those in the query's range after
    its start key, up to one past its limit; if the range runs out first, what follows it
    too (moto stops at a full page when another item follows, in range or not, and answers
    a next-page key, as DynamoDB does). None: not known here (moto's own loop over the
    partition answers)."""
    bounds = _key_range(query, partition)
    if bounds is None:
        return None
    keys, low, high = bounds
    limit = query.limit if type(query.limit) is int and query.limit > 0 else None
    if limit is not None and high - low > limit:  # moto stops at the item past the limit
        chosen = keys[low : low + limit + 1] if query.forward else keys[high - limit - 1 : high]
        return _present(partition, chosen)
    items = _present(partition, keys[low:high])
    rest = keys[high:] if query.forward else keys[:low]
    if rest:
        # past the range moto tests each item against the limits before the key condition:
        # only the first can end a page, unless the page is near the size limit
        if sum(i.size() for i in items) + _ITEM_LIMIT <= _RESULT_SIZE_LIMIT:
            rest = rest[:1] if query.forward else rest[-1:]
        items.extend(_present(partition, rest))
    return items


def _key_range(query: _QueryOnKey, partition: dict[Any, Item]) -> tuple[list[Any], int, int] | None:
    """The partition's keys in order and the query's range among them, ``keys[low:high]``:
    the key condition's range (`_in_order`), after the start key (before it, for a reverse
    query). None: not known here. The caller holds `_orders_lock`."""
    values, keys = _ordered(query.table, query.hash_key, partition)
    low, high = 0, len(keys)
    if query.comparison:
        found = _in_order(values, query.comparison, [o.cast_value for o in query.objs or ()])
        if found is None:
            return None
        low, high = found
    start = query.start
    if start:
        table = query.table
        hash_attr, range_attr = table.hash_key_attr, table.range_key_attr
        if range_attr not in start or DynamoType(start.get(hash_attr)) != query.hash_key:
            return None
        after = DynamoType(start[range_attr]).cast_value
        if query.forward:
            low = max(low, bisect.bisect_right(values, after))
        else:
            high = min(high, bisect.bisect_left(values, after))
    return keys, low, max(low, high)


def _present(partition: dict[Any, Item], keys: list[Any]) -> list[Item]:
    """The items of the keys (one another request thread is deleting meanwhile: not there)."""
    found = [partition.get(k) for k in keys]
    return [i for i in found if i is not None]


_RESULT_SIZE_LIMIT = 1_000_000  # moto's page size (table.RESULT_SIZE_LIMIT)


def _all_items(self: Table) -> list[Item]:
    query = _partition.get()
    if query is None or query.table is not self:
        return _originals["all_items"](self)
    found = self.items.get(query.hash_key)
    if found is None:
        return []
    if not self.range_key_attr:
        return [found]  # type: ignore[list-item]
    ranged = None
    if not query.filtered:  # a legacy QueryFilter: moto's loop keeps items out of range too
        try:
            with _orders_lock:
                ranged = _range_of(query, found)
        except TypeError:  # bounds of another type than the keys': moto's own tests answer
            ranged = None
    return ranged if ranged is not None else list(found.values())


# --- 7b. a query's answer without copies --------------------------------------------------------
_sharing: contextvars.ContextVar[bool] = contextvars.ContextVar("sharing", default=False)


class _TableCopies:
    """The `copy` module as moto's table module sees it: during a Query that neither projects
    nor reads an index, the deep copy of the items found (`Table.query`'s last step before it
    returns them) is a new list of the same items: what the answer is made of is only read
    (a filter tests them, the response converts their attributes into new dictionaries) and
    written out before the next request. Everything else is the copy module's."""

    copy = staticmethod(copy.copy)

    @staticmethod
    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        if _sharing.get() and type(value) is list and all(type(i) is Item for i in value):
            return list(value)
        return copy.deepcopy(value, memo)


def _backend_query(
    self: DynamoDBBackend,
    table_name: str,
    hash_key_dict: Any,
    range_comparison: Any,
    range_value_dicts: Any,
    limit: Any,
    exclusive_start_key: Any,
    scan_index_forward: Any,
    projection_expressions: Any,
    index_name: str | None = None,
    *args: Any,
    **kwargs: Any,
) -> Any:
    token = _sharing.set(index_name is None and not projection_expressions)
    try:
        return _originals["backend_query"](
            self,
            table_name,
            hash_key_dict,
            range_comparison,
            range_value_dicts,
            limit,
            exclusive_start_key,
            scan_index_forward,
            projection_expressions,
            index_name,
            *args,
            **kwargs,
        )
    finally:
        _sharing.reset(token)


_SCALARS = frozenset({"S", "N", "BOOL", "NULL"})


def _wire_form(value: Any) -> Any:
    """moto's `dynamo_to_dict` (what a DynamoDB answer is converted with before it is
    written), taking the common shapes directly: a string, number, boolean or null attribute
    is its ``{type: value}``, dictionaries and lists are walked here; anything else (binary
    values, sets, maps, lists of values, model objects, times) is moto's own conversion."""
    if type(value) is DynamoType:
        if value.type in _SCALARS and type(value.value) in (str, bool):
            return {value.type: value.value}
        return _originals["dynamo_to_dict"](value)
    if type(value) in (dict, LimitedSizeDict):
        return {k: _wire_form(v) for k, v in value.items()}
    if type(value) is list:
        return [_wire_form(v) for v in value]
    if type(value) in (str, int, bool) or value is None:
        return value
    return _originals["dynamo_to_dict"](value)


def _dynamo_result_init(self: Any, result: object) -> None:
    ActionResult.__init__(self, _wire_form(result))


# --- 8. activity ------------------------------------------------------------------------------
def _notify(kind: str, name: str) -> None:
    for listener in list(_listeners):
        listener(kind, name)


def _queue_add_message(self: Queue, message: Any) -> None:
    _originals["add_message"](self, message)
    _notify("sqs", self.queue_arn)


def _shard_add(self: StreamShard, old: Any, new: Any) -> None:
    """moto's `StreamShard.add`; for a table without moto's own Lambda mappings (the runtime's
    are its own pollers), its first steps only: the record appended with the event name and
    sequence number moto gives it, without the import of moto's Lambda backend and the loop
    over no mappings that follow it on every record (change 19)."""
    if self.table.lambda_event_source_mappings:
        _originals["shard_add"](self, old, new)
    else:
        event_name = "INSERT" if old is None else "REMOVE" if new is None else "MODIFY"
        view = self.table.stream_specification["StreamViewType"]  # type: ignore[index]
        with stream_lock:
            seq = len(self.items) + self.starting_sequence_number
            self.items.append(StreamRecord(self.table, view, event_name, old, new, seq))
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


_DYNAMODB_TARGET = "DynamoDB_20120810."


def _dynamodb_direct(request: Any, body: Any) -> tuple[int, dict[str, Any], Any] | None:
    """A DynamoDB request answered by moto's `DynamoHandler.dispatch` itself, the callback the
    server's Flask route calls (`convert_to_flask_response`), with the same request (moto's
    `Request.from_primitives`, marked as the server's), URL and headers: without werkzeug's
    test environment, Flask's routing and its request context (a third of a call's cost)."""
    target = request.headers.get("X-Amz-Target")
    if isinstance(target, bytes):
        target = target.decode()
    if not _originals or not target or not target.startswith(_DYNAMODB_TARGET):
        return None
    from moto.dynamodb.responses import DynamoHandler

    fast = _dynamodb_handler_direct(request, body, target[len(_DYNAMODB_TARGET) :])
    if fast is not None:
        return fast
    return _answer_directly(DynamoHandler, request, body)


def _dynamodb_handler_direct(request: Any, body: Any, action: str) -> tuple[int, dict[str, Any], Any] | None:
    """A data-plane DynamoDB request (`FAST_JSON`) handed to moto's `DynamoHandler.call_action`
    with the handler's attributes set from the request as `BaseResponse.setup_class` sets
    them, without building moto's werkzeug `Request` (its WSGI environ, `raw_url`) and without
    the form, query-string and body-decoding steps that a JSON body never uses (a third of a
    small call's cost in the main process). moto's own `call_action` then runs as shipped
    (authorisation count, the action, its errors, `_enrich_response`, the CRC header), so the
    answer is moto's. None (moto's own path) whenever setup_class could read something else
    out of the request: another action, a body with binary attributes (moto's shape parser
    decodes their base64), a body that is not one JSON object or holds a `&` (setup_class
    parses the body as a query string, where `_get_action` would read an `Action` and
    `get_access_key` an `AWSAccessKeyId`; a JSON object without `&` parses to one key that
    starts with `{`, so neither is found and this leaves the query string empty), a gzipped
    body, a query string or `Host` in the URL's place, IAM authorisation switched on, or
    moto's request recorder on.
    `tests/runtime/test_moto_direct_dispatch.py` compares the answers byte for byte."""
    if action not in FAST_JSON["dynamodb"]:
        return None
    if isinstance(body, str):
        body = body.encode()
    if isinstance(body, bytes) and (b'"B"' in body or b'"BS"' in body):
        return None
    from moto.dynamodb.responses import DynamoHandler

    handler = _dynamodb_handler_cheaply(DynamoHandler(), request, body)
    if handler is None:
        return None
    handler.body = handler.raw_body = body
    handler.params = json.loads(body)  # what `_parse_parameters` reads a body without binary as
    return _call_action(handler)


# (URL, User-Agent, Authorization) -> (region, access key): what moto reads out of those three
_request_identities: dict[tuple[str, str | None, str | None], tuple[str, str]] = {}


def _dynamodb_handler_cheaply(handler: Any, request: Any, body: Any) -> Any:
    """What `_handler_from_request` makes of a DynamoDB request, for a third of its cost: the
    same attributes, the same refusals (None: moto's own path), the account read and the
    visit registered as moto does on every call (an IAM key created meanwhile counts), but
    - the request's headers put in werkzeug's `Headers` as they are (what its constructor
      keeps for header values that are strings without a line break; any other goes the
      usual way), instead of through its per-value checks;
    - the region and the access key, which moto reads out of the URL, the User-Agent and
      the Authorization header alone, remembered for those three;
    - the request id that `call_action` adds (`_enrich_response`) drawn as moto's random
      bytes at once, as the receipt handles are (`_request_id`), instead of 52 `choice`s.
    `tests/runtime/test_moto_direct_dispatch.py` compares its answers with moto's dispatch."""
    pairs = [(k, v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()]
    try:
        values = "".join(k + v for k, v in pairs)  # TypeError: a name or value not a string
    except TypeError:
        values = "\n"
    if "\n" in values or "\r" in values:
        return _handler_from_request(handler, "dynamodb", request, body)
    handler = _handler_from_request(handler, "dynamodb", request, body, headers_as_they_are=pairs)
    if handler is not None:
        handler._enrich_response = _enrich_direct_response
    return handler


# moto's request id alphabet (letters and digits) for each of a random byte's values
_REQUEST_ID_CHARS = bytes(
    ord("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[value % 62]) for value in range(256)
)


def _request_id() -> str:
    """A request id of moto's form (52 letters and digits) from moto's random source."""
    from moto.moto_api._internal import mock_random

    return mock_random.randbytes(52).translate(_REQUEST_ID_CHARS).decode()


def _enrich_direct_response(headers: dict[str, Any], body: Any) -> tuple[dict[str, Any], Any]:
    """moto's `BaseResponse._enrich_response` with `_request_id`'s id."""
    if "status" in headers:
        headers["status"] = str(headers["status"])
    request_id = headers["x-amzn-requestid"] = _request_id()
    if isinstance(body, str) and "<RequestId>" in body:  # moto puts it in an XML body
        import re

        body = re.sub(r"(?<=<RequestId>).*(?=<\/RequestId>)", request_id, body)
    return headers, body


def _handler_from_request(
    handler: Any,
    service: str,
    request: Any,
    body: Any,
    headers_as_they_are: list[tuple[str, str]] | None = None,
) -> Any:
    """``handler`` (a moto response class's instance, for ``service``) with its attributes
    set from a plain JSON request as `BaseResponse.setup_class` sets them, and the visit
    registered as `_dispatch` registers it; None (moto's own path) whenever setup_class could
    read something else out of the request (see `_dynamodb_handler_direct`)."""
    from moto import settings
    from moto.moto_api import recorder
    from moto.utilities.utils import get_partition

    if settings.INITIAL_NO_AUTH_ACTION_COUNT != float("inf"):
        return None
    if isinstance(body, str):
        body = body.encode()
    if not isinstance(body, bytes) or not body or recorder._user_enabled:
        return None
    if b"&" in body or not body.lstrip().startswith(b"{"):
        return None
    from moto.iam.models import mark_account_as_visited
    from werkzeug.datastructures import Headers, ImmutableMultiDict

    if headers_as_they_are is None:
        headers = Headers(
            [
                (k, v.decode() if isinstance(v, bytes) else v)
                for k, v in request.headers.items()
                if k.lower() != "transfer-encoding"
            ]
        )
    else:  # strings without a line break: what the constructor would keep, unchecked
        headers = _headers_class()()
        headers._list = [(k, v) for k, v in headers_as_they_are if k.lower() != "transfer-encoding"]
    split = urlsplit(request.url)
    host = headers.get("Host")
    if (
        headers.get("Content-Encoding") == "gzip"
        or (host is not None and host != split.netloc)
        or split.query
    ):
        return None
    handler.is_werkzeug_request = True  # as moto's server (and `_ServerRequest`) hands it over
    handler.normalized_request = None  # read by `_get_action` only without an X-Amz-Target
    handler.parsed_url = urlparse(request.url)
    handler.body = body.decode("utf-8")  # setup_class decodes a body it does not keep raw
    handler.raw_body = body
    handler.form_data = ImmutableMultiDict()
    handler.uri = request.url
    handler.path = handler.raw_path = split.path or "/"
    handler.querystring = handler.data = {}
    handler.method = request.method
    handler.headers = headers
    # the region and the access key: moto reads them out of the URL, the User-Agent and the
    # Authorization header alone; remembered for those three on the cheap path
    remember = headers_as_they_are is not None
    asked = (request.url, headers.get("User-Agent"), headers.get("Authorization"))
    known = _request_identities.get(asked) if remember else None
    if known is None:
        region = handler.get_region_from_url(SimpleNamespace(headers=headers), request.url)
        known = region, handler.get_access_key()
        if remember:
            if len(_request_identities) >= 1024:  # one entry per function's client: bounded anyway
                _request_identities.clear()
            _request_identities[asked] = known
    handler.region, handler.access_key = known
    handler.partition = get_partition(handler.region)
    handler.uri_match = {}
    handler.response_headers = {"server": "amazon.com"}
    handler.current_account = handler.get_current_account()
    mark_account_as_visited(
        account_id=handler.current_account,
        access_key=handler.access_key,
        service=service,  # handler.service_name
        region=handler.region,
    )
    return handler


@functools.cache
def _headers_class() -> type:
    """werkzeug's `Headers` whose `get` (without `type`) and `in` answer a missing name as
    werkzeug answers it (the default, False) without raising and catching werkzeug's
    `BadRequestKeyError` (an HTTP exception with its description: moto asks three names a
    DynamoDB request does not carry). The same lookup: the first header whose lowered name is
    the lowered key. Any other key or a `type` goes to werkzeug's own."""
    from werkzeug.datastructures import Headers

    class QuietHeaders(Headers):
        def get(self, key: Any, default: Any = None, type: Any = None) -> Any:  # type: ignore[override]  # noqa: A002 - werkzeug's name
            if type is not None or not isinstance(key, str):
                return super().get(key, default, type)
            wanted = key.lower()
            for name, value in self._list:
                if name.lower() == wanted:
                    return value
            return default

        def __contains__(self, key: Any) -> bool:
            if not isinstance(key, str):
                return super().__contains__(key)
            wanted = key.lower()
            return any(name.lower() == wanted for name, _ in self._list)

    return QuietHeaders


@functools.lru_cache(maxsize=256)
def _camelcase_to_underscores(argument: str) -> str:
    """moto's `camelcase_to_underscores` (a pure function of the action's name, run on every
    request with an `IndexError` caught at its last letter), kept per name."""
    return str(_originals["camelcase_to_underscores"](argument))


def _install_request_names(install: bool) -> None:
    import moto.core.responses as responses

    if install:
        _originals["camelcase_to_underscores"] = responses.camelcase_to_underscores
        responses.camelcase_to_underscores = _camelcase_to_underscores
    else:
        responses.camelcase_to_underscores = _originals.pop("camelcase_to_underscores")
        _camelcase_to_underscores.cache_clear()


def _call_action(handler: Any) -> tuple[int, dict[str, Any], Any]:
    """moto's `call_action` on a handler set up by `_handler_from_request`, a `ClientError`
    answered as `_answer_directly` answers it."""
    from botocore.exceptions import ClientError

    try:
        status, answered, content = handler.call_action()
    except ClientError as exc:  # as `_answer_directly` answers it
        status, answered, content = 400, {}, exc.response["Error"]["Message"]
    return int(status), dict(answered), content


def _events_direct(request: Any, body: Any) -> tuple[int, dict[str, Any], Any] | None:
    """An EventBridge request (a billing cycle's outbox is a thousand `PutEvents`) answered
    the same way by `EventsHandler.dispatch`, the callback of moto's events route."""
    target = request.headers.get("X-Amz-Target")
    if isinstance(target, bytes):
        target = target.decode()
    if not _originals or not target or not target.startswith("AWSEvents."):
        return None
    from moto.events.responses import EventsHandler

    if target == "AWSEvents.PutEvents":
        handler = _handler_from_request(EventsHandler(), "events", request, body)
        if handler is not None:
            return _call_action(handler)
    return _answer_directly(EventsHandler, request, body)


def _answer_directly(handler: Any, request: Any, body: Any) -> tuple[int, dict[str, Any], Any]:
    from botocore.exceptions import ClientError
    from moto.moto_api import recorder

    moto_request = _ServerRequest.from_primitives(request.method, request.url, request.headers, body)
    recorder._record_request(moto_request)
    try:
        status, headers, content = handler.dispatch(
            moto_request, moto_request.raw_url, dict(moto_request.headers)
        )
    except ClientError as exc:  # as convert_to_flask_response answers it
        status, headers, content = 400, {}, exc.response["Error"]["Message"]
    return int(status), dict(headers), content


def _server_request_class() -> Any:
    from moto.core.request import Request

    class ServerRequest(Request):
        from_wsgi_server = True  # what moto's server hands its callbacks (no extra Date header)

    return ServerRequest


_ServerRequest: Any = None


def _send_in_process(request: Any, **_: Any) -> Any:
    """botocore's ``before-send`` hook: a request to moto's endpoint answered in this process."""
    body = request.body
    if hasattr(body, "read"):
        body = body.read()
    answer = _answer_in_process(request.method, request.url, request.headers, body)
    if answer is None:
        return None
    from botocore.awsrequest import AWSResponse
    from moto.core.botocore_stubber import MockRawResponse

    status, headers, content = answer
    return AWSResponse(request.url, status, headers, MockRawResponse(content))


def _answer_in_process(
    method: str, url: str, headers: Any, body: Any
) -> tuple[int, dict[str, Any], bytes] | None:
    """A request to moto's endpoint in this process, answered as ``(status, headers, body)``
    by moto's application (DynamoDB and EventBridge by their handlers directly); None when
    no endpoint here serves ``url``, or when the request is unsigned (a worker's, see
    `worker.answered_by`) and moto checks signatures (IAM authorisation on)."""
    client = next((c for e, c in list(_clients.items()) if url.startswith(e + "/")), None)
    if client is None:
        return None
    if body is None:
        body = b""
    authorization = headers.get("Authorization") or ""
    if isinstance(authorization, bytes):
        authorization = authorization.decode()
    if authorization.endswith("Signature=unsigned-local") and _iam_checked():
        return None
    request = SimpleNamespace(method=method, url=url, headers=headers, body=body)
    direct = _dynamodb_direct(request, body) or _events_direct(request, body)
    if direct is not None:
        status, answered, content = direct
        answered.pop("status", None)
        return status, answered, content.encode() if isinstance(content, str) else content
    split = urlsplit(url)
    answer = client.open(
        split.path or "/",
        method=method,
        query_string=split.query,
        headers=[(k, v.decode() if isinstance(v, bytes) else v) for k, v in headers.items()],
        data=body,
    )
    return answer.status_code, dict(answer.headers), answer.get_data()


def _iam_checked() -> bool:
    from moto import settings

    return bool(settings.INITIAL_NO_AUTH_ACTION_COUNT != float("inf"))


# --- batch writes checked for duplicates without a JSON dump of every item (issue 7) -----------


def _duplicate_puts_possible(items: list[Any]) -> bool:
    """Whether two of ``items`` (a BatchWriteItem's put items, as its JSON body parsed them)
    can have the same JSON dump, moto's test of a duplicate: that needs the same attribute
    names in the same order and the same first two values, so items that all differ in those
    cannot (the answer is then moto's without the dumps). Two values, not one: billing's
    items of a period share their first (``pk``) and differ in their second (``sk``)."""
    seen: set[tuple[Any, ...]] = set()
    for item in items:
        if type(item) is not dict:
            return True
        values = iter(item.values())
        signature = (*item, str(next(values, None)), str(next(values, None)))
        if signature in seen:
            return True
        seen.add(signature)
    return False


def _batch_write_item(self: Any) -> Any:
    """moto's `DynamoHandler.batch_write_item` (5.2.x), step for step, except that the JSON
    dumps of the put items (moto's duplicate check, a dump of every whole item: a read file's
    items are about 700 bytes each) are made only when two items could be duplicates
    (`_duplicate_puts_possible`); when they are made, the check is moto's own, so the answer,
    the error included, is moto's. tests/runtime/test_moto_batch_write.py compares the two."""
    from moto.core.responses import ActionResult
    from moto.dynamodb.exceptions import MockValidationException
    from moto.dynamodb.models.utilities import dynamo_json_dump
    from moto.dynamodb.responses import validate_put_has_empty_keys

    table_batches = self.body["RequestItems"]
    put_requests = []
    delete_requests = []
    for table_name, table_requests in table_batches.items():
        table = self.dynamodb_backend.get_table(table_name)
        for table_request in table_requests:
            request_type = list(table_request.keys())[0]
            request = list(table_request.values())[0]
            if request_type == "PutRequest":
                item = request["Item"]
                validate_put_has_empty_keys(
                    item,
                    table,
                    custom_error_msg="One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: {}",
                )
                put_requests.append((table_name, item))
            elif request_type == "DeleteRequest":
                keys = request["Key"]
                delete_requests.append((table_name, keys))
    if self._contains_duplicates([dynamo_json_dump(k[1]) for k in delete_requests]) or (
        _duplicate_puts_possible([k[1] for k in put_requests])
        and self._contains_duplicates([dynamo_json_dump(k[1]) for k in put_requests])
    ):
        raise MockValidationException("Provided list of item keys contains duplicates")
    for table_name, item in put_requests:
        self.dynamodb_backend.put_item(table_name, item)
    for table_name, keys in delete_requests:
        self.dynamodb_backend.delete_item(table_name, keys)

    response = {
        "ConsumedCapacity": [
            {
                "TableName": table_name,
                "CapacityUnits": 1.0,
                "Table": {"CapacityUnits": 1.0},
            }
            for table_name, table_requests in table_batches.items()
        ],
        "ItemCollectionMetrics": {},
        "UnprocessedItems": {},
    }

    return ActionResult(response)


def _hashable_key(key: Any) -> Any:
    """A key as a BatchGetItem's JSON body gives it, ``{name: {type: text}}``, as a value
    equal for exactly the keys that compare equal (order-free, as dicts compare); None for
    anything else."""
    if type(key) is not dict:
        return None
    parts = []
    for name, value in key.items():
        if type(value) is not dict or not all(type(v) is str for v in value.values()):
            return None
        parts.append((name, frozenset(value.items())))
    return frozenset(parts)


def _contains_duplicates(self: Any, keys: list[Any]) -> bool:
    """moto's `DynamoHandler._contains_duplicates` (a list scan per key: 4,950 comparisons of
    dicts for a BatchGetItem of 100 keys) with a set where the keys are strings (moto's dumps)
    or plain keys (`_hashable_key`), which equal the same pairs moto's ``in`` finds equal;
    anything else is moto's own scan."""
    if all(type(k) is str for k in keys):
        return len(set(keys)) != len(keys)
    hashable = [_hashable_key(k) for k in keys]
    if any(h is None for h in hashable):
        return bool(_originals["contains_duplicates"](self, keys))
    return len(set(hashable)) != len(hashable)


def _handler_backend(self: Any) -> Any:
    """`DynamoHandler.dynamodb_backend`, ``dynamodb_backends[account][region]``, looked up once
    per handler (moto makes one per request) and account and region: moto's BatchWriteItem
    and BatchGetItem ask for it again for every item, and each ask goes through moto's
    `BackendDict` (an account check and two dictionary classes)."""
    from moto.dynamodb.models import dynamodb_backends

    key = (self.current_account, self.region)
    cached = self.__dict__.get("_backend_for")
    if cached is not None and cached[0] == key:
        return cached[1]
    backend = dynamodb_backends[key[0]][key[1]]
    self.__dict__["_backend_for"] = (key, backend)
    return backend


def _install_batch_write(install: bool) -> None:
    from moto.dynamodb.responses import DynamoHandler

    if install:
        _originals["batch_write_item"] = DynamoHandler.__dict__["batch_write_item"]
        _originals["contains_duplicates"] = DynamoHandler.__dict__["_contains_duplicates"]
        DynamoHandler.batch_write_item = _batch_write_item  # type: ignore[method-assign]
        DynamoHandler._contains_duplicates = _contains_duplicates  # type: ignore[method-assign]
        _originals["handler_backend"] = DynamoHandler.__dict__["dynamodb_backend"]
        DynamoHandler.dynamodb_backend = property(_handler_backend)  # type: ignore[method-assign,assignment]
    elif "batch_write_item" in _originals:
        DynamoHandler.dynamodb_backend = _originals.pop("handler_backend")  # type: ignore[method-assign]
        DynamoHandler.batch_write_item = _originals.pop("batch_write_item")  # type: ignore[method-assign]
        DynamoHandler._contains_duplicates = _originals.pop("contains_duplicates")  # type: ignore[method-assign]


# --- 9. stream records sized when read ------------------------------------------------------------
_OLD_VIEWS = frozenset({"OLD_IMAGE", "NEW_AND_OLD_IMAGES"})
_NEW_VIEWS = frozenset({"NEW_IMAGE", "NEW_AND_OLD_IMAGES"})
_IMMUTABLE = (str, bool, bytes)


def _image(item: Item) -> dict[str, Any]:
    """`item.to_json()["Attributes"]`, a stream record's image: an item whose attributes are
    all strings, numbers, binaries, booleans or nulls (immutable values: moto's own answer for
    them is `{type: value}`) is answered here, one dictionary per attribute without moto's
    type tests; an item with a set, list or map is moto's own copy (issue 7: a read file's
    stream records, filtered out by the outbox mappings, still cost their images)."""
    image: dict[str, Any] = {}
    for key, value in item.attrs.items():
        if type(value.value) not in _IMMUTABLE:
            return item.to_json()["Attributes"]
        image[key] = {value.type: value.value}
    return image


_UUID4_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))
_UUID4_SET = (0x8000 << 48) | (4 << 76)


def _uuid4_hex(random: Any) -> str:
    """`random.uuid4().hex` (moto's `MotoRandom.uuid4`: `UUID(int=getrandbits(128), version=4)`)
    from the same 128 random bits, with the variant and version bits set as `uuid.UUID`
    sets them, without building the `UUID` (its constructor's checks cost more than the rest
    of a stream record's id)."""
    return "%032x" % ((random.getrandbits(128) & _UUID4_CLEAR) | _UUID4_SET)


def _stream_record_init(
    self: StreamRecord, table: Table, stream_type: str, event_name: str, old: Any, new: Any, seq: int
) -> None:
    """moto's `StreamRecord.__init__` without its last step, the JSON dump of the record's
    `dynamodb` part that only measures `SizeBytes`: that is done when the record is first read
    (`_stream_record_json`). The images are moto's `Item.to_json()`, copies (`to_regular_json`
    deep-copies maps and lists; strings, numbers and bytes are immutable), so a later write to
    the item cannot change what the dump measures."""
    # a plain put's new item: its image is made from the put's own values when first read
    fresh = new.__dict__.pop("_stream_values", None) if new is not None else None
    # only the images the stream's view type keeps (moto makes both, then drops what it does
    # not keep: a NEW_IMAGE stream's MODIFY copied the old item for nothing)
    old_a = _image(old) if old is not None and stream_type in _OLD_VIEWS else {}
    new_a = _image(new) if new is not None and fresh is None and stream_type in _NEW_VIEWS else {}
    rec = old if old is not None else new
    keys = {table.hash_key_attr: rec.hash_key.to_json()}
    if table.range_key_attr is not None and rec is not None:
        keys[table.range_key_attr] = rec.range_key.to_json()
    self.record = {
        "eventID": _uuid4_hex(moto_table_module.mock_random),
        "eventName": event_name,
        "eventSource": "aws:dynamodb",
        "eventVersion": "1.0",
        "awsRegion": "us-east-1",
        "dynamodb": {
            "StreamViewType": stream_type,
            "ApproximateCreationDateTime": _utcnow_of(moto_table_module),
            "SequenceNumber": str(seq),
            "SizeBytes": 1,  # moto's placeholder, part of what it measures
            "Keys": keys,
        },
    }
    if stream_type in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES") and new is not None:
        if fresh is not None:
            self.unimaged = fresh  # type: ignore[attr-defined]
        else:
            self.record["dynamodb"]["NewImage"] = new_a
    if stream_type in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES") and old is not None:
        self.record["dynamodb"]["OldImage"] = old_a
    self.unsized = True  # type: ignore[attr-defined]


def _stream_record_imaged(self: StreamRecord) -> dict[str, Any]:
    """The record with its images, not yet sized: a plain put's new image (change 19), kept
    as the put's values until now, made here as moto's `Item.to_json()` makes it for plain
    values (`{type: value}`), in the place moto's record holds it (before any old image)."""
    fresh = self.__dict__.pop("unimaged", None)
    if fresh is not None:
        ddb = self.record["dynamodb"]
        ddb["NewImage"] = {name: {value.type: value.value} for name, value in fresh.items()}
        if "OldImage" in ddb:
            ddb["OldImage"] = ddb.pop("OldImage")
    return self.record


def _stream_record_json(self: StreamRecord) -> dict[str, Any]:
    """The record as moto's `to_json` gives it: `SizeBytes` measured the first time it is read,
    as moto measures it (`len(dynamo_json_dump(...))` of the `dynamodb` part, with the
    placeholder 1 in it)."""
    if self.__dict__.pop("unsized", False):
        from moto.dynamodb.models.utilities import dynamo_json_dump

        ddb = _stream_record_imaged(self)["dynamodb"]
        ddb["SizeBytes"] = len(dynamo_json_dump(ddb))
    return self.record


def _install_stream_records(install: bool) -> None:
    if install:
        _originals["stream_record_init"] = StreamRecord.__init__
        _originals["stream_record_json"] = StreamRecord.to_json
        StreamRecord.__init__ = _stream_record_init  # type: ignore[method-assign]
        StreamRecord.to_json = _stream_record_json  # type: ignore[method-assign]
        StreamRecord.imaged = _stream_record_imaged  # type: ignore[attr-defined]
    elif "stream_record_init" in _originals:
        del StreamRecord.imaged  # type: ignore[attr-defined]
        StreamRecord.__init__ = _originals.pop("stream_record_init")  # type: ignore[method-assign]
        StreamRecord.to_json = _originals.pop("stream_record_json")  # type: ignore[method-assign]


def stream_entries(stream_arn: str, after: str | None, limit: int) -> list[StreamRecord]:
    """Up to `limit` of moto's records of a table's stream after sequence number `after` (from
    the start when None), read from moto's backend in this process, from where `after` points
    (no walk of what came before). A record's `to_json()` is what `GetRecords` answers for it
    (`stream_records`); its `.record`, before that, lacks the measured `SizeBytes` and a plain
    put's new image (change 19; `imaged()` makes it): the runtime's poller filters on it and
    images and sizes only the records it keeps."""
    from moto.dynamodbstreams.models import dynamodbstreams_backends

    _, _, _, region, account, _ = stream_arn.split(":", 5)
    table = dynamodbstreams_backends[account][region]._get_table_from_arn(stream_arn)
    shard = table.stream_shard
    if shard is None:
        return []
    start = 0 if after is None else int(after) - shard.starting_sequence_number + 1
    return list(shard.items[start : start + limit])


def stream_records(stream_arn: str, after: str | None, limit: int) -> list[dict[str, Any]]:
    """Up to `limit` records of a table's stream after sequence number `after` (from the start
    when None), read from moto's backend in this process: what `GetRecords` answers, without
    the JSON round trip and botocore's parse of every image."""
    return [dict(r.to_json()) for r in stream_entries(stream_arn, after, limit)]


class DirectSqs:
    """The runtime's own SQS calls (the scheduler's sends, the pollers' receives, deletes and
    visibility changes, the queue counts) made on moto's SQS backend in this process: the
    same backend methods moto's `SQSResponse` calls, so visibility timeouts, receive counts,
    FIFO groups and DLQ redrive are moto's own, answered in the shape botocore parses
    (`tests/runtime/test_moto_fast_json.py` compares the two). Without botocore's request
    building and signing and moto's HTTP dispatch, a scheduled firing's send, receive and
    delete cost microseconds instead of milliseconds. A call with arguments this class does
    not take (or that moto refuses) goes to `client`, the boto3 client, so errors are the
    API's own."""

    _RECEIVE = frozenset(
        {"QueueUrl", "MaxNumberOfMessages", "AttributeNames", "MessageAttributeNames", "WaitTimeSeconds"}
    )
    _SYSTEM = (
        "AWSTraceHeader",
        "ApproximateFirstReceiveTimestamp",
        "ApproximateReceiveCount",
        "MessageDeduplicationId",
        "MessageGroupId",
        "SenderId",
        "SentTimestamp",
        "SequenceNumber",
    )

    def __init__(self, client: Any, account: str, region: str) -> None:
        self.client = client
        self.account = account
        self.region = region
        self.default_events: set[str] = set()  # see receive_message
        self.exceptions = client.exceptions

    def _backend(self) -> Any:
        """moto's SQS backend of the account and region: the one its dictionaries hold, read
        without `BackendDict.__getitem__`'s lock and key list (a third of a send's cost);
        looked up as moto does when they hold none (first use, or after moto's reset)."""
        from moto.sqs.models import sqs_backends

        regions = dict.get(sqs_backends, self.account)
        backend = dict.get(regions, self.region) if regions is not None else None
        return backend if backend is not None else sqs_backends[self.account][self.region]

    @staticmethod
    def _name(url: str) -> str:
        return url.split("/")[-1] if url.startswith(("http://", "https://")) else url

    def send_message(self, **kwargs: Any) -> dict[str, Any]:
        from moto.core.exceptions import ServiceException

        if not kwargs.keys() <= {"QueueUrl", "MessageBody", "MessageGroupId", "MessageDeduplicationId"}:
            return dict(self.client.send_message(**kwargs))
        backend = self._backend()
        name = self._name(kwargs["QueueUrl"])
        try:
            queue = backend.get_queue(name)
            message = backend.send_message(
                name,
                kwargs["MessageBody"],
                message_attributes={},
                delay_seconds=None,
                deduplication_id=kwargs.get("MessageDeduplicationId"),
                group_id=kwargs.get("MessageGroupId"),
                system_attributes=None,
            )
        except ServiceException:
            return dict(self.client.send_message(**kwargs))
        answer: dict[str, Any] = {"MD5OfMessageBody": message.body_md5, "MessageId": message.id}
        if queue.fifo_queue and message.sequence_number:
            answer["SequenceNumber"] = message.sequence_number
        return answer

    def receive_message(self, **kwargs: Any) -> dict[str, Any]:
        from moto.core.exceptions import ServiceException
        from moto.sqs.constants import MAXIMUM_VISIBILITY_TIMEOUT

        count = kwargs.get("MaxNumberOfMessages", 1)
        timeout = kwargs.get("VisibilityTimeout")
        if (
            not kwargs.keys() <= self._RECEIVE | {"VisibilityTimeout"}
            or not 1 <= count <= 10
            or kwargs.get("WaitTimeSeconds", 0) != 0
            or (timeout is not None and not 0 <= timeout <= MAXIMUM_VISIBILITY_TIMEOUT)
        ):
            return dict(self.client.receive_message(**kwargs))
        backend = self._backend()
        name = self._name(kwargs["QueueUrl"])
        try:
            queue = backend.get_queue(name)
            messages = backend.receive_message(
                name,
                count,
                0,
                queue.visibility_timeout if timeout is None else timeout,
                list(kwargs.get("MessageAttributeNames", [])),
            )
        except ServiceException:
            return dict(self.client.receive_message(**kwargs))
        # the ids of this receive's messages that a rule delivered with moto's default template
        # (change 21: `_deliver` marks them; the poller then knows their top level lacks `account`)
        self.default_events = {m.id for m in messages if m.__dict__.get("default_event")}
        wanted = set(kwargs.get("AttributeNames", []))
        included = [a for a in self._SYSTEM if "All" in wanted or a in wanted]
        return {"Messages": [self._message(m, included) for m in messages]} if messages else {}

    @staticmethod
    def _message(message: Any, included: list[str]) -> dict[str, Any]:
        """What moto's `SQSResponse.receive_message` answers, as botocore parses it."""
        out: dict[str, Any] = {
            "MessageId": message.id,
            "ReceiptHandle": message.receipt_handle,
            "MD5OfBody": message.body_md5,
            "Body": message.body,
        }
        if len(message.message_attributes):
            out["MessageAttributes"] = {
                key: {
                    k: base64.b64decode(v) if k == "BinaryValue" and isinstance(v, str) else v
                    for k, v in value.items()
                }
                for key, value in message.message_attributes.items()
            }
            out["MD5OfMessageAttributes"] = message.attribute_md5
        attributes: dict[str, str] = {}
        values = {
            "SenderId": lambda: message.sender_id,
            "SentTimestamp": lambda: str(message.sent_timestamp),
            "ApproximateReceiveCount": lambda: str(message.approximate_receive_count),
            "ApproximateFirstReceiveTimestamp": lambda: str(message.approximate_first_receive_timestamp),
            "MessageDeduplicationId": lambda: message.deduplication_id,
            "MessageGroupId": lambda: message.group_id,
            "AWSTraceHeader": lambda: (
                (message.system_attributes or {}).get("AWSTraceHeader", {}).get("StringValue")
                if (message.system_attributes or {}).get("AWSTraceHeader")
                else None
            ),
            "SequenceNumber": lambda: message.sequence_number,
        }
        for name in included:
            value = values[name]()
            if value is not None:
                attributes[name] = value
        if included:
            out["Attributes"] = attributes
        return out

    def _batch(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        from moto.core.exceptions import ServiceException

        entries = kwargs.get("Entries") or []
        receipts = [e.get("ReceiptHandle") for e in entries]
        if (
            kwargs.keys() != {"QueueUrl", "Entries"}
            or not 1 <= len(entries) <= 10
            or len(set(receipts)) != len(receipts)
            or len({e.get("Id") for e in entries}) != len(entries)
        ):
            return dict(getattr(self.client, operation)(**kwargs))
        backend = self._backend()
        try:
            success, failed = getattr(backend, operation)(self._name(kwargs["QueueUrl"]), entries)
        except ServiceException:
            return dict(getattr(self.client, operation)(**kwargs))
        return {"Successful": [{"Id": i} for i in success], "Failed": failed}

    def delete_message_batch(self, **kwargs: Any) -> dict[str, Any]:
        return self._batch("delete_message_batch", **kwargs)

    def change_message_visibility_batch(self, **kwargs: Any) -> dict[str, Any]:
        return self._batch("change_message_visibility_batch", **kwargs)

    def get_queue_attributes(self, **kwargs: Any) -> dict[str, Any]:
        from moto.core.exceptions import ServiceException

        names = kwargs.get("AttributeNames") or []
        if kwargs.keys() != {"QueueUrl", "AttributeNames"} or "" in names:
            return dict(self.client.get_queue_attributes(**kwargs))
        try:
            found = self._backend().get_queue_attributes(self._name(kwargs["QueueUrl"]), list(names))
        except ServiceException:
            return dict(self.client.get_queue_attributes(**kwargs))
        attributes = {k: str(v) for k, v in found.items() if v is not None}
        return {"Attributes": attributes} if attributes else {}


# The clients made in this process answer their JSON calls to moto's endpoint here without
# botocore's HTTP request path (worker.answered_by; the before-send hook for the rest).
_answered_here = answered_by(_answer_in_process)


def serve_in_process(endpoint: str) -> None:
    """Answer this process's boto3 calls to `endpoint` with moto's application directly."""
    import boto3
    from botocore.handlers import BUILTIN_HANDLERS
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.test import Client

    with _lock:
        _clients[endpoint] = Client(DomainDispatcherApplication(create_backend_app))
        global _ServerRequest
        if _ServerRequest is None:
            _ServerRequest = _server_request_class()
        if ("before-send", _send_in_process) not in BUILTIN_HANDLERS:
            # Every session made from now on, and the default one if it exists already (once:
            # a hook registered twice on a session answers twice, and a streamed body is lost).
            BUILTIN_HANDLERS.append(("before-send", _send_in_process))
            BUILTIN_HANDLERS.append(("creating-client-class", _answered_here))
            if boto3.DEFAULT_SESSION is not None:
                boto3.DEFAULT_SESSION.events.register("before-send", _send_in_process)
                boto3.DEFAULT_SESSION.events.register("creating-client-class", _answered_here)


def stop_serving(endpoint: str) -> None:
    with _lock:
        _clients.pop(endpoint, None)


# --- an answer's request id looked for once (a change beside the ten above) -------------------
def _enrich_response(headers: dict[str, Any], body: Any) -> tuple[dict[str, Any], Any]:
    """moto's `BaseResponse._enrich_response`: the status header as text, a new request id in
    the headers, and the id put between `<RequestId>` tags in an XML body. moto finds those
    tags with a look-behind regex tried at every position of the body, a walk of every
    character of a JSON answer (a 1 MB Query page) where it can never match; a text body
    without the literal `<RequestId>` is left as it is (what the regex leaves it), the headers
    set by moto's own function. `tests/runtime/test_moto_enrich_response.py` compares both."""
    enrich = _originals["enrich_response"].__func__
    if type(body) is str and "<RequestId>" not in body:
        headers, _ = enrich(headers, "")
        return headers, body
    result: tuple[dict[str, Any], Any] = enrich(headers, body)
    return result


def _install_enrich_response(install: bool) -> None:
    if install:
        _originals["enrich_response"] = BaseResponse.__dict__["_enrich_response"]
        BaseResponse._enrich_response = staticmethod(_enrich_response)  # type: ignore[method-assign]
    else:
        BaseResponse._enrich_response = _originals.pop("enrich_response")  # type: ignore[method-assign]


# --- install -----------------------------------------------------------------------------------
def install() -> None:
    """Apply the changes (idempotent); moto must run in this process to see them."""
    require_moto_version()
    with _lock:
        for model in (Item, StreamRecord):
            if not isinstance(getattr(model, "instances_tracked", None), Created):
                setattr(model, "instances_tracked", Created())  # noqa: B010 - moto's class attribute
        if _originals:
            return
        _install_retention(True)
        _install_receive(True)
        _install_sqs_clock(True)
        _install_request_names(True)
        table_import.install()
        _originals["transact_write_items"] = DynamoDBBackend.transact_write_items
        _originals["add_message"] = Queue.add_message
        _originals["shard_add"] = StreamShard.add
        _originals["serialized"] = BaseResponse.serialized
        _originals["parse_parameters"] = BaseResponse.parse_parameters
        _originals["item_init"] = Item.__init__
        BaseResponse.parse_parameters = _parse_parameters  # type: ignore[method-assign]
        _originals["table_query"] = Table.query
        _originals["all_items"] = Table.all_items
        Table.query = _table_query  # type: ignore[method-assign]
        Table.all_items = _all_items  # type: ignore[method-assign]
        _orders.clear()  # moto as shipped kept no order while it ran
        _originals["table_put_item"] = Table.put_item
        _originals["table_delete_item"] = Table.delete_item
        Table.put_item = _put_item  # type: ignore[method-assign]
        _originals["dynamo_hash"] = DynamoType.__hash__
        _originals["dynamo_eq"] = DynamoType.__eq__
        DynamoType.__hash__ = _dynamo_hash  # type: ignore[method-assign]
        DynamoType.__eq__ = _dynamo_eq  # type: ignore[method-assign]
        Table.delete_item = _delete_item  # type: ignore[method-assign]
        import jsonpath_ng.ext
        from moto.sqs.models import SQSBackend

        _originals["queue_attributes"] = Queue.__dict__["attributes"]
        _originals["send_message"] = SQSBackend.send_message
        _originals["jsonpath_parse"] = jsonpath_ng.ext.parse
        Queue.attributes = property(_queue_attributes)  # type: ignore[assignment,method-assign]
        _originals["queue_messages"] = Queue.__dict__["messages"]
        Queue.messages = property(_visible_messages)  # type: ignore[assignment,method-assign]
        SQSBackend.send_message = _send_message  # type: ignore[method-assign]
        jsonpath_ng.ext.parse = _jsonpath
        from moto.events.models import Rule

        _originals["send_to_targets"] = Rule.send_to_targets
        Rule.send_to_targets = _send_to_targets  # type: ignore[method-assign,assignment]
        from moto.events.models import EventsBackend

        _originals["put_events"] = EventsBackend.put_events
        EventsBackend.put_events = _put_events  # type: ignore[method-assign]
        Item.__init__ = _item_init  # type: ignore[method-assign]
        _originals["item_size"] = Item.size
        Item.size = _item_size  # type: ignore[method-assign]
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication

        _originals["get_backend_for_host"] = DomainDispatcherApplication.get_backend_for_host
        DomainDispatcherApplication.get_backend_for_host = _get_backend_for_host  # type: ignore[method-assign]
        import moto.core.responses

        _originals["method_names_from_class"] = moto.core.responses.method_names_from_class
        moto.core.responses.method_names_from_class = _method_names_from_class  # type: ignore[assignment]
        BaseResponse.serialized = _serialized  # type: ignore[method-assign]
        DynamoDBBackend.transact_write_items = _transact_write_items  # type: ignore[method-assign]
        Table.__deepcopy__ = _table_deepcopy  # type: ignore[attr-defined]
        Queue.add_message = _queue_add_message  # type: ignore[method-assign]
        StreamShard.add = _shard_add  # type: ignore[method-assign]
        _install_stream_records(True)
        _install_query_answers()
        _install_batch_write(True)
        _install_batch_get(True)
        _install_enrich_response(True)


def _install_query_answers() -> None:
    import moto.dynamodb.models.table as table_module
    from moto.dynamodb.models.utilities import dynamo_to_dict
    from moto.dynamodb.responses import DynamoResult

    _originals["table_copy_module"] = table_module.copy
    _originals["backend_query"] = DynamoDBBackend.query
    _originals["dynamo_to_dict"] = dynamo_to_dict
    _originals["dynamo_result_init"] = DynamoResult.__init__
    table_module.copy = _TableCopies  # type: ignore[assignment]
    DynamoDBBackend.query = _backend_query  # type: ignore[method-assign]
    DynamoResult.__init__ = _dynamo_result_init  # type: ignore[method-assign]


def _uninstall_query_answers() -> None:
    import moto.dynamodb.models.table as table_module
    from moto.dynamodb.responses import DynamoResult

    table_module.copy = _originals.pop("table_copy_module")
    DynamoDBBackend.query = _originals.pop("backend_query")  # type: ignore[method-assign]
    DynamoResult.__init__ = _originals.pop("dynamo_result_init")  # type: ignore[method-assign]
    _originals.pop("dynamo_to_dict")


def uninstall() -> None:
    """Back to moto as shipped (the benchmark and the tests compare the two)."""
    with _lock:
        if not _originals:
            return
        _install_retention(False)
        _install_receive(False)
        _install_sqs_clock(False)
        _install_request_names(False)
        table_import.uninstall()
        DynamoDBBackend.transact_write_items = _originals.pop("transact_write_items")  # type: ignore[method-assign]
        Queue.add_message = _originals.pop("add_message")  # type: ignore[method-assign]
        StreamShard.add = _originals.pop("shard_add")  # type: ignore[method-assign]
        BaseResponse.serialized = _originals.pop("serialized")  # type: ignore[method-assign]
        BaseResponse.parse_parameters = _originals.pop("parse_parameters")  # type: ignore[method-assign]
        Table.query = _originals.pop("table_query")  # type: ignore[method-assign]
        Table.all_items = _originals.pop("all_items")  # type: ignore[method-assign]
        Table.put_item = _originals.pop("table_put_item")  # type: ignore[method-assign]
        DynamoType.__hash__ = _originals.pop("dynamo_hash")  # type: ignore[method-assign]
        DynamoType.__eq__ = _originals.pop("dynamo_eq")  # type: ignore[method-assign]
        Table.delete_item = _originals.pop("table_delete_item")  # type: ignore[method-assign]
        _orders.clear()
        import jsonpath_ng.ext
        from moto.sqs.models import SQSBackend

        Queue.attributes = _originals.pop("queue_attributes")  # type: ignore[method-assign]
        Queue.messages = _originals.pop("queue_messages")  # type: ignore[method-assign]
        SQSBackend.send_message = _originals.pop("send_message")  # type: ignore[method-assign]
        jsonpath_ng.ext.parse = _originals.pop("jsonpath_parse")
        from moto.events.models import Rule

        Rule.send_to_targets = _originals.pop("send_to_targets")  # type: ignore[method-assign]
        from moto.events.models import EventsBackend

        EventsBackend.put_events = _originals.pop("put_events")  # type: ignore[method-assign]
        Item.__init__ = _originals.pop("item_init")  # type: ignore[method-assign]
        Item.size = _originals.pop("item_size")  # type: ignore[method-assign]
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication

        DomainDispatcherApplication.get_backend_for_host = _originals.pop("get_backend_for_host")  # type: ignore[method-assign]
        import moto.core.responses

        moto.core.responses.method_names_from_class = _originals.pop("method_names_from_class")
        del Table.__deepcopy__  # type: ignore[attr-defined]
        _install_stream_records(False)
        _uninstall_query_answers()
        _install_batch_write(False)
        _install_batch_get(False)
        _install_enrich_response(False)


@contextmanager
def shipped() -> Iterator[None]:
    """Moto as shipped for the block, the shim back after it (the differential tests)."""
    uninstall()
    try:
        yield
    finally:
        install()
