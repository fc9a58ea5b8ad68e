"""Billing's projections of its producers' events (event-carried state), one item per
key with the events kept in a map by their business key, so a redelivery changes nothing.

``ERU#<tenant>`` / ``<parcel_id>``: ``determinations`` (by sequence) and ``credits`` (by
credit id and status). ``STRENGTH#<tenant>`` / ``<account_id>``: ``classified`` (by
trigger). ``USAGE#<tenant>#<start>#<end>`` / ``<account_id>``: one consumption (a
re-determination of a billed period is handed to the re-rating first, X-IMMUTABLE).
``CHARGES#<tenant>`` / ``<account_id>#<charge_id>``: a one-time charge for the next bill.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

from botocore.exceptions import ClientError
from pydantic import TypeAdapter

from billing.adapters.items import entry_item
from billing.adapters.search_index import meter_items
from billing.adapters.store import Store
from billing.domain.ledger import Entry
from common.dynamo import to_item
from common.errors import TransientError
from metering.events import ConsumptionDetermined, MeterUse, ReadUsed
from sampling.events import SamplingCostCharged, StrengthClassified
from stormwater.events import CreditChanged, ERUDetermined, FeeCharged, RefundGranted


def e_winter(e: ConsumptionDetermined) -> Any:
    """PP-SEW-WINTER's average, from schema version 2 on (absent before)."""
    return getattr(e, "winter_average_gal", None)


# A consumption's reads and meters as the JSON text its USAGE item keeps (see keep_consumptions)
_READS_JSON = TypeAdapter(tuple[ReadUsed, ...])
_METERS_JSON = TypeAdapter(tuple[MeterUse, ...])


def _plain(model: Any) -> dict[str, Any]:
    return json.loads(model.model_dump_json())


_NEVER = datetime.min.replace(tzinfo=UTC)
# Rounds of `keep_consumptions` for periods another delivery keeps first meanwhile, before the
# message is handed back to its queue (TransientError) to be delivered again.
RACED_ATTEMPTS = 3


def _determined(item: dict[str, Any]) -> datetime:
    """When a kept consumption was determined (an item kept before that was recorded: never)."""
    at = item.get("determined_at")
    return datetime.fromisoformat(at) if at else _NEVER


class Redetermined(NamedTuple):
    """A kept consumption re-determined: the item kept until now and the one replacing it."""

    tenant: str
    old: dict[str, Any]
    new: dict[str, Any]


class Projections(Store):
    def _put_in_map(
        self, pk: str, sk: str, attribute: str, key: str, value: dict[str, Any], now: datetime
    ) -> None:
        self._put_in_maps(attribute, [(pk, sk, key, value)], now)

    def _put_in_maps(
        self, attribute: str, entries: Sequence[tuple[str, str, str, dict[str, Any]]], now: datetime
    ) -> None:
        """Set ``attribute[key] = value`` on each item (pk, sk), creating the item or its map
        where missing: one BatchGetItem per 100 items tells which maps exist, then one
        conditional UpdateItem per entry (setting the key in an existing map, or creating the
        map with it); a map created or removed meanwhile by another writer is caught by the
        condition and the other form is used, so no concurrent key is lost."""
        found = self.get_many(list(dict.fromkeys((pk, sk) for pk, sk, _, _ in entries)))
        for pk, sk, key, value in entries:
            has_map = attribute in (found.get((pk, sk)) or {})
            for exists in (has_map, not has_map, has_map):
                if self._update_map(pk, sk, attribute, key, value, now, exists=exists):
                    break
            else:
                raise TransientError(f"{pk}/{sk}: {attribute} kept changing while {key} was set")

    def _update_map(
        self,
        pk: str,
        sk: str,
        attribute: str,
        key: str,
        value: dict[str, Any],
        now: datetime,
        *,
        exists: bool,
    ) -> bool:
        self._count("UpdateItem")
        names = {"#m": attribute}
        values: dict[str, Any] = {":now": {"S": now.isoformat()}}
        if exists:
            names["#k"] = key
            values[":v"] = {"M": to_item(value)}
            expression, condition = "SET #m.#k = :v, updated_at = :now", "attribute_exists(#m)"
        else:
            values[":one"] = {"M": {key: {"M": to_item(value)}}}
            expression, condition = "SET #m = :one, updated_at = :now", "attribute_not_exists(#m)"
        try:
            self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": pk}, "sk": {"S": sk}},
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def keep_consumptions(
        self,
        events: Iterable[ConsumptionDetermined],
        now: datetime,
        redetermined: Callable[[list[Redetermined]], object] | None = None,
        _attempt: int = 1,
    ) -> int:
        """Kept once per (tenant, account, period): a redelivery or duplicate publish changes
        nothing, a later re-determination (by ``occurred_at``, the event's contract) with another
        volume or estimated flag replaces it, an earlier one arriving late changes nothing. One
        BatchGetItem per 100 and one BatchWriteItem per 25 (a chunk of metering's
        consumptions is one message); within the chunk the latest determination of a period
        wins (the last of equal times). Returns how many changed.

        Re-determinations (a kept item replaced) go to ``redetermined`` first, which books the
        re-rating of a bill already issued for the period (X-IMMUTABLE: the bill stays as it
        is); only then is the new item written, so a crash in between is finished by the
        redelivery (the booking is idempotent by its business key). A replacement is written
        on condition that the kept item is the one read (``_replace``); a first determination
        on condition that nothing is kept for its period yet (``put_all_new``: 100 to a
        transaction), so two first determinations of one period delivered at once (the
        consumer runs up to five at once) cannot leave the earlier one kept by writing last:
        the one that finds the other kept is weighed against it as a re-determination."""
        items: dict[tuple[str, str], dict[str, Any]] = {}
        chosen: dict[tuple[str, str], ConsumptionDetermined] = {}  # the event behind each item
        tenants: dict[tuple[str, str], str] = {}
        meters: dict[tuple[str, str], dict[tuple[str, str], dict[str, Any]]] = {}
        for e in events:
            winter = e_winter(e)
            item = {
                "pk": f"USAGE#{e.tenant}#{e.period_start.isoformat()}#{e.period_end.isoformat()}",
                "sk": e.account_id,
                "account_id": e.account_id,
                "period_start": e.period_start.isoformat(),
                "period_end": e.period_end.isoformat(),
                "volume_gal": str(e.volume_gal),
                "winter_average_gal": None if winter is None else str(winter),
                "quality": e.quality,
                "estimated": e.estimated,
                "source_event_id": e.event_id,
                # the determination's time: a later one replaces it, an earlier one (a stale
                # redelivery, SQS and EventBridge keep no order) does not
                "determined_at": e.occurred_at.isoformat(),
                "recorded_at": now.isoformat(),
                # the reads behind the volume, printed on the bill (as JSON text: one attribute),
                # written by pydantic straight from the event's models (the lists alone, not the
                # event as JSON values and then a JSON text of each: issue 7)
                "reads_used": _READS_JSON.dump_json(e.reads_used).decode() if e.reads_used else None,
                "meters": _METERS_JSON.dump_json(e.meters).decode() if e.meters else None,
            }
            key = (str(item["pk"]), str(item["sk"]))
            if key in items and _determined(items[key]) > e.occurred_at:
                continue  # the chunk holds a later determination of the period
            items[key] = item
            chosen[key] = e
            tenants[key] = e.tenant
            for m in e.meters:
                indexed = meter_items(e.tenant, e.account_id, [m.meter_id])
                for k in indexed:
                    if k[1].startswith("V#"):
                        meters[k] = indexed
        # the meters' search entries are read in the same BatchGetItem (a chunk of 50
        # one-meter accounts stays one request) and written once per meter (issue 33)
        old = self.get_many(list(items) + [k for k in meters if k not in items])
        changed = [
            k
            for k, item in items.items()
            if k not in old
            or (
                _determined(old[k]) <= _determined(item)
                and (old[k].get("volume_gal"), old[k].get("estimated"))
                != (item["volume_gal"], item["estimated"])
            )
        ]
        replaced = [Redetermined(tenants[k], old[k], items[k]) for k in changed if k in old]
        if replaced and redetermined is not None:
            redetermined(replaced)
        # meters of one account share words (``W#`` keys): each key once in the batch
        new_meters = {key: i for k, indexed in meters.items() if k not in old for key, i in indexed.items()}
        raced = self.put_all_new([items[k] for k in changed if k not in old])
        self.write(list(new_meters.values()))
        for r in replaced:
            self._replace(r.old, r.new)
        if not raced:
            return len(changed)
        # another delivery kept a first determination of these periods after they were read:
        # weighed again against it (the later determination stays, whichever wrote first)
        if _attempt >= RACED_ATTEMPTS:
            raise TransientError(f"{len(raced)} consumption(s) kept changing while being kept")
        again = [chosen[(str(i["pk"]), str(i["sk"]))] for i in raced]
        return len(changed) - len(raced) + self.keep_consumptions(again, now, redetermined, _attempt + 1)

    def _replace(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        """Put ``new`` in place of the kept ``old`` only if ``old`` is still what is kept (its
        determination's event): two deliveries for the same period racing each other (the
        consumer runs up to five at once) each read the same kept item; the one that writes
        second finds it changed and is retried (TransientError), and then weighs its
        determination against the one now kept, so the later determination is what stays.

        A first determination of a period nothing was kept for is written on condition that
        nothing is kept still (`keep_consumptions`), so the same holds for two of them."""
        kept = {":kept": {"S": str(old.get("source_event_id"))}}
        if not self.put_if(new, "source_event_id = :kept", kept):
            raise TransientError(
                f"{new['pk']}/{new['sk']}: the kept consumption changed while it was being replaced"
            )

    def keep_eru(self, e: ERUDetermined, now: datetime) -> None:
        self.keep_erus((e,), now)

    def keep_erus(self, events: Iterable[ERUDetermined], now: datetime) -> None:
        """Each determination under its parcel, keyed by its sequence (a redelivery rewrites
        the same value); a chunk costs one BatchGetItem and one UpdateItem per parcel."""
        entries = [
            (
                f"ERU#{e.tenant}",
                e.parcel_id,
                f"{e.sequence:06d}",
                {
                    "sequence": e.sequence,
                    "effective_from": e.effective_from.isoformat(),
                    "eru": str(e.eru),
                    "exempt": e.exempt,
                    "use": e.breakdown.use,
                    "owner_name": e.owner_name,
                    "breakdown": json.dumps(_plain(e.breakdown)),
                    "source_event_id": e.event_id,
                },
            )
            for e in events
        ]
        self._put_in_maps("determinations", entries, now)

    def keep_credit(self, e: CreditChanged, now: datetime) -> None:
        value = {
            "credit_id": e.credit_id,
            "status": e.status,
            "effective_from": e.effective_from.isoformat(),
            "credit_percent": str(e.credit_percent),
            "source_event_id": e.event_id,
        }
        self._put_in_map(f"ERU#{e.tenant}", e.parcel_id, "credits", f"{e.credit_id}:{e.status}", value, now)

    def keep_strength(self, e: StrengthClassified, now: datetime) -> None:
        values = _plain(e)
        value = {
            "trigger": e.trigger,
            "as_of": values["as_of"],
            "effective_from": values["effective_from"],
            "category": e.category,
            "basis": json.dumps(values.get("basis")),
            "violation_days": json.dumps(values.get("violation_days") or []),
            "occurred_at": values["occurred_at"],
            "source_event_id": e.event_id,
        }
        self._put_in_map(f"STRENGTH#{e.tenant}", e.account_id, "classified", e.trigger, value, now)

    def keep_charge(self, e: SamplingCostCharged | FeeCharged, account_id: str, now: datetime) -> None:
        """A one-time charge for the account's next bill, by its business key (a redelivery
        rewrites the same item). A fee keeps its derivation (kind, tariff version and the
        producer's details: the credit, appeal or extract it was charged for) for its line."""
        key = e.charge_id if isinstance(e, SamplingCostCharged) else e.fee_id
        charged_on = e.charged_on
        derivation = (
            {}
            if isinstance(e, SamplingCostCharged)
            else {**e.details, "fee_kind": e.kind, "tariff_version": e.tariff_version}
        )
        self.write(
            [
                {
                    **({"derivation": json.dumps(derivation, sort_keys=True)} if derivation else {}),
                    "pk": f"CHARGES#{e.tenant}",
                    "sk": f"{account_id}#{key}",
                    "account_id": account_id,
                    "charge_id": key,
                    "rule_id": e.rule_id,
                    "description": e.description,
                    "amount": str(e.amount),
                    "charged_on": charged_on.isoformat(),
                    "source_event_id": e.event_id,
                    "recorded_at": now.isoformat(),
                }
            ]
        )

    def post_refund(self, e: RefundGranted, now: datetime) -> None:
        """PP-CWU-RECONSIDER: the refund is a credit on the account (ledger kind ``credit``)."""
        entry = Entry(
            entry_id=f"REFUND-{e.reconsideration_id}",
            tenant=e.tenant,
            account_id=e.account_id,
            posted_on=e.granted_on,
            kind="credit",
            amount=-e.amount,
            fund="om",
            rule_id=e.rule_id,
            bill_id=e.bill_id,
            reference=e.reconsideration_id,
            description=f"reconsideration {e.reconsideration_id} refund",
        )
        item = entry_item(entry, now.isoformat())
        item["source_event_id"] = e.event_id
        self.write([item])
