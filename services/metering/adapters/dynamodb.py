"""Metering's table. Keys (``pk`` / ``sk``):

- ``METER#<tenant>#<meter_id>`` / ``METER``: the meter as registered now (and the file and
  line that registered it: a redelivery of that file knows its own line, issue 26);
  ``METER#...`` / ``V#<recorded_at>#<file_id>#<line>``: each accepted version (history);
- ``ACCOUNT#<tenant>#<account_id>`` / ``STATE``: the account's meters, register series and
  recent periods (``metering.domain.model.AccountMetering``, JSON);
- ``READS#<file_id>`` / ``PART#<first line>``: the reads a batch of a file took in, accepted
  and failed ones (a failure with its column and reason: never dropped), as one JSON list
  (``READ_COLUMNS``) of at most ``READS_PART_BYTES``: the batch's record of its rows, one
  item per batch rather than one per read (issue 7: a read's effect on the register is in the
  account's ``STATE`` item, written in the same batch; nothing queries reads one by one);
- ``DAY#<tenant>#<meter_id>`` / ``DATE#<local date>``: one local day's intervals (``slots``, each with
  the file, pass and line that gave it: ``metering.domain.interval.StoredDay``, JSON) and
  their sums, derived from all of them (issue 26);
- ``BILLED#<tenant>`` / ``<account_id>``: an account as billing last published it (its
  version, opened and closed dates; issue 26); ``BILLED-TENANTS`` / ``<tenant>``: billing has
  published an account of the tenant (from then on a new meter on an account not known waits);
- ``METER-SUSPENSE#<tenant>`` / ``<account_id>#<file_id>#<line>``: a meters-file line waiting
  for its account, with the reason; ``METER-SUSPENDED#<tenant>`` / ``<account_id>``: the
  account has lines waiting (what an arriving account looks up);
- ``ACCOUNTS#<shard>`` / ``<tenant>#<account_id>``: the index of accounts the daily run
  queries (issue 31: no Scan on a hot path), written once, before the account's first
  ``STATE``; ``FLOWMONITORS`` / ``<tenant>#<meter_id>``: the index of flow monitors, written
  with each version of such a meter (a meter no longer one is dropped when read). A table
  written before the indexes existed is indexed once by
  :meth:`DynamoMeteringRepository.reindex` (admin work: a Scan, never on a schedule);
- ``FILE#<file_id>`` / ``FILE``: a file's last run: its counts, whether it is final (a
  duplicate when sent again) and its passes (``metering.app.core.FileRecord``); ``OUTBOX#<event_id>`` / ``OUTBOX``: events.
  A ``ConsumptionsDetermined`` chunk item is also metering's record of what it determined
  (every period's volume, quality, flags and the reads used): one fact, one item, published
  by the stream and kept without expiry (X-RETENTION), instead of a second item per period.

Writes are BatchWriteItem in the order ``metering.app.ingest`` documents; no transaction.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from common.due_marks import DueMarks
from common.dynamo import batch_get, batch_put, from_item, get, to_item
from common.events import Event
from common.ids import key
from common.imports import ImportCounts
from common.outbox import OUTBOX_PREFIX, OUTBOX_SK, outbox_item
from metering.app.ingest import AccountKey, BatchOutput, FileRecord, MeterKey, TakenIn, UploadedFile
from metering.domain.accounts import BilledAccount, WaitingMeter, waiting_reason
from metering.domain.interval import UTILITY_TZ, DayKey, IntervalMeter, StoredDay
from metering.domain.model import AccountMetering, Meter
from metering.events import ReadsRejected

STATE = "STATE"
FLOW_MONITOR = "flow-monitor"
ACCOUNT_SHARDS = 4  # the accounts index's partitions: a large upload's writes spread over them
FLOW_MONITORS = "FLOWMONITORS"


def meter_key(tenant: str, meter_id: str) -> tuple[str, str]:
    return key("METER", tenant, meter_id), "METER"


def account_key(tenant: str, account_id: str) -> tuple[str, str]:
    return key("ACCOUNT", tenant, account_id), STATE


def determinations_item(chunk: Event, now: datetime) -> dict[str, Any]:
    """A chunk of determined consumptions: the outbox item the stream publishes, kept as the
    durable record of the determinations (no ``expires_at``)."""
    item = outbox_item(chunk, now=now)
    del item["expires_at"]
    return item


READ_COLUMNS = (
    "line",
    "tenant",
    "meter_id",
    "account_id",
    "read_on",
    "reading",
    "read_type",
    "status",
    "column",
    "reason",
    "pass",  # issue 26: the run of the file that took the read in (older items: none, pass 0)
)
READS_PART_BYTES = 300_000  # under the 400 KB item limit with the keys and the other attributes


def reads_items(batch: BatchOutput, file_id: str, at: str) -> Iterator[dict[str, Any]]:
    """The batch's reads in line order, cut into items of at most ``READS_PART_BYTES`` of JSON
    (a row is at most about 700 bytes: ids of 64 characters, a reason of 300), each keyed by
    its first line, so taking the same file in again rewrites the same items."""
    rows: list[list[Any]] = [
        [
            r.line,
            r.tenant,
            r.meter_id,
            account,
            r.read_on.isoformat(),
            str(r.reading),
            r.read_type,
            "accepted",
            None,
            None,
            pass_,
        ]
        for r, account, pass_ in batch.reads
    ]
    rows += [
        [
            f.reading.line,
            f.reading.tenant,
            f.reading.meter_id,
            f.account_id,
            f.reading.read_on.isoformat(),
            str(f.reading.reading),
            f.reading.read_type,
            "failed",
            f.column,
            f.reason,
            None,
        ]
        for f in batch.failed_reads
    ]
    rows.sort(key=lambda row: row[0])
    pk = key("READS", file_id.replace("#", "-"))
    part: list[str] = []
    first, size = 0, 0
    for row in rows:
        text = json.dumps(row, separators=(",", ":"))
        if part and size + len(text) + 1 > READS_PART_BYTES:
            yield _reads_part(pk, first, part, file_id, at)
            part, size = [], 0
        if not part:
            first = row[0]
        part.append(text)
        size += len(text) + 1
    if part:
        yield _reads_part(pk, first, part, file_id, at)


def _reads_part(pk: str, first_line: int, rows: list[str], file_id: str, at: str) -> dict[str, Any]:
    return {
        "pk": pk,
        "sk": key("PART", f"{first_line:09d}"),
        "columns": ",".join(READ_COLUMNS),
        "reads": "[" + ",".join(rows) + "]",
        "count": len(rows),
        "source": file_id,
        "recorded_at": at,
    }


def _meter_of(pk: str) -> MeterKey:
    _, tenant, meter_id = pk.split("#", 2)
    return tenant, meter_id


def account_index_key(tenant: str, account_id: str) -> tuple[str, str]:
    """The account's entry in the daily run's index: a stable shard of its key."""
    sk = f"{tenant}#{account_id}"
    return f"ACCOUNTS#{zlib.crc32(sk.encode()) % ACCOUNT_SHARDS}", sk


def account_index_item(tenant: str, account_id: str) -> dict[str, Any]:
    pk, sk = account_index_key(tenant, account_id)
    return {"pk": pk, "sk": sk, "tenant": tenant, "account_id": account_id}


def flow_monitor_index_item(tenant: str, meter_id: str) -> dict[str, Any]:
    return {"pk": FLOW_MONITORS, "sk": f"{tenant}#{meter_id}", "tenant": tenant, "meter_id": meter_id}


def day_key(tenant: str, meter_id: str, day: date) -> tuple[str, str]:
    return key("DAY", tenant, meter_id), key("DATE", day.isoformat())


def outbox_key(event_id: str) -> tuple[str, str]:
    return f"{OUTBOX_PREFIX}{event_id}", OUTBOX_SK


def file_key(file_id: str) -> tuple[str, str]:
    return key("FILE", file_id), "FILE"


class DynamoMeteringRepository:
    MARKS_DAILY = True
    """Its writes of the daily run's inputs (accounts, meters, interval days) add their day
    to the daily mark (``common.due``; items first, then the mark). The daily run's own
    repository (:class:`DailyScan`) does not: its results are in the day it records."""

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table
        self.due = DueMarks(client, table)

    def _daily_inputs_written(self, now: datetime) -> None:
        if self.MARKS_DAILY:
            self.due.add([now.astimezone(UTILITY_TZ).date()])

    def file_record(self, file_id: str) -> FileRecord | None:
        item = get(self._client, self._table, *file_key(file_id))
        if item is None:
            return None
        return FileRecord(
            final=bool(item.get("final", True)),
            passes=int(item.get("passes", 1)),
            lines=int(item.get("lines", 0)),
            rejected=int(item.get("rejected", 0)),
        )

    def meters(self, keys: Iterable[MeterKey]) -> dict[MeterKey, Meter]:
        found = batch_get(self._client, self._table, (meter_key(*k) for k in keys))
        meters = (Meter.from_json(json.loads(item["meter"])) for item in found.values())
        return {(m.tenant, m.meter_id): m for m in meters}

    def meters_taken_in(self, keys: Iterable[MeterKey], file_id: str) -> dict[MeterKey, TakenIn]:
        found = batch_get(self._client, self._table, (meter_key(*k) for k in keys))
        return {
            _meter_of(pk): TakenIn(
                int(item["line"]), int(item.get("pass", 0)), item.get("outcome", "accepted")
            )
            for (pk, _), item in found.items()
            if item.get("source") == file_id and item.get("line") is not None
        }

    def reads_taken_in(self, file_id: str, first_line: int, last_line: int) -> dict[int, int]:
        """From the file's record of its batches' lines (``reads_items``): a batch's parts are
        keyed by their first line, so those of lines [first_line, last_line] are in that range."""
        pages = self._client.get_paginator("query").paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :p AND sk BETWEEN :a AND :b",
            ExpressionAttributeValues={
                ":p": {"S": key("READS", file_id.replace("#", "-"))},
                ":a": {"S": key("PART", f"{first_line:09d}")},
                ":b": {"S": key("PART", f"{last_line:09d}")},
            },
            ConsistentRead=True,
        )
        lines: dict[int, int] = {}
        for page in pages:
            for raw in page["Items"]:
                item = from_item(raw)
                columns = item["columns"].split(",")
                status = columns.index("status")
                at = columns.index("pass") if "pass" in columns else None
                for row in json.loads(item["reads"]):
                    if row[status] == "accepted":
                        lines[int(row[0])] = int(row[at] or 0) if at is not None else 0
        return lines

    def meter_accounts(self, keys: Iterable[MeterKey]) -> dict[MeterKey, str]:
        # the whole item: a ProjectionExpression saves no read capacity on AWS, and moto
        # builds a new item for each projected one (it cost more than it saved here)
        found = batch_get(self._client, self._table, (meter_key(*k) for k in keys))
        return {_meter_of(pk): item["account_id"] for (pk, _), item in found.items()}

    # --- billing's accounts and the meters waiting for them (issue 26) -------------------
    def keep_accounts(self, accounts: Sequence[BilledAccount]) -> int:
        kept = 0
        for tenant in sorted({a.tenant for a in accounts}):
            batch_put(self._client, self._table, [{"pk": "BILLED-TENANTS", "sk": tenant}])
        for a in accounts:
            item = {
                "pk": key("BILLED", a.tenant),
                "sk": a.account_id,
                "version": a.version,
                "opened_on": a.opened_on.isoformat(),
                "closed_on": a.closed_on.isoformat() if a.closed_on else None,
            }
            try:
                self._client.put_item(
                    TableName=self._table,
                    Item=to_item(item),
                    ConditionExpression="attribute_not_exists(pk) OR version < :v",
                    ExpressionAttributeValues={":v": {"S": a.version}},
                )
                kept += 1
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                    raise
        return kept

    def tenants_known(self, tenants: Iterable[str]) -> set[str]:
        found = batch_get(self._client, self._table, (("BILLED-TENANTS", t) for t in set(tenants)))
        return {sk for _, sk in found}

    def known_accounts(self, keys: Iterable[AccountKey]) -> set[AccountKey]:
        found = batch_get(self._client, self._table, ((key("BILLED", t), a) for t, a in set(keys)))
        return {(pk.split("#", 1)[1], sk) for pk, sk in found}

    def suspend_meters(self, lines: Sequence[WaitingMeter], *, now: datetime) -> None:
        items = [
            {
                "pk": key("METER-SUSPENSE", w.tenant),
                "sk": f"{w.account_id}#{w.file_id}#{w.line:09d}",
                "account_id": w.account_id,
                "meter_id": w.meter_id,
                "file_id": w.file_id,
                "file_key": w.file_key,
                "line": w.line,
                "cells": json.dumps(dict(w.cells), sort_keys=True),
                "reason": waiting_reason(w.tenant, w.account_id),
                "outcome": "waiting",
                "since": now.isoformat(),
            }
            for w in lines
        ]
        marks = {(key("METER-SUSPENDED", w.tenant), w.account_id) for w in lines}
        # the lines first, the marks last; a line already waiting (its file sent again) keeps
        # its item as it is
        there = batch_get(self._client, self._table, [(str(i["pk"]), str(i["sk"])) for i in items])
        batch_put(self._client, self._table, [i for i in items if (i["pk"], i["sk"]) not in there])
        marked = batch_get(self._client, self._table, list(marks))
        batch_put(
            self._client, self._table, [{"pk": pk, "sk": a} for pk, a in marks if (pk, a) not in marked]
        )

    def suspended(self, tenant: str, account_ids: Iterable[str]) -> set[str]:
        found = batch_get(
            self._client, self._table, ((key("METER-SUSPENDED", tenant), a) for a in set(account_ids))
        )
        return {sk for _, sk in found}

    def _suspense_items(self, tenant: str, prefix: str = "") -> list[dict[str, Any]]:
        values: dict[str, Any] = {":p": {"S": key("METER-SUSPENSE", tenant)}}
        condition = "pk = :p"
        if prefix:
            condition += " AND begins_with(sk, :s)"
            values[":s"] = {"S": prefix}
        pages = self._client.get_paginator("query").paginate(
            TableName=self._table,
            KeyConditionExpression=condition,
            ExpressionAttributeValues=values,
            ConsistentRead=True,
        )
        return [from_item(raw) for page in pages for raw in page["Items"]]

    def waiting_meters(self, tenant: str, account_id: str) -> list[WaitingMeter]:
        return [
            WaitingMeter(
                tenant=tenant,
                account_id=account_id,
                meter_id=str(i["meter_id"]),
                file_id=str(i["file_id"]),
                file_key=str(i.get("file_key", "")),
                line=int(i["line"]),
                cells=tuple(sorted(json.loads(i["cells"]).items())),
            )
            for i in self._suspense_items(tenant, f"{account_id}#")
            if i.get("account_id") == account_id and i.get("outcome", "waiting") == "waiting"
        ]

    def settle_meters(
        self, tenant: str, account_id: str, taken: Sequence[WaitingMeter], refused: Mapping[WaitingMeter, str]
    ) -> None:
        pk = key("METER-SUSPENSE", tenant)
        for w, reason in refused.items():
            self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": pk}, "sk": {"S": f"{account_id}#{w.file_id}#{w.line:09d}"}},
                UpdateExpression="SET outcome = :o, reason = :r",
                ExpressionAttributeValues={":o": {"S": "rejected"}, ":r": {"S": reason[:1000]}},
            )
        for w in taken:
            self._client.delete_item(
                TableName=self._table,
                Key={"pk": {"S": pk}, "sk": {"S": f"{account_id}#{w.file_id}#{w.line:09d}"}},
            )
        self._client.delete_item(
            TableName=self._table,
            Key={"pk": {"S": key("METER-SUSPENDED", tenant)}, "sk": {"S": account_id}},
        )

    def meter_suspense(self, tenant: str) -> list[dict[str, Any]]:
        """Every meters-file line in suspense of the tenant (waiting, or refused when its
        account arrived), by account, file and line."""
        return [
            {
                "account_id": str(i["account_id"]),
                "meter_id": str(i.get("meter_id", "")),
                "file_key": str(i.get("file_key", "")),
                "line": int(i["line"]),
                "outcome": str(i.get("outcome", "waiting")),
                "reason": str(i.get("reason", "")),
                "since": str(i.get("since", "")),
            }
            for i in self._suspense_items(tenant)
        ]

    def accounts(self, keys: Iterable[AccountKey]) -> dict[AccountKey, AccountMetering]:
        found = batch_get(self._client, self._table, (account_key(*k) for k in keys))
        accounts = (
            AccountMetering.from_json(i["tenant"], i["account_id"], json.loads(i["state"]), int(i["version"]))
            for i in found.values()
        )
        return {(a.tenant, a.account_id): a for a in accounts}

    def interval_meters(self, keys: Iterable[MeterKey]) -> dict[MeterKey, IntervalMeter]:
        return {k: _interval_meter(m) for k, m in self.meters(keys).items()}

    def flow_monitors(self) -> Iterator[IntervalMeter]:
        """The meters the flow-monitor index names that are flow monitors now (a Query of the
        index and a BatchGetItem of the meters, not a Scan of the table: issue 31)."""
        keys = [(item["tenant"]["S"], item["meter_id"]["S"]) for item in self._query_all(FLOW_MONITORS)]
        for _, meter in sorted(self.meters(keys).items()):
            if meter.kind == FLOW_MONITOR:
                yield _interval_meter(meter)

    def _query_all(self, pk: str) -> Iterator[dict[str, Any]]:
        pages = self._client.get_paginator("query").paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": pk}},
        )
        for page in pages:
            yield from page["Items"]

    def interval_days(self, keys: Iterable[DayKey]) -> dict[DayKey, StoredDay]:
        found = batch_get(self._client, self._table, (day_key(*k) for k in keys))
        days: dict[DayKey, StoredDay] = {}
        for item in found.values():
            if "slots" in item:  # an item written before issue 26 holds sums only
                days[(item["tenant"], item["meter_id"], date.fromisoformat(item["day"]))] = (
                    StoredDay.from_json(json.loads(item["slots"]))
                )
        return days

    def save_days(self, days: dict[DayKey, StoredDay], *, file_id: str, now: datetime) -> None:
        at = now.isoformat()
        items = []
        for (tenant, meter_id, day), stored in days.items():
            sums = stored.sums()
            pk, sk = day_key(tenant, meter_id, day)
            items.append(
                {
                    "pk": pk,
                    "sk": sk,
                    "tenant": tenant,
                    "meter_id": meter_id,
                    "day": day.isoformat(),
                    "volume_gal": sums.volume_gal,
                    "intervals": sums.intervals,
                    "slots": json.dumps(stored.as_json(), separators=(",", ":")),
                    "peak_interval_gal": sums.peak_gal,
                    "source": file_id,
                    "recorded_at": at,
                }
            )
        batch_put(self._client, self._table, items)
        if days:
            self._daily_inputs_written(now)

    def save_events(self, events: Sequence[Event], *, now: datetime) -> None:
        batch_put(self._client, self._table, (outbox_item(e, now=now) for e in events))

    def month_volume(self, meter: IntervalMeter, start: date, end: date) -> tuple[Decimal, int]:
        paginator = self._client.get_paginator("query")
        pages = paginator.paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :p AND sk BETWEEN :a AND :b",
            ExpressionAttributeValues={
                ":p": {"S": key("DAY", meter.tenant, meter.meter_id)},
                ":a": {"S": key("DATE", start.isoformat())},
                ":b": {"S": key("DATE", end.isoformat())},
            },
        )
        total, days = Decimal(0), 0
        for page in pages:
            for raw in page["Items"]:
                item = from_item(raw)
                if item["day"] < end.isoformat():
                    total += Decimal(str(item["volume_gal"]))
                    days += 1
        return total, days

    def all_account_keys(self) -> Iterator[AccountKey]:
        """Every account, from the accounts index (a Query a shard, not a Scan: issue 31)."""
        for shard in range(ACCOUNT_SHARDS):
            for item in self._query_all(f"ACCOUNTS#{shard}"):
                yield item["tenant"]["S"], item["account_id"]["S"]

    def reindex(self) -> int:
        """Write the accounts and flow-monitor index entries of every account and meter in
        the table (issue 31): once, for a table written before the indexes existed; a repeat
        rewrites the same items. A Scan of the whole table: admin work, never a schedule's
        path. Returns the entries written."""
        pages = self._client.get_paginator("scan").paginate(
            TableName=self._table,
            FilterExpression="(#sk = :state AND begins_with(pk, :account)) OR #sk = :meter",
            ExpressionAttributeNames={"#sk": "sk"},
            ExpressionAttributeValues={
                ":state": {"S": STATE},
                ":account": {"S": "ACCOUNT#"},
                ":meter": {"S": "METER"},
            },
        )
        items: list[dict[str, Any]] = []
        for page in pages:
            for raw in page["Items"]:
                item = from_item(raw)
                if item["sk"] == STATE:
                    items.append(account_index_item(item["tenant"], item["account_id"]))
                elif (meter := Meter.from_json(json.loads(item["meter"]))).kind == FLOW_MONITOR:
                    items.append(flow_monitor_index_item(meter.tenant, meter.meter_id))
        batch_put(self._client, self._table, items)
        return len(items)

    def save(self, batch: BatchOutput, *, file_id: str, now: datetime) -> None:
        at = now.isoformat()
        chunks = batch.chunks
        if batch.redelivered and chunks:  # the chunks an earlier delivery stored stay as they are
            stored = batch_get(self._client, self._table, (outbox_key(c.event_id) for c in chunks))
            chunks = [c for c in chunks if outbox_key(c.event_id) not in stored]
        batch_put(self._client, self._table, (determinations_item(chunk, now) for chunk in chunks))
        batch_put(self._client, self._table, reads_items(batch, file_id, at))
        meters: list[dict[str, Any]] = []
        versions: list[dict[str, Any]] = []
        for meter, line, pass_, outcome in batch.meters:
            pk, sk = meter_key(meter.tenant, meter.meter_id)
            body = json.dumps(meter.as_json())
            meters.append(
                {
                    "pk": pk,
                    "sk": sk,
                    "meter": body,
                    "account_id": meter.account_id,
                    "updated_at": at,
                    "source": file_id,
                    "line": line,
                    "pass": pass_,
                    "outcome": outcome,
                }
            )
            version = key("V", at, file_id.replace("#", "-"), line)
            versions.append({"pk": pk, "sk": version, "meter": body, "source": file_id, "recorded_at": at})
        # the history first: a meter item naming this file's line has its version written (a
        # redelivery that finds it writes neither again, ingest's module doc); the flow-monitor
        # index with it, before the meter
        versions += [
            flow_monitor_index_item(meter.tenant, meter.meter_id)
            for meter, *_ in batch.meters
            if meter.kind == FLOW_MONITOR
        ]
        batch_put(self._client, self._table, versions)
        batch_put(self._client, self._table, meters)
        # a new account's index entry before its first STATE: a redelivery that finds the
        # STATE (version 1 or later) finds the entry too
        batch_put(
            self._client,
            self._table,
            (account_index_item(a.tenant, a.account_id) for a in batch.accounts if a.version == 0),
        )
        batch_put(
            self._client,
            self._table,
            (
                {
                    "pk": account_key(a.tenant, a.account_id)[0],
                    "sk": STATE,
                    "tenant": a.tenant,
                    "account_id": a.account_id,
                    "state": json.dumps(a.as_json(), separators=(",", ":")),
                    "version": a.version + 1,
                    "updated_at": at,
                }
                for a in batch.accounts
            ),
        )
        if batch.accounts or batch.meters:
            self._daily_inputs_written(now)

    def record_file(
        self,
        file: UploadedFile,
        kind: str,
        counts: ImportCounts,
        rejected: ReadsRejected | None,
        now: datetime,
        *,
        record: FileRecord,
    ) -> None:
        pk, sk = file_key(file.file_id)
        items: list[dict[str, Any]] = [
            {
                "pk": pk,
                "sk": sk,
                "kind": kind,
                "bucket": file.bucket,
                "key": file.key,
                "etag": file.etag,
                **counts.as_dict(),
                "final": record.final,
                "passes": record.passes,
                "report_key": rejected.report_key if rejected else None,
                "recorded_at": now.isoformat(),
            }
        ]
        if rejected is not None:
            items.insert(0, outbox_item(rejected, now=now))
        batch_put(self._client, self._table, items)


def _interval_meter(meter: Meter) -> IntervalMeter:
    return IntervalMeter(meter.tenant, meter.meter_id, meter.account_id, meter.units, meter.kind)


class DailyRunRepository(DynamoMeteringRepository):
    """The repository of one daily run (estimates, then satellite flow): its writes do not
    add their day to the daily mark (their effect is in the next day it records), and the
    flow monitors are read once a run (the run publishes their month, then asks whether
    there are any). One instance per run."""

    MARKS_DAILY = False

    def __init__(self, client: Any, table: str) -> None:
        super().__init__(client, table)
        self._monitors: list[IntervalMeter] | None = None

    def flow_monitors(self) -> Iterator[IntervalMeter]:
        if self._monitors is None:
            self._monitors = list(super().flow_monitors())
        yield from self._monitors
