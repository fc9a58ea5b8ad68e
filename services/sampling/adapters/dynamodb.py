"""Sampling's table (single-table, ``pk``/``sk``); its stream publishes the outbox.

Keys:

- ``LABFILE#<file_id>`` / ``LABFILE``: a lab file taken in (by content digest);
- ``SAMPLE#<tenant>#<sample_id>`` / ``SAMPLE``: a sample's facts (account, collection
  date, kind, lab, collector, custody, sampling point, lab invoice);
- ``ACCT#<tenant>#<account_id>`` / ``ACCOUNT`` (sampling point registration),
  ``RESULT#<sample_id>#<parameter>`` (one result, written once), ``DECISION#<sample_id>``
  (a staff resample decision), ``CLASSIFICATION`` (the current category, versioned);
- ``ACCT#<tenant>#<account_id>`` / ``BILLED``: the account as billing last published it
  (``AccountsChanged``, issue 26), conditional on its version: what makes a lab result for
  it acceptable before staff register a sampling point (the service address stands in);
- ``LABSUSPENSE#<tenant>`` / ``<account_id>#<file_id>#<line>``: a lab line waiting for an
  account not known yet, with its reason; ``LABSUSPENDED#<tenant>`` / ``<account_id>``:
  the account has lines waiting (what an arriving account looks up);
- ``ACCOUNTS#<tenant>`` / ``<account_id>``: the tenant's registered accounts (for reminders);
- ``EXITS#<tenant>`` / ``<account_id>``: a running PP-SEW-CAT-B-EXIT clock and its end;
- ``DEADLINES#<tenant>`` / ``<account_id>#<sample_id>``: a satellite results deadline;
- ``REPORTS#<tenant>#<year>`` / ``<account_id>``: an annual report received;
- ``DAILY`` / ``DUE``: when the daily run next has work (``common.due.DueMark``):
  the date its last full run computed, and the dates of exit clocks and deadlines written since;
- ``OUTBOX#<digest of the event's type and business key>`` / ``OUTBOX``: the outbox,
  keyed by business key so an event is published once however often it is produced.

X-RETENTION: no sampling item carries a TTL shorter than 7 years. State items have none;
outbox items (the record of each event, X-AUDIT) expire after ``RETENTION``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from common.clock import Clock
from common.due import DueMark
from common.due_marks import DueMarks
from common.dynamo import (
    batch_get,
    batch_put,
    from_item,
    get,
    key_of,
    put_if_absent,
    to_item,
)
from common.errors import TransientError
from common.events import Event
from common.handling import MessageRejected
from common.outbox import outbox_item
from sampling.domain.accounts import BilledAccount, waiting_reason
from sampling.domain.intake import LabFile, StoredSample, StoredValue, WaitingRow
from sampling.domain.lab_files import LabRow, SampleKind
from sampling.domain.samples import AccountInfo, AccountRecord, Decision, StoredResult
from sampling.domain.satellite import ResultsDeadline
from sampling.events import LabFileTakenIn, StrengthClassified

RETENTION = timedelta(days=7 * 366 + 2)
"""X-RETENTION: 7 years (leap days included) and a margin."""

_MAX_ACTIONS = 100


def account_pk(tenant: str, account_id: str) -> str:
    return f"ACCT#{tenant}#{account_id}"


def sample_pk(tenant: str, sample_id: str) -> str:
    return f"SAMPLE#{tenant}#{sample_id}"


def outbox_key(event: Event) -> str:
    digest = hashlib.sha256(f"{event.detail_type()}#{event.business_key()}".encode()).hexdigest()
    return f"OUTBOX#{digest[:40]}"


class DynamoSamplingRepository:
    def __init__(self, client: Any, table: str, clock: Clock) -> None:
        self._client = client
        self._table = table
        self._clock = clock
        self._marks = DueMarks(client, table)

    # --- outbox ---------------------------------------------------------------------------
    def _outbox_values(self, event: Event) -> dict[str, Any]:
        now = self._clock.now()
        item = outbox_item(event, now=now)
        item["pk"] = outbox_key(event)
        item["expires_at"] = int((now + RETENTION).timestamp())
        return item

    def _outbox(self, event: Event) -> dict[str, Any]:
        return put_if_absent(self._table, self._outbox_values(event))

    def _put_outbox(self, event: Event) -> bool:
        """The event's outbox item, once per type and business key; False if already there."""
        try:
            self._client.put_item(**self._outbox(event)["Put"])
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise TransientError(f"writing {event.detail_type()} to the outbox: {exc}") from exc
        return True

    def publish(self, events: Sequence[Event]) -> None:
        """The events not in the outbox yet, read and written in batches (a lab file's charges
        and classifications are many). The publisher sends only INSERTs, so an item another
        delivery wrote between the read and the write is rewritten, never sent twice."""
        items: dict[tuple[str, str], dict[str, Any]] = {}
        for event in events:
            values = self._outbox_values(event)
            items.setdefault((values["pk"], values["sk"]), values)
        there = batch_get(self._client, self._table, items)
        batch_put(self._client, self._table, [v for k, v in items.items() if k not in there])

    # Event first, state second, no transaction (moto copies the whole table per
    # transaction): the outbox item is the record of the fact, keyed by business key. A
    # crash in between is repaired by the retry, which finds the event, skips it and
    # writes the state it still lacks.
    def _write(self, actions: list[dict[str, Any]], event: Event | None) -> bool:
        """The event, then each state action (conditional); False when a condition failed."""
        if event is not None:
            self._put_outbox(event)
        for action in actions:
            (kind, request), *_ = action.items()
            call = {
                "Put": self._client.put_item,
                "Update": self._client.update_item,
                "Delete": self._client.delete_item,
            }[kind]
            try:
                call(**request)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                    return False
                raise TransientError(f"writing sampling state: {exc}") from exc
        return True

    def record_rejection(self, rejection: MessageRejected) -> None:
        """A rejected message in the outbox (published as ``sewerbill.sampling``), kept 7 years."""
        item = self._outbox(rejection)["Put"]
        item["Item"]["source"] = {"S": "sewerbill.sampling"}
        try:
            self._client.put_item(**item)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return  # recorded by an earlier delivery of the same message
            raise TransientError(f"could not record MessageRejected: {exc}") from exc

    # --- files ----------------------------------------------------------------------------
    def file_seen(self, file_id: str) -> bool:
        """Taken in before and settled: every line taken in or refused for good (a record
        from before ``settled`` was kept counts as settled)."""
        item = get(self._client, self._table, f"LABFILE#{file_id}", "LABFILE")
        return item is not None and bool(item.get("settled", True))

    def record_file(
        self, file: LabFile, file_id: str, summary: LabFileTakenIn, *, settled: bool = True
    ) -> None:
        item = {
            "pk": f"LABFILE#{file_id}",
            "sk": "LABFILE",
            "bucket": file.bucket,
            "key": file.key[:1024],
            "etag": file.etag,
            "lines": summary.lines,
            "accepted": summary.accepted,
            "repeated": summary.repeated,
            "rejected": summary.rejected,
            "settled": settled,
            "report_key": summary.report_key,
            "recorded_at": self._clock.now().isoformat(),
        }
        # The summary event once per file (its business key). A file not settled that is
        # read again keeps its first record (key, time) with the later reading's counts.
        if self._write([put_if_absent(self._table, item)], summary):
            return
        counts = ("lines", "accepted", "repeated", "rejected", "settled", "report_key")
        self._client.update_item(
            TableName=self._table,
            Key=key_of(f"LABFILE#{file_id}", "LABFILE"),
            UpdateExpression="SET " + ", ".join(f"#{n} = :{n}" for n in counts),
            ExpressionAttributeNames={f"#{n}": n for n in counts},
            ExpressionAttributeValues={f":{n}": v for n, v in to_item({n: item[n] for n in counts}).items()},
        )

    # --- accounts -------------------------------------------------------------------------
    def accounts(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], AccountInfo]:
        """The accounts sampling knows: registered by staff (their sampling point) or billed
        (published by billing: sampled at the service address until registered)."""
        wanted = [(account_pk(t, a), sk) for t, a in keys for sk in ("ACCOUNT", "BILLED")]
        found = batch_get(self._client, self._table, wanted)
        known = {
            (i["tenant"], i["account_id"]): _billed(i).info()
            for (_, sk), i in found.items()
            if sk == "BILLED"
        }
        known.update(
            {(i["tenant"], i["account_id"]): _account(i) for (_, sk), i in found.items() if sk == "ACCOUNT"}
        )
        return known

    def keep_billed(self, account: BilledAccount) -> bool:
        """Keep the account's version unless a later (or the same) one is kept; False then."""
        item = {
            "pk": account_pk(account.tenant, account.account_id),
            "sk": "BILLED",
            "tenant": account.tenant,
            "account_id": account.account_id,
            "version": account.version_key,
            "opened_on": account.opened_on.isoformat(),
            "closed_on": account.closed_on.isoformat() if account.closed_on else None,
            "nonresidential": account.nonresidential,
            "service_address": account.service_address,
            "satellite": account.satellite,
            "kept_at": self._clock.now().isoformat(),
        }
        try:
            self._client.put_item(
                TableName=self._table,
                Item=to_item(item),
                ConditionExpression="attribute_not_exists(pk) OR version < :v",
                ExpressionAttributeValues={":v": {"S": account.version_key}},
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise TransientError(f"keeping account {account.account_id}: {exc}") from exc
        return True

    def billed(self, tenant: str, account_id: str) -> BilledAccount | None:
        item = get(self._client, self._table, account_pk(tenant, account_id), "BILLED")
        return _billed(item) if item else None

    # --- lab lines in suspense (issue 26) -------------------------------------------------
    def suspend(self, rows: Sequence[LabRow], *, file_id: str, file_key: str) -> None:
        now = self._clock.now().isoformat()
        items: list[dict[str, Any]] = []
        marks: dict[tuple[str, str], dict[str, Any]] = {}
        for row in rows:
            items.append(
                {
                    "pk": f"LABSUSPENSE#{row.tenant}",
                    "sk": f"{row.account_id}#{file_id}#{row.line:09d}",
                    "account_id": row.account_id,
                    "file_id": file_id,
                    "file_key": file_key,
                    "line": row.line,
                    "sample_id": row.sample_id,
                    "parameter": row.parameter,
                    "row": _row_json(row),
                    "reason": waiting_reason(row.tenant, row.account_id),
                    "outcome": "waiting",
                    "since": now,
                }
            )
            marks[(f"LABSUSPENDED#{row.tenant}", row.account_id)] = {
                "pk": f"LABSUSPENDED#{row.tenant}",
                "sk": row.account_id,
            }
        # the lines first, the marks last: a mark always has its lines. A line already
        # waiting (the file sent again) keeps its item as it is: since when, and from which key.
        there = batch_get(self._client, self._table, [(i["pk"], i["sk"]) for i in items])
        batch_put(self._client, self._table, [i for i in items if (i["pk"], i["sk"]) not in there])
        marked = batch_get(self._client, self._table, list(marks))
        batch_put(self._client, self._table, [m for k, m in marks.items() if k not in marked])

    def suspended(self, tenant: str, account_ids: Collection[str]) -> set[str]:
        found = batch_get(
            self._client, self._table, [(f"LABSUSPENDED#{tenant}", a) for a in set(account_ids)]
        )
        return {sk for _, sk in found}

    def waiting_rows(self, tenant: str, account_id: str) -> list[WaitingRow]:
        items = self._query_prefix(f"LABSUSPENSE#{tenant}", f"{account_id}#")
        return [
            WaitingRow(_row_of(i["row"]), str(i["file_id"]), str(i.get("file_key", "")))
            for i in items
            if i.get("account_id") == account_id and i.get("outcome", "waiting") == "waiting"
        ]

    def settle_waiting(
        self, tenant: str, account_id: str, taken: Sequence[WaitingRow], refused: Mapping[WaitingRow, str]
    ) -> None:
        def key(w: WaitingRow) -> dict[str, Any]:
            return key_of(f"LABSUSPENSE#{tenant}", f"{account_id}#{w.file_id}#{w.row.line:09d}")

        for w, reason in refused.items():
            self._client.update_item(
                TableName=self._table,
                Key=key(w),
                UpdateExpression="SET outcome = :o, reason = :r",
                ExpressionAttributeValues={":o": {"S": "rejected"}, ":r": {"S": reason[:1000]}},
            )
        for w in taken:
            self._client.delete_item(TableName=self._table, **{"Key": key(w)})
        self._client.delete_item(TableName=self._table, Key=key_of(f"LABSUSPENDED#{tenant}", account_id))

    def lab_suspense(self, tenant: str) -> list[dict[str, Any]]:
        """Every lab line in suspense of the tenant (waiting, or refused when its account
        arrived), by account, file and line."""
        return self._query(f"LABSUSPENSE#{tenant}")

    def _query_prefix(self, pk: str, prefix: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :p)",
            "ExpressionAttributeValues": {":pk": {"S": pk}, ":p": {"S": prefix}},
            "ConsistentRead": True,
        }
        while True:
            resp = self._client.query(**kwargs)
            items.extend(from_item(i) for i in resp.get("Items", []))
            if "LastEvaluatedKey" not in resp:
                return items
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def register_account(self, info: AccountInfo, registered_by: str) -> None:
        now = self._clock.now().isoformat()
        self._client.put_item(
            TableName=self._table,
            Item=to_item(
                {
                    "pk": account_pk(info.tenant, info.account_id),
                    "sk": "ACCOUNT",
                    "tenant": info.tenant,
                    "account_id": info.account_id,
                    "sampling_point": info.sampling_point,
                    "satellite": info.satellite,
                    "nonresidential": info.nonresidential,
                    "sic_division": info.sic_division,
                    "avg_daily_flow_gal": info.avg_daily_flow_gal,
                    "nongovernmental": info.nongovernmental,
                    "discharges_toxic": info.discharges_toxic,
                    "private": info.private,
                    "registered_by": registered_by,
                    "registered_at": now,
                }
            ),
        )
        self._client.put_item(
            TableName=self._table,
            Item=to_item({"pk": f"ACCOUNTS#{info.tenant}", "sk": info.account_id, "registered_at": now}),
        )

    def tenant_accounts(self, tenant: str) -> list[str]:
        return [i["sk"] for i in self._query(f"ACCOUNTS#{tenant}")]

    # --- samples and results --------------------------------------------------------------
    def stored_samples(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], StoredSample]:
        found = batch_get(self._client, self._table, [(sample_pk(t, s), "SAMPLE") for t, s in keys])
        return {
            (i["tenant"], i["sample_id"]): StoredSample(
                i["account_id"], date.fromisoformat(i["collected_on"]), i["kind"], i.get("resample_of")
            )
            for i in found.values()
        }

    def sample(self, tenant: str, sample_id: str) -> dict[str, Any] | None:
        return get(self._client, self._table, sample_pk(tenant, sample_id), "SAMPLE")

    def stored_values(
        self, keys: Collection[tuple[str, str, str, str]]
    ) -> dict[tuple[str, str, str, str], StoredValue]:
        item_keys = {(account_pk(t, a), f"RESULT#{s}#{p}"): (t, a, s, p) for t, a, s, p in keys}
        found = batch_get(self._client, self._table, item_keys)
        return {
            item_keys[k]: StoredValue(Decimal(str(i["value_mg_l"])), i.get("file_id"))
            for k, i in found.items()
        }

    def record_results(self, rows: Sequence[LabRow], file_id: str | None = None) -> None:
        """New samples and results, 25 per BatchWriteItem (bulk: a lab file can be large).

        Unconditional by design: the use case read the stored samples and results first
        and passes only new ones, and a rewrite of one with the same content is harmless.
        """
        now = self._clock.now().isoformat()
        by_account: dict[tuple[str, str], set[str]] = {}
        for row in rows:
            by_account.setdefault((row.tenant, row.account_id), set()).add(f"{row.sample_id}#{row.parameter}")
        # The index first: an index entry whose result a crash left unwritten is skipped on
        # reading, and the redelivery writes the result.
        for (tenant, account_id), keys in by_account.items():
            self._add_to_index(tenant, account_id, "results", keys)
        items: list[dict[str, Any]] = []
        seen: set[tuple[str, str]] = set()
        for row in rows:
            if (row.tenant, row.sample_id) not in seen:
                seen.add((row.tenant, row.sample_id))
                items.append(_sample_item(row, now))
            items.append({**_result_item(row, now), **({"file_id": file_id} if file_id else {})})
        batch_put(self._client, self._table, items)

    def _put_once(self, values: Mapping[str, Any], compare: str | None = None) -> None:
        try:
            self._client.put_item(
                TableName=self._table, Item=to_item(values), ConditionExpression="attribute_not_exists(pk)"
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise TransientError(f"writing {values['pk']}: {exc}") from exc
            if compare is None:
                return
            there = get(self._client, self._table, values["pk"], values["sk"])
            if there is None or Decimal(str(there[compare])) != Decimal(str(values[compare])):
                raise TransientError(f"{values['pk']} {values['sk']} was written concurrently") from exc

    # --- an account's record --------------------------------------------------------------
    def _query(self, pk: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": pk}},
            "ConsistentRead": True,
        }
        while True:
            resp = self._client.query(**kwargs)
            items.extend(from_item(i) for i in resp.get("Items", []))
            if "LastEvaluatedKey" not in resp:
                return items
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def _add_to_index(self, tenant: str, account_id: str, field: str, keys: Collection[str]) -> None:
        """Add keys to the account's INDEX item (a string set: adding twice is harmless).

        The index lets :meth:`account` read an account by key (BatchGetItem) rather than by
        Query, which the embedded default (moto) answers by walking the whole table.
        """
        if not keys:
            return
        self._client.update_item(
            TableName=self._table,
            Key=key_of(account_pk(tenant, account_id), "INDEX"),
            UpdateExpression=f"ADD {field} :keys",
            ExpressionAttributeValues={":keys": {"SS": sorted(keys)}},
        )

    def account(self, tenant: str, account_id: str) -> AccountRecord:
        return self.account_records([(tenant, account_id)])[(tenant, account_id)]

    def account_records(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], AccountRecord]:
        """Accounts' records in two rounds of BatchGetItem, however many accounts: their heads
        (registration, classification, index, running exit clock), then the results and
        decisions their indexes name."""
        wanted = {account_pk(t, a): (t, a) for t, a in keys}
        head_keys = [(pk, sk) for pk in wanted for sk in ("ACCOUNT", "BILLED", "CLASSIFICATION", "INDEX")]
        head_keys += [(f"EXITS#{t}", a) for t, a in wanted.values()]
        heads = batch_get(self._client, self._table, head_keys)
        body_keys: list[tuple[str, str]] = []
        for pk in wanted:
            index = heads.get((pk, "INDEX"), {})
            body_keys += [(pk, f"RESULT#{k}") for k in index.get("results", ())]
            body_keys += [(pk, f"DECISION#{k}") for k in index.get("decisions", ())]
        by_pk: dict[str, list[dict[str, Any]]] = {pk: [] for pk in wanted}
        for (pk, sk), item in [*heads.items(), *batch_get(self._client, self._table, body_keys).items()]:
            if pk in by_pk and sk != "INDEX":
                by_pk[pk].append(item)
        records: dict[tuple[str, str], AccountRecord] = {}
        for pk, (tenant, account_id) in wanted.items():
            record = AccountRecord(info=None)
            exit_item = heads.get((f"EXITS#{tenant}", account_id))
            if exit_item is not None:
                record.exit_returns_on = date.fromisoformat(exit_item["returns_on"])
            for item in sorted(by_pk[pk], key=lambda i: i["sk"]):
                sk = item["sk"]
                if sk == "ACCOUNT":
                    record.info = _account(item)  # a registration wins over billing's account
                elif sk == "BILLED":
                    if record.info is None:
                        record.info = _billed(item).info()
                elif sk == "CLASSIFICATION":
                    record.category = item.get("category")
                    record.version = int(item.get("version", 0))
                    record.classified_by = item.get("classified_by")
                elif sk.startswith("RESULT#"):
                    record.results.append(_result(item))
                elif sk.startswith("DECISION#"):
                    decision = _decision(item)
                    record.decisions[decision.original_id] = decision
            records[(tenant, account_id)] = record
        return records

    def classification(self, tenant: str, account_id: str) -> dict[str, Any] | None:
        return get(self._client, self._table, account_pk(tenant, account_id), "CLASSIFICATION")

    def _classification_update(
        self, event: StrengthClassified, expected_version: int, by: str | None = None
    ) -> dict[str, Any]:
        """The account's classification, conditional on the version it was computed from;
        ``by``: the lab file whose intake classified it (None: anything else did)."""
        condition = "attribute_not_exists(pk)" if expected_version == 0 else "version = :expected"
        values: dict[str, Any] = {
            ":category": {"S": event.category},
            ":version": {"N": str(expected_version + 1)},
            ":trigger": {"S": event.trigger},
            ":event": {"S": event.detail_json()},
            ":at": {"S": self._clock.now().isoformat()},
            ":by": {"S": by} if by else {"NULL": True},
        }
        if expected_version:
            values[":expected"] = {"N": str(expected_version)}
        return {
            "TableName": self._table,
            "Key": key_of(account_pk(event.tenant, event.account_id), "CLASSIFICATION"),
            "UpdateExpression": "SET category = :category, version = :version, last_trigger = :trigger, "
            "last_event = :event, updated_at = :at, classified_by = :by",
            "ConditionExpression": condition,
            "ExpressionAttributeValues": values,
        }

    def _exit_item(self, event: StrengthClassified, returns_on: date) -> dict[str, Any]:
        return {"pk": f"EXITS#{event.tenant}", "sk": event.account_id, "returns_on": returns_on.isoformat()}

    def record_classification(
        self, event: StrengthClassified, exit_returns_on: date | None, expected_version: int
    ) -> None:
        actions: list[dict[str, Any]] = [{"Update": self._classification_update(event, expected_version)}]
        if exit_returns_on is not None:
            actions.append(
                {"Put": {"TableName": self._table, "Item": to_item(self._exit_item(event, exit_returns_on))}}
            )
            actions.append({"Update": self._due_update([exit_returns_on])})  # after its clock
        else:
            actions.append(
                {
                    "Delete": {
                        "TableName": self._table,
                        "Key": key_of(f"EXITS#{event.tenant}", event.account_id),
                    }
                }
            )
        if not self._write(actions, event):
            raise TransientError(f"the classification of {event.account_id} changed concurrently; retry")

    def record_classifications(
        self, classified: Sequence[tuple[StrengthClassified, AccountRecord]], by: str | None = None
    ) -> None:
        """Many accounts' classifications, their events already published (``publish``).

        The exit clocks that changed go first, in batches (rewriting one is harmless), then
        each account's classification, conditional on the version its record was read at:
        a concurrent change raises (retried), and the redelivery recomputes all of it.
        """
        clocks: list[dict[str, Any]] = []
        for event, record in classified:
            returns_on = event.exit_clock.returns_on if event.exit_clock else None
            if returns_on is not None and returns_on != record.exit_returns_on:
                clocks.append(self._exit_item(event, returns_on))
            elif returns_on is None and record.exit_returns_on is not None:
                self._client.delete_item(
                    TableName=self._table, Key=key_of(f"EXITS#{event.tenant}", event.account_id)
                )
        batch_put(self._client, self._table, clocks)
        self._mark_due([date.fromisoformat(c["returns_on"]) for c in clocks])  # after the clocks
        for event, record in classified:
            if not self._write([{"Update": self._classification_update(event, record.version, by)}], None):
                raise TransientError(f"the classification of {event.account_id} changed concurrently; retry")

    # --- decisions ------------------------------------------------------------------------
    def record_decision(self, tenant: str, account_id: str, decision: Decision, event: Event) -> bool:
        """The decision with its event; False if this very decision was recorded before."""
        item = {
            "pk": account_pk(tenant, account_id),
            "sk": f"DECISION#{decision.original_id}",
            "original_id": decision.original_id,
            "resample_id": decision.resample_id,
            "choice": decision.choice,
            "decided_by": decision.decided_by,
            "reason": decision.reason,
            "decided_at": decision.decided_at.isoformat(),
        }
        self._add_to_index(tenant, account_id, "decisions", {decision.original_id})
        return self._write([put_if_absent(self._table, item)], event)

    # --- satellite deadlines --------------------------------------------------------------
    def record_deadline(self, tenant: str, account_id: str, deadline: ResultsDeadline) -> None:
        self._put_once(
            {
                "pk": f"DEADLINES#{tenant}",
                "sk": f"{account_id}#{deadline.sample_id}",
                "account_id": account_id,
                "sample_id": deadline.sample_id,
                "sampled_on": deadline.sampled_on.isoformat(),
                "due_on": deadline.due_on.isoformat(),
                "remind_on": deadline.remind_on.isoformat(),
                "rule_id": deadline.rule_id,
            }
        )
        # After the deadline (a redelivery, which finds it written, marks it again).
        self._mark_due([min(deadline.remind_on, deadline.due_on + timedelta(days=1))])

    def deadlines(self, tenant: str) -> list[dict[str, Any]]:
        return self._query(f"DEADLINES#{tenant}")

    def account_deadlines(self, tenant: str, account_id: str) -> list[dict[str, Any]]:
        """One account's satellite deadlines (one query of its part of the tenant's list)."""
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :account)",
            "ExpressionAttributeValues": {
                ":pk": {"S": f"DEADLINES#{tenant}"},
                ":account": {"S": f"{account_id}#"},
            },
            "ConsistentRead": True,
        }
        while True:
            resp = self._client.query(**kwargs)
            items.extend(from_item(i) for i in resp.get("Items", []))
            if "LastEvaluatedKey" not in resp:
                return [i for i in items if i.get("account_id") == account_id]
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def deadline(self, tenant: str, account_id: str, sample_id: str) -> dict[str, Any] | None:
        return get(self._client, self._table, f"DEADLINES#{tenant}", f"{account_id}#{sample_id}")

    def mark_deadline(
        self, tenant: str, account_id: str, sample_id: str, field: str, value: str, event: Event | None
    ) -> None:
        """Set ``field`` (reminded_on, breached_on, delivered_on) once, with its event."""
        action = {
            "Update": {
                "TableName": self._table,
                "Key": key_of(f"DEADLINES#{tenant}", f"{account_id}#{sample_id}"),
                "UpdateExpression": f"SET {field} = :value",
                "ConditionExpression": f"attribute_exists(pk) AND attribute_not_exists({field})",
                "ExpressionAttributeValues": {":value": {"S": value}},
            }
        }
        if not self._write([action], event):
            there = self.deadline(tenant, account_id, sample_id)
            if there is None:
                raise TransientError(f"no deadline for {sample_id}")
            # set before: nothing to add

    # --- when the daily run has work (common.due: the DAILY / DUE mark) ---------------------
    def _due_update(self, dates: Collection[date]) -> dict[str, Any]:
        return self._marks.update(dates)

    def _mark_due(self, dates: Collection[date]) -> None:
        """Add dates on which the daily run has work (one UpdateItem, creates the mark)."""
        self._marks.add(dates)

    def daily_due(self) -> DueMark | None:
        return self._marks.read()

    def set_daily_due(self, next_on: date, seen: DueMark | None) -> bool:
        """Record a full run's next date, unless a write added a date since ``seen`` was read
        (then the mark stays as that write left it and the next run is a full one)."""
        return self._marks.record(next_on, seen)

    def exits(self, tenant: str) -> list[tuple[str, date]]:
        """Every running exit clock of the tenant: (account, the day it ends)."""
        return [(i["sk"], date.fromisoformat(i["returns_on"])) for i in self._query(f"EXITS#{tenant}")]

    # --- annual reports -------------------------------------------------------------------
    def record_report(self, tenant: str, account_id: str, year: int, received_on: date, event: Event) -> bool:
        item = {
            "pk": f"REPORTS#{tenant}#{year}",
            "sk": account_id,
            "received_on": received_on.isoformat(),
            "recorded_at": self._clock.now().isoformat(),
        }
        return self._write([put_if_absent(self._table, item)], event)  # False: received before

    def reports_received(self, tenant: str, year: int) -> set[str]:
        return {i["sk"] for i in self._query(f"REPORTS#{tenant}#{year}")}


def _billed(item: Mapping[str, Any]) -> BilledAccount:
    return BilledAccount(
        tenant=item["tenant"],
        account_id=item["account_id"],
        version=datetime.fromisoformat(item["version"]),
        opened_on=date.fromisoformat(item["opened_on"]),
        closed_on=date.fromisoformat(item["closed_on"]) if item.get("closed_on") else None,
        nonresidential=bool(item.get("nonresidential", False)),
        service_address=str(item.get("service_address", "")),
        satellite=bool(item.get("satellite", False)),
    )


def _row_json(row: LabRow) -> str:
    values = {f: getattr(row, f) for f in LabRow.__dataclass_fields__}
    return json.dumps(values, default=str, sort_keys=True)


def _row_of(text: str) -> LabRow:
    v = json.loads(text)
    return LabRow(
        line=int(v["line"]),
        tenant=v["tenant"],
        sample_id=v["sample_id"],
        account_id=v["account_id"],
        collected_on=date.fromisoformat(v["collected_on"]),
        parameter=v["parameter"],
        value=Decimal(v["value"]),
        reported=v["reported"],
        analysed_on=date.fromisoformat(v["analysed_on"]),
        lab=v["lab"],
        kind=SampleKind(v["kind"]),
        resample_of=v.get("resample_of"),
        method=v.get("method"),
        sampling_point=v.get("sampling_point"),
        collector=v.get("collector"),
        custody=v.get("custody"),
        lab_invoice=v.get("lab_invoice"),
    )


def _account(item: Mapping[str, Any]) -> AccountInfo:
    return AccountInfo(
        tenant=item["tenant"],
        account_id=item["account_id"],
        sampling_point=item.get("sampling_point", ""),
        satellite=bool(item.get("satellite", False)),
        nonresidential=bool(item.get("nonresidential", True)),
        sic_division=item.get("sic_division"),
        avg_daily_flow_gal=Decimal(str(item["avg_daily_flow_gal"])) if "avg_daily_flow_gal" in item else None,
        nongovernmental=bool(item.get("nongovernmental", True)),
        discharges_toxic=bool(item.get("discharges_toxic", False)),
        private=bool(item.get("private", False)),
    )


def _sample_item(row: LabRow, now: str) -> dict[str, Any]:
    return {
        "pk": sample_pk(row.tenant, row.sample_id),
        "sk": "SAMPLE",
        "tenant": row.tenant,
        "sample_id": row.sample_id,
        "account_id": row.account_id,
        "collected_on": row.collected_on.isoformat(),
        "kind": row.kind.value,
        "resample_of": row.resample_of,
        "lab": row.lab,
        "method": row.method,
        "sampling_point": row.sampling_point,
        "collector": row.collector,
        "custody": row.custody,
        "lab_invoice": row.lab_invoice,
        "recorded_at": now,
    }


def _result_item(row: LabRow, now: str) -> dict[str, Any]:
    return {
        "pk": account_pk(row.tenant, row.account_id),
        "sk": f"RESULT#{row.sample_id}#{row.parameter}",
        "tenant": row.tenant,
        "sample_id": row.sample_id,
        "parameter": row.parameter,
        "value_mg_l": row.value,
        "reported": row.reported,
        "collected_on": row.collected_on.isoformat(),
        "analysed_on": row.analysed_on.isoformat(),
        "kind": row.kind.value,
        "resample_of": row.resample_of,
        "lab": row.lab,
        "method": row.method,
        "line": row.line,
        "recorded_at": now,
    }


def _result(item: Mapping[str, Any]) -> StoredResult:
    return StoredResult(
        sample_id=item["sample_id"],
        parameter=item["parameter"],
        value=Decimal(str(item["value_mg_l"])),
        collected_on=date.fromisoformat(item["collected_on"]),
        kind=item.get("kind", "routine"),
        resample_of=item.get("resample_of"),
        lab=item.get("lab", ""),
        analysed_on=date.fromisoformat(item["analysed_on"]) if item.get("analysed_on") else None,
        reported=item.get("reported", ""),
    )


def _decision(item: Mapping[str, Any]) -> Decision:
    return Decision(
        original_id=item["original_id"],
        resample_id=item["resample_id"],
        choice=item["choice"],
        decided_by=item["decided_by"],
        reason=item["reason"],
        decided_at=datetime.fromisoformat(item["decided_at"]),
    )
