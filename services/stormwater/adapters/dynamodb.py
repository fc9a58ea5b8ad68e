"""Stormwater's table: parcels, their GIS history and determinations, files taken in.

Keys (single table, ``pk``/``sk``):

- ``PARCEL#<tenant>#<parcel_id>`` / ``STATE``: the latest GIS values, the override in
  force and the current determination (with its breakdown);
- same pk / ``GIS#<recorded_at>#<file_id>``: each new set of GIS values (history), with
  the feature's geometry when small enough;
- same pk / ``ERU#<sequence>``: each published determination (carries ``ERUDetermined``);
- same pk / ``OVERRIDE#<recorded_at>#<override_id>``: the Engineer's overrides (history);
- same pk / ``FEE#<fee_id>``: a one-time fee (carries ``FeeCharged``);
- ``GISFILE#<file_id>`` / ``FILE``: an extract taken in (carries ``GisExtractTakenIn``).

Bulk writes go through BatchWriteItem (25 per call; unprocessed items retried); the
event-bearing items are written before the states (see ``domain.extracts``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from decimal import Decimal
from typing import Any

from common.clock import Clock
from common.dynamo import batch_get, get, to_item
from common.errors import TransientError
from common.ids import key
from stormwater.adapters.outbox import event_attributes
from stormwater.domain.determinations import ParcelData
from stormwater.domain.parcels import Current, ExtractChange, ParcelState
from stormwater.events import (
    DETERMINATIONS_PER_EVENT,
    EruBreakdown,
    ERUDetermined,
    ERUsDetermined,
    FeeCharged,
    GisExtractTakenIn,
)

BATCH_WRITE_MAX = 25
STATE_SK = "STATE"


def parcel_pk(tenant: str, parcel_id: str) -> str:
    return key("PARCEL", tenant, parcel_id)


def file_key(file_id: str) -> tuple[str, str]:
    return key("GISFILE", file_id), "FILE"


def batch_write(client: Any, table: str, items: Iterable[Mapping[str, Any]]) -> int:
    """Put ``items`` 25 at a time, retrying unprocessed ones; returns how many were written."""
    written = 0
    pending: list[dict[str, Any]] = []

    def flush(requests: list[dict[str, Any]]) -> None:
        attempts = 0
        while requests:
            attempts += 1
            if attempts > 10:
                raise TransientError("BatchWriteItem kept returning unprocessed items")
            resp = client.batch_write_item(RequestItems={table: requests})
            requests = resp.get("UnprocessedItems", {}).get(table, [])
            if requests:
                time.sleep(min(0.05 * 2**attempts, 1.0))

    for item in items:
        pending.append({"PutRequest": {"Item": to_item(item)}})
        if len(pending) == BATCH_WRITE_MAX:
            flush(pending)
            written += len(pending)
            pending = []
    if pending:
        flush(pending)
        written += len(pending)
    return written


def _data_item(data: ParcelData) -> dict[str, Any]:
    return {
        "use": data.use,
        "area_sqft": format(data.area_sqft, "f"),
        "impervious_sqft": format(data.impervious_sqft, "f"),
        "woods_sqft": format(data.woods_sqft, "f"),
        "excluded_sqft": format(data.excluded_sqft, "f"),
        "farmstead": data.farmstead,
    }


def _data_from(raw: Mapping[str, Any]) -> ParcelData:
    return ParcelData(
        use=str(raw["use"]),
        area_sqft=Decimal(raw["area_sqft"]),
        impervious_sqft=Decimal(raw["impervious_sqft"]),
        woods_sqft=Decimal(raw.get("woods_sqft", "0")),
        excluded_sqft=Decimal(raw.get("excluded_sqft", "0")),
        farmstead=bool(raw.get("farmstead", False)),
    )


def _override_item(override: Mapping[str, Any] | None) -> dict[str, str] | None:
    if not override:
        return None
    return {k: format(v, "f") if isinstance(v, Decimal) else str(v) for k, v in override.items()}


def _override_from(raw: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not raw:
        return None
    return {k: (str(v) if k == "use" else Decimal(str(v))) for k, v in raw.items()}


def state_item(state: ParcelState, *, updated_at: str) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pk": parcel_pk(state.tenant, state.parcel_id),
        "sk": STATE_SK,
        "kind": "parcel",
        "tenant": state.tenant,
        "parcel_id": state.parcel_id,
        "owner_name": state.owner_name,
        "gis": _data_item(state.gis),
        "gis_digest": state.gis_digest,
        "parent_parcel_id": state.parent_parcel_id,
        "override": _override_item(state.override),
        "override_id": state.override_id,
        "override_source": state.override_source if state.override else None,
        "version": state.version + 1,
        "updated_at": updated_at,
        **{k: v for k, v in state.extra.items() if k in _GIS_SOURCE},
    }
    current = state.current
    if current is not None:
        item.update(
            {
                "sequence": current.sequence,
                "eru": format(current.eru, "f"),
                "exempt": current.exempt,
                "effective_from": current.effective_from.isoformat(),
                "tariff_version": current.tariff_version,
                "cause": current.cause,
                "breakdown": current.breakdown.model_dump_json(),
            }
        )
    return item


def state_from(item: Mapping[str, Any]) -> ParcelState:
    current = None
    if "sequence" in item:
        current = Current(
            sequence=int(item["sequence"]),
            eru=Decimal(item["eru"]),
            exempt=bool(item["exempt"]),
            effective_from=date.fromisoformat(item["effective_from"]),
            tariff_version=str(item["tariff_version"]),
            breakdown=EruBreakdown.model_validate_json(item["breakdown"]),
            cause=str(item.get("cause", "")),
        )
    return ParcelState(
        tenant=str(item["tenant"]),
        parcel_id=str(item["parcel_id"]),
        owner_name=str(item["owner_name"]),
        gis=_data_from(item["gis"]),
        gis_digest=str(item["gis_digest"]),
        parent_parcel_id=item.get("parent_parcel_id"),
        override=_override_from(item.get("override")),
        override_id=item.get("override_id"),
        override_source=item.get("override_source", "override"),
        current=current,
        version=int(item.get("version", 0)),
        extra={k: item[k] for k in _GIS_SOURCE if k in item},
    )


# ``gis_taken_as``: how the extract that wrote these values counted its line (accepted: a
# new parcel; changed: a new version), so its redelivery after a crash counts it the same.
_GIS_SOURCE = ("gis_file_key", "gis_file_id", "gis_line", "gis_recorded_at", "geometry", "gis_taken_as")


def gis_values(state: ParcelState) -> dict[str, Any]:
    return {
        "owner_name": state.owner_name,
        **{k: (str(v).lower() if isinstance(v, bool) else v) for k, v in _data_item(state.gis).items()},
        "parent_parcel_id": state.parent_parcel_id or "",
    }


def gis_history_item(previous: ParcelState) -> dict[str, Any]:
    """The GIS values a new extract replaced, kept as history (PP-CWU-DATA)."""
    extra = previous.extra
    recorded_at = str(extra.get("gis_recorded_at", ""))
    return {
        "pk": parcel_pk(previous.tenant, previous.parcel_id),
        "sk": f"GIS#{recorded_at}#{str(extra.get('gis_file_id', ''))[:16]}",
        "kind": "gis_values",
        "values": gis_values(previous),
        "file_key": extra.get("gis_file_key"),
        "line": extra.get("gis_line"),
        "geometry": extra.get("geometry"),
    }


def determination_item(event: ERUDetermined, *, publish: bool = True) -> dict[str, Any]:
    """The determination ``ERU#<sequence>``; with ``publish`` it is also its event's outbox
    entry (an extract's new parcels are published in chunks instead: ``chunk_item``)."""
    item = {
        "pk": parcel_pk(event.tenant, event.parcel_id),
        "sk": f"ERU#{event.sequence:08d}",
        "kind": "determination",
        "sequence": event.sequence,
        "eru": format(event.eru, "f"),
        "exempt": event.exempt,
        "effective_from": event.effective_from.isoformat(),
        "cause": event.cause,
        "cause_ref": event.cause_ref,
    }
    if publish:
        item.update(event_attributes(event))
    return item


def chunk_item(event: ERUsDetermined) -> dict[str, Any]:
    """``GISFILE#<file_id>`` / ``ERUS#<chunk>``: the outbox entry of a chunk of an extract's
    determinations (its key is the same on a retry, so a rewrite is not published again)."""
    pk, _sk = file_key(event.file_id)
    return {"pk": pk, "sk": f"ERUS#{event.chunk:06d}", "kind": "determinations", **event_attributes(event)}


def fee_item(fee: FeeCharged) -> dict[str, Any]:
    return {
        "pk": parcel_pk(fee.tenant, fee.parcel_id),
        "sk": key("FEE", fee.fee_id),
        "kind": "fee",
        "fee_id": fee.fee_id,
        "amount": format(fee.amount, "f"),
        "rule_id": fee.rule_id,
        **event_attributes(fee),
    }


class DynamoParcelRepository:
    def __init__(self, client: Any, table: str, clock: Clock) -> None:
        self._client = client
        self._table = table
        self._clock = clock

    # --- extracts -------------------------------------------------------------------------
    def file_seen(self, file_id: str) -> bool:
        return get(self._client, self._table, *file_key(file_id)) is not None

    def states(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], ParcelState]:
        by_item_key = {(parcel_pk(t, p), STATE_SK): (t, p) for t, p in keys}
        found = batch_get(self._client, self._table, by_item_key)
        return {by_item_key[k]: state_from(item) for k, item in found.items()}

    def state(self, tenant: str, parcel_id: str) -> ParcelState | None:
        item = get(self._client, self._table, parcel_pk(tenant, parcel_id), STATE_SK)
        return None if item is None else state_from(item)

    def record_extract_changes(
        self, changes: Sequence[ExtractChange], *, file_key: str, file_id: str, chunk: int
    ) -> list[tuple[str, str]]:
        """Write what an extract changes; returns the (tenant, parcel id) of the parcels that
        someone else changed since they were read (nothing of those is written: the caller
        reads them again and decides again).

        New parcels (none kept when read) go in bulk: their fees and one ``ERUsDetermined``
        per 50 determinations first (chunk ``chunk`` x 100 + n of the file), then their
        determinations and states, 25 per BatchWriteItem. Only extracts create parcels, and they run one
        at a time (a FIFO queue, one message group), so nobody else can have written them meanwhile.
        A parcel already kept is written as one transaction (its determination and fee if
        absent, the GIS history, the state only if its ``version`` is still the one read), so
        an Engineer's override or a reconsideration committed while the extract was being
        taken in is never overwritten (issue 11). An extract rarely changes many known
        parcels; the first extract of a tenant changes none.
        """
        now = self._clock.now().isoformat()
        fresh = [c for c in changes if c.previous is None]
        determined = [c.determined for c in fresh if c.determined is not None]
        facts: list[dict[str, Any]] = [fee_item(c.fee) for c in fresh if c.fee is not None]
        for n, start in enumerate(range(0, len(determined), DETERMINATIONS_PER_EVENT)):
            part = tuple(determined[start : start + DETERMINATIONS_PER_EVENT])
            event = ERUsDetermined(
                occurred_at=part[0].occurred_at, file_id=file_id, chunk=chunk * 100 + n, determinations=part
            )
            facts.append(chunk_item(event))
        batch_write(self._client, self._table, facts)
        items = [determination_item(e, publish=False) for e in determined]
        items += [
            self._new_state_item(change, file_key=file_key, file_id=file_id, now=now) for change in fresh
        ]
        batch_write(self._client, self._table, items)
        conflicts: list[tuple[str, str]] = []
        for change in changes:
            if change.previous is not None and not self._commit_known(
                change, file_key=file_key, file_id=file_id, now=now
            ):
                conflicts.append((change.state.tenant, change.state.parcel_id))
        return conflicts

    def _new_state_item(
        self, change: ExtractChange, *, file_key: str, file_id: str, now: str
    ) -> dict[str, Any]:
        record = change.record
        source = {
            "gis_file_key": file_key,
            "gis_file_id": file_id,
            "gis_line": record.line,
            "gis_recorded_at": now,
            "geometry": record.geometry,
            "gis_taken_as": "accepted" if change.previous is None else "changed",
        }
        return state_item(replace(change.state, extra=source), updated_at=now)

    def _commit_known(self, change: ExtractChange, *, file_key: str, file_id: str, now: str) -> bool:
        """One known parcel's change, only if its state is still the version read."""
        from common.dynamo import ConditionFailed, put_if_absent, transact

        assert change.previous is not None
        state = self._new_state_item(change, file_key=file_key, file_id=file_id, now=now)
        guarded: dict[str, Any] = {
            "Put": {
                "TableName": self._table,
                "Item": to_item(state),
                "ConditionExpression": "version = :v",
                "ExpressionAttributeValues": {":v": {"N": str(change.previous.version)}},
            }
        }
        history = {"Put": {"TableName": self._table, "Item": to_item(gis_history_item(change.previous))}}
        fee = None if change.fee is None else put_if_absent(self._table, fee_item(change.fee))
        event = (
            None
            if change.determined is None
            else put_if_absent(self._table, determination_item(change.determined))
        )
        while True:
            actions = [a for a in (guarded, event, fee, history) if a is not None]
            try:
                transact(self._client, actions)
                return True
            except ConditionFailed as exc:
                if fee is not None and exc.indexes == [actions.index(fee)]:
                    fee = None  # charged once already for this reason (PP-CWU-PEF): not again
                    continue
                return False

    def record_file(self, event: GisExtractTakenIn) -> None:
        pk, sk = file_key(event.file_id)
        batch_write(
            self._client,
            self._table,
            [
                {
                    "pk": pk,
                    "sk": sk,
                    "kind": "gis_file",
                    "file_key": event.file_key,
                    "lines": event.lines,
                    "accepted": event.accepted,
                    "changed": event.changed,
                    "repeated": event.repeated,
                    "rejected": event.rejected,
                    "report_key": event.report_key,
                    **event_attributes(event),
                }
            ],
        )

    # --- reads for the routes -----------------------------------------------------------------
    def parcel_items(self, tenant: str, parcel_id: str, prefix: str) -> list[dict[str, Any]]:
        from common.dynamo import from_item

        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :sk)",
            "ExpressionAttributeValues": {":pk": {"S": parcel_pk(tenant, parcel_id)}, ":sk": {"S": prefix}},
            "ConsistentRead": True,
        }
        while True:
            resp = self._client.query(**kwargs)
            items.extend(from_item(i) for i in resp.get("Items", []))
            if "LastEvaluatedKey" not in resp:
                return items
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]


def breakdown_json(item: Mapping[str, Any]) -> dict[str, Any]:
    return dict(json.loads(item["breakdown"]))


class ConcurrentUpdate(TransientError):
    """Another writer changed the record first (re-read and retry; HTTP 409)."""


def pending_pk(tenant: str) -> str:
    return key("PENDING", tenant)


def pending_item(
    tenant: str, filed_on: str, kind: str, parcel_id: str, record_id: str, body: str
) -> dict[str, Any]:
    """One decision staff owe (a reconsideration, an appeal's hearing, a credit application),
    listed under the tenant (``PENDING#<tenant>`` / ``<filed_on>#<kind>#<parcel>#<id>``)
    while it waits and deleted when decided. Carries no event: the outbox ignores it."""
    sk = f"{filed_on}#{kind}#{parcel_id}#{record_id}"
    return {"pk": pending_pk(tenant), "sk": sk, "kind": "pending", "body": body}


def fact_item(
    pk: str, sk: str, kind: str, body: str, event: Any | None = None, **attrs: Any
) -> dict[str, Any]:
    """A record version or a side fact; with ``event`` it is also that event's outbox entry."""
    item: dict[str, Any] = {"pk": pk, "sk": sk, "kind": kind, "body": body, **attrs}
    if event is not None:
        item.update(event_attributes(event))
    return item


class DynamoRecords:
    """Versioned records under a parcel (credits, reconsiderations, appeals, overrides) and the
    bills kept from billing's events. Each version is its own item, written if absent: two
    staff members deciding the same credit at once cannot both win (``ConcurrentUpdate``)."""

    def __init__(self, client: Any, table: str, clock: Clock) -> None:
        self._client = client
        self._table = table
        self._clock = clock

    def query(
        self, pk: str, prefix: str, *, newest_first: bool = False, limit: int | None = None
    ) -> list[dict[str, Any]]:
        from common.dynamo import from_item

        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :sk)",
            "ExpressionAttributeValues": {":pk": {"S": pk}, ":sk": {"S": prefix}},
            "ConsistentRead": True,
            "ScanIndexForward": not newest_first,
        }
        if limit:
            kwargs["Limit"] = limit
        while True:
            resp = self._client.query(**kwargs)
            items.extend(from_item(i) for i in resp.get("Items", []))
            if "LastEvaluatedKey" not in resp or (limit and len(items) >= limit):
                return items
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def get(self, pk: str, sk: str) -> dict[str, Any] | None:
        return get(self._client, self._table, pk, sk)

    def pending(
        self, tenant: str, *, limit: int | None, after: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of the tenant's pending decisions, oldest filed first; the cursor is the
        last entry's sort key."""
        from common.dynamo import from_item

        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": pending_pk(tenant)}},
            "ConsistentRead": True,
        }
        if after:
            kwargs["ExclusiveStartKey"] = {"pk": {"S": pending_pk(tenant)}, "sk": {"S": after}}
        items: list[dict[str, Any]] = []
        while True:
            if limit:
                kwargs["Limit"] = limit - len(items) + 1  # one more: is there a next page?
            resp = self._client.query(**kwargs)
            items.extend(from_item(i) for i in resp.get("Items", []))
            if "LastEvaluatedKey" not in resp or (limit and len(items) > limit):
                break
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
        if limit and len(items) > limit:
            items = items[:limit]
            return items, str(items[-1]["sk"])
        return items, None

    def commit(
        self,
        facts: Sequence[Mapping[str, Any]],
        state: ParcelState | None = None,
        *,
        pending: Sequence[tuple[Mapping[str, Any], bool]] = (),
    ) -> None:
        """Write ``facts`` (each only if absent) and the parcel's new state (only if nobody
        changed it since it was read) together: they are one decision. ``pending`` puts
        (True) or removes (False) entries of the tenant's list of decisions staff owe
        (``pending_item``), in the same transaction, so the list never disagrees with the
        records."""
        from common.dynamo import ConditionFailed, put_if_absent, transact

        actions = [put_if_absent(self._table, f) for f in facts]
        for entry, waiting in pending:
            if waiting:
                actions.append({"Put": {"TableName": self._table, "Item": to_item(entry)}})
            else:
                keys = {"pk": entry["pk"], "sk": entry["sk"]}
                actions.append({"Delete": {"TableName": self._table, "Key": to_item(keys)}})
        if state is not None:
            item = state_item(state, updated_at=self._clock.now().isoformat())
            condition = "attribute_not_exists(pk)" if state.version == 0 else "version = :v"
            put: dict[str, Any] = {
                "TableName": self._table,
                "Item": to_item(item),
                "ConditionExpression": condition,
            }
            if state.version:
                put["ExpressionAttributeValues"] = {":v": {"N": str(state.version)}}
            actions.append({"Put": put})
        try:
            transact(self._client, actions)
        except ConditionFailed as exc:
            raise ConcurrentUpdate(
                f"changed by someone else first (actions {exc.indexes}); read it again"
            ) from exc

    def put(self, item: Mapping[str, Any]) -> None:
        self._client.put_item(TableName=self._table, Item=to_item(item))


class DynamoTariffChanges:
    """Parcels of a tenant page by page, and the tariff version last applied to all of them
    (``TENANT#<tenant>`` / ``TARIFF``). Rare (once per tariff version), so a filtered scan.

    A container remembers the version it read or recorded as applied: the daily check asks
    only whether today's version is the applied one, and a version once applied stays applied
    (only this check records one, and the tariff files are fixed for a container's life), so
    on a day that version is still in force the answer costs no read. Most days of a year
    then touch DynamoDB not at all (365 GetItems a tenant a year saved, on AWS as locally);
    only a cold start or a day a new version comes into force reads the item.
    """

    def __init__(self, client: Any, table: str, clock: Clock) -> None:
        self._client = client
        self._table = table
        self._clock = clock
        self._parcels = DynamoParcelRepository(client, table, clock)
        self._applied: dict[str, str] = {}  # tenant -> a version known to be applied

    def applied_version(self, tenant: str, expected: str | None = None) -> str | None:
        """The version last applied to the tenant's parcels. With ``expected`` (the version
        in force today): answered from memory when this container knows that version applied."""
        if expected is not None and self._applied.get(tenant) == expected:
            return expected
        item = get(self._client, self._table, key("TENANT", tenant), "TARIFF")
        if item is None:
            return None
        self._applied[tenant] = str(item["version_id"])
        return self._applied[tenant]

    def set_applied_version(self, tenant: str, version_id: str, changed: int) -> None:
        self._client.put_item(
            TableName=self._table,
            Item=to_item(
                {
                    "pk": key("TENANT", tenant),
                    "sk": "TARIFF",
                    "version_id": version_id,
                    "parcels_changed": changed,
                    "applied_at": self._clock.now().isoformat(),
                }
            ),
        )
        self._applied[tenant] = version_id

    def pages(self, tenant: str) -> Iterable[list[ParcelState]]:
        from common.dynamo import from_item

        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "FilterExpression": "sk = :sk AND tenant = :t",
            "ExpressionAttributeValues": {":sk": {"S": STATE_SK}, ":t": {"S": tenant}},
            "ConsistentRead": True,
        }
        while True:
            resp = self._client.scan(**kwargs)
            states = [state_from(from_item(i)) for i in resp.get("Items", [])]
            if states:
                yield states
            if "LastEvaluatedKey" not in resp:
                return
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def record(self, determined: Sequence[ERUDetermined], states: Sequence[ParcelState]) -> None:
        batch_write(self._client, self._table, [determination_item(e) for e in determined])
        now = self._clock.now().isoformat()
        batch_write(self._client, self._table, [state_item(s, updated_at=now) for s in states])
