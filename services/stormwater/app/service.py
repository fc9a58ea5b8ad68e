"""Stormwater's use cases behind the HTTP routes and billing's events (one method per action).

Each method reads what it needs, calls the pure domain and commits the decision and its
events together (``DynamoRecords.commit``). Dates come from the injected clock.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import date
from decimal import Decimal
from typing import Any, Literal, TypeVar

from pydantic import TypeAdapter

from common.clock import Clock
from common.errors import FieldError
from common.ids import key
from common.values import AREA_SQFT, NotADecimal, to_decimal
from stormwater.adapters.dynamodb import (
    DynamoParcelRepository,
    DynamoRecords,
    determination_item,
    fact_item,
    gis_values,
    parcel_pk,
    pending_item,
)
from stormwater.app.billing_inputs import BillIssuedInput, PaymentAppliedInput
from stormwater.domain import credits as cr
from stormwater.domain import reconsiderations as rc
from stormwater.domain.determinations import OVERRIDABLE, ParcelData
from stormwater.domain.parcels import ParcelState, TariffView, redetermine
from stormwater.events import DeterminationCause, Event

T = TypeVar("T")


class NotFound(FieldError):
    """No such parcel, credit, reconsideration or appeal (HTTP 404)."""


class BadRequest(FieldError):
    """The request is not what the route takes (HTTP 400)."""


_CREDIT = TypeAdapter(cr.Credit)
_RECON = TypeAdapter(rc.Reconsideration)
_APPEAL = TypeAdapter(rc.Appeal)
_BILL = TypeAdapter(rc.BillView)


def _dump(adapter: TypeAdapter[T], value: T) -> str:
    return adapter.dump_json(value).decode()


def _event_item(pk: str, sk: str, event: Event | None) -> list[dict[str, Any]]:
    if event is None:
        return []
    return [fact_item(pk, sk, "event", event.detail_json(), event)]


PendingRecord = cr.Credit | rc.Reconsideration | rc.Appeal
# Statuses in which a record waits for staff (or the Board): listed as a pending decision.
WAITING = {"credit": ("submitted", "under_review"), "reconsideration": ("filed",), "appeal": ("filed",)}


def _pending(record: PendingRecord) -> tuple[dict[str, Any], bool]:
    """The record's entry in the tenant's pending decisions, and whether it still waits."""
    if isinstance(record, cr.Credit):
        kind, record_id, filed_on = "credit", record.credit_id, record.submitted_on
        what = f"credit application ({record.documentation.practice[:200]})"
    elif isinstance(record, rc.Reconsideration):
        kind, record_id, filed_on = "reconsideration", record.reconsideration_id, record.filed_on
        what = f"reconsideration of bill {record.bill_id}"
    else:
        kind, record_id, filed_on = "appeal", record.appeal_id, record.filed_on
        what = f"appeal of {record.reconsideration_id} (Board hearing)"
    body = {
        "kind": kind,
        "id": record_id,
        "parcel_id": record.parcel_id,
        "owner_name": record.owner_name,
        "status": record.status,
        "filed_on": filed_on.isoformat(),
        "summary": what,
    }
    entry = pending_item(
        record.tenant, filed_on.isoformat(), kind, record.parcel_id, record_id, json.dumps(body)
    )
    return entry, record.status in WAITING[kind]


def _to_cursor(sort_key: str | None) -> str | None:
    """An opaque, URL-safe cursor (base64url of the last entry's sort key)."""
    return None if sort_key is None else base64.urlsafe_b64encode(sort_key.encode()).decode().rstrip("=")


def _from_cursor(cursor: str | None) -> str | None:
    if not cursor:
        return None
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise BadRequest("cursor", "is not a next_cursor this route gave") from None


class StormwaterService:
    def __init__(
        self,
        parcels: DynamoParcelRepository,
        records: DynamoRecords,
        tariff_for: Callable[[str, date], TariffView],
        clock: Clock,
    ) -> None:
        self._parcels = parcels
        self._records = records
        self._tariff_for = tariff_for
        self._clock = clock

    # --- parcels ------------------------------------------------------------------------------
    def parcel(self, tenant: str, parcel_id: str) -> ParcelState:
        state = self._parcels.state(tenant, parcel_id)
        if state is None:
            raise NotFound("parcel_id", f"no parcel {parcel_id} of {tenant}")
        return state

    def eru_view(self, tenant: str, parcel_id: str) -> dict[str, Any]:
        """The parcel's ERU with its breakdown, the data in force and the history."""
        state = self.parcel(tenant, parcel_id)
        pk = parcel_pk(tenant, parcel_id)
        history = [
            {k: i[k] for k in ("sequence", "eru", "exempt", "effective_from", "cause", "cause_ref") if k in i}
            for i in self._records.query(pk, "ERU#")
        ]
        overrides = [json.loads(i["body"]) for i in self._records.query(pk, "OVERRIDE#")]
        gis = [
            {"values": i["values"], "file_key": i.get("file_key"), "recorded_at": i["sk"].split("#")[1]}
            for i in self._records.query(pk, "GIS#")
        ]
        gis.append(
            {
                "values": gis_values(state),
                "file_key": state.extra.get("gis_file_key"),
                "recorded_at": state.extra.get("gis_recorded_at"),
            }
        )
        current = state.current
        return {
            "tenant": tenant,
            "parcel_id": parcel_id,
            "owner_name": state.owner_name,
            "eru": None if current is None else format(current.eru, "f"),
            "exempt": None if current is None else current.exempt,
            "effective_from": None if current is None else current.effective_from,
            "sequence": None if current is None else current.sequence,
            "breakdown": None if current is None else json.loads(current.breakdown.model_dump_json()),
            "data_source": state.data.data_source,
            "override": None if not state.override else {k: str(v) for k, v in state.override.items()},
            "history": history,
            "gis_history": gis,
            "overrides": overrides,
        }

    def _redetermine_and_commit(
        self,
        state: ParcelState,
        *,
        cause: DeterminationCause,
        cause_ref: str,
        facts: list[dict[str, Any]],
        pending: list[tuple[dict[str, Any], bool]] | None = None,
        effective_from: date | None = None,
    ) -> dict[str, Any]:
        """Determine from ``effective_from`` (today unless given) under the tariff then in force."""
        now = self._clock.now()
        effective = effective_from or now.date()
        tariff = self._tariff_for(state.tenant, effective)
        done = redetermine(
            state, tariff=tariff, effective_from=effective, cause=cause, cause_ref=cause_ref, now=now
        )
        if done.event is not None:
            facts = [determination_item(done.event), *facts]
        self._records.commit(facts, done.state, pending=pending or [])
        return {
            "eru": format(done.determination.eru, "f"),
            "exempt": done.determination.exempt,
            "published": done.event is not None,
            "sequence": None if done.state.current is None else done.state.current.sequence,
        }

    def override(
        self, tenant: str, parcel_id: str, fields: Mapping[str, Any], reason: str, engineer: str
    ) -> dict[str, Any]:
        """PP-CWU-DATA: the Engineer's values replace the GIS ones (kept beside them) until
        withdrawn; an empty ``fields`` withdraws the override."""
        if not reason.strip():
            raise BadRequest("reason", "an override states its reason and source (PP-CWU-DATA)")
        unknown = set(fields) - set(OVERRIDABLE)
        if unknown:
            raise BadRequest(f"fields.{sorted(unknown)[0]}", f"not a parcel field ({', '.join(OVERRIDABLE)})")
        state = self.parcel(tenant, parcel_id)
        values: dict[str, Any] = {}
        for name, value in fields.items():
            if name == "use":
                values[name] = str(value)
                continue
            values[name] = _decimal(fields, name, prefix="fields.", maximum=AREA_SQFT)
        candidate = replace(state, override=values or None)
        try:
            candidate.data.parcel()
        except FieldError as exc:
            raise BadRequest(exc.field.replace("parcel.", "fields."), exc.message) from None
        now = self._clock.now()
        ident = json.dumps([tenant, parcel_id, now.isoformat(), sorted(values.items()), reason], default=str)
        override_id = "OV-" + hashlib.sha256(ident.encode()).hexdigest()[:10]
        record = {
            "override_id": override_id,
            "fields": {k: str(v) for k, v in values.items()},
            "withdrawn": not values,
            "reason": reason,
            "engineer": engineer,
            "recorded_at": now.isoformat(),
            "gis_values_then": {
                "use": state.gis.use,
                "area_sqft": str(state.gis.area_sqft),
                "impervious_sqft": str(state.gis.impervious_sqft),
                "woods_sqft": str(state.gis.woods_sqft),
                "excluded_sqft": str(state.gis.excluded_sqft),
            },
        }
        fact = fact_item(
            parcel_pk(tenant, parcel_id),
            f"OVERRIDE#{now.isoformat()}#{override_id}",
            "override",
            json.dumps(record),
        )
        result = self._redetermine_and_commit(
            replace(candidate, override_id=override_id if values else None, override_source="override"),
            cause="manual_override",
            cause_ref=override_id,
            facts=[fact],
        )
        return {"override_id": override_id, **result}

    def record_application(self, tenant: str, parcel_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """PP-CWU-APPLICATION: a service application at building permit or site plan review,
        recorded against the parcel with its impervious area and use (the ERU follows the
        GIS data once built, or an override)."""
        kind = body.get("kind")
        if kind not in ("building_permit", "site_plan_review"):
            raise BadRequest("kind", "must be building_permit or site_plan_review")
        reference = str(body.get("reference") or "").strip()
        if not reference or len(reference) > 200 or "#" in reference:
            raise BadRequest("reference", "is required (at most 200 characters, no '#')")
        use = body.get("use")
        data = ParcelData(
            use=str(use),
            area_sqft=_decimal(body, "area_sqft", maximum=AREA_SQFT),
            impervious_sqft=_decimal(body, "impervious_sqft", maximum=AREA_SQFT),
        )
        try:
            data.parcel()
        except FieldError as exc:
            raise BadRequest(exc.field.replace("parcel.", ""), exc.message) from None
        now = self._clock.now()
        record = {
            "kind": kind,
            "reference": reference,
            "filed_on": now.date().isoformat(),
            "use": data.use,
            "area_sqft": str(data.area_sqft),
            "impervious_sqft": str(data.impervious_sqft),
        }
        pk = parcel_pk(tenant, parcel_id)
        if self._records.get(pk, key("APPLICATION", reference)) is None:
            self._records.put(fact_item(pk, key("APPLICATION", reference), "application", json.dumps(record)))
        return record

    # --- credits ------------------------------------------------------------------------------
    def credits(self, tenant: str, parcel_id: str) -> list[cr.Credit]:
        pk = parcel_pk(tenant, parcel_id)
        latest: dict[str, cr.Credit] = {}
        for item in self._records.query(pk, "CREDIT#"):
            if item["kind"] != "credit":
                continue
            credit = _CREDIT.validate_json(item["body"])
            if credit.version >= latest.get(credit.credit_id, credit).version:
                latest[credit.credit_id] = credit
        return sorted(latest.values(), key=lambda c: (c.submitted_on, c.credit_id))

    def credit(self, tenant: str, parcel_id: str, credit_id: str) -> cr.Credit:
        for credit in self.credits(tenant, parcel_id):
            if credit.credit_id == credit_id:
                return credit
        raise NotFound("credit_id", f"no credit {credit_id} on parcel {parcel_id}")

    def _commit_credit(self, step: cr.CreditStep) -> cr.Credit:
        credit = step.credit
        pk = parcel_pk(credit.tenant, credit.parcel_id)
        base = f"CREDIT#{credit.credit_id}#V#{credit.version:04d}"
        facts = [fact_item(pk, base, "credit", _dump(_CREDIT, credit), step.changed)]
        if step.fee is not None:
            facts += _event_item(pk, key("FEE", step.fee.fee_id), step.fee)
        facts += _event_item(pk, base + "#NOTICE", step.notice)
        self._records.commit(facts, pending=[_pending(credit)])
        return credit

    def apply_for_credit(self, tenant: str, parcel_id: str, documentation: cr.Documentation) -> cr.Credit:
        now = self._clock.now()
        existing = self.credits(tenant, parcel_id)
        step = cr.apply_for_credit(
            self._parcels.state(tenant, parcel_id),
            documentation,
            tenant=tenant,
            parcel_id=parcel_id,
            tariff=self._tariff_for(tenant, now.date()),
            open_credits=existing,
            now=now,
        )
        same = [c for c in existing if c.credit_id == step.credit.credit_id]
        if same:
            return same[0]  # the same application again: nothing new
        return self._commit_credit(step)

    def credit_action(
        self,
        tenant: str,
        parcel_id: str,
        credit_id: str,
        action: Literal["review", "approve", "deny", "revoke"],
        body: Mapping[str, Any],
    ) -> cr.Credit:
        credit = self.credit(tenant, parcel_id, credit_id)
        now = self._clock.now()
        reason = str(body.get("reason") or "")
        if action == "review":
            step = cr.start_review(credit, now=now)
        elif action == "approve":
            step = cr.approve(
                credit,
                tss_removal_percent=_decimal(body, "tss_removal_percent"),
                reason=reason,
                tariff=self._tariff_for(tenant, now.date()),
                now=now,
            )
        elif action == "deny":
            step = cr.deny(credit, reason=reason, now=now)
        else:
            step = cr.revoke(credit, revocation_date=_date(body, "revocation_date"), reason=reason, now=now)
        return self._commit_credit(step)

    def inspect_credit(
        self, tenant: str, parcel_id: str, credit_id: str, body: Mapping[str, Any]
    ) -> cr.Credit:
        credit = self.credit(tenant, parcel_id, credit_id)
        result = body.get("result")
        if result not in ("satisfactory", "deficient"):
            raise BadRequest("result", "must be satisfactory or deficient")
        inspection = cr.Inspection(
            inspected_on=_date(body, "inspected_on"),
            inspector=str(body.get("inspector") or ""),
            result=result,
            notes=str(body.get("notes") or "")[:2000],
        )
        if inspection.inspected_on > self._clock.now().date():
            raise BadRequest("inspected_on", "an inspection record cannot be dated in the future")
        new = cr.record_inspection(credit, inspection)
        pk = parcel_pk(tenant, parcel_id)
        self._records.commit(
            [fact_item(pk, f"CREDIT#{credit_id}#V#{new.version:04d}", "credit", _dump(_CREDIT, new))]
        )
        return new

    # --- bills kept from billing's events -------------------------------------------------------
    def keep_bill(self, issued: BillIssuedInput) -> bool:
        """Keep a stormwater bill (one with a parcel); a repeat keeps the payment date known."""
        if not issued.parcel_id:
            return False
        bill = rc.BillView(
            tenant=issued.tenant,
            bill_id=issued.bill_id,
            account_id=issued.account_id,
            parcel_id=issued.parcel_id,
            bill_date=issued.bill_date,
            due_date=issued.due_date,
            total=issued.total,
            period_start=issued.period_start,
            period_end=issued.period_end,
        )
        pk, sk = key("BILL", bill.tenant, bill.bill_id), "BILL"
        existing = self._records.get(pk, sk)
        if existing is not None:
            bill = replace(bill, paid_on=_BILL.validate_json(existing["body"]).paid_on)
        self._records.put(fact_item(pk, sk, "bill", _dump(_BILL, bill), account_id=bill.account_id))
        self._records.put(
            {
                "pk": key("ACCOUNT", bill.tenant, bill.account_id),
                "sk": key("BILL", bill.bill_date.isoformat(), bill.bill_id),
                "kind": "bill_ref",
                "bill_id": bill.bill_id,
            }
        )
        return True

    def keep_payment(self, payment: PaymentAppliedInput) -> int:
        """Record the payment date on the bill paid (or, without a bill id, on the account's
        unpaid bills issued by then); returns how many bills it marked."""
        if payment.amount is not None and payment.amount <= 0:
            return 0  # a reversal (returned check) pays nothing
        if payment.bill_id:
            bill_ids = [payment.bill_id]
        else:
            refs = self._records.query(key("ACCOUNT", payment.tenant, payment.account_id), "BILL#")
            bill_ids = [r["bill_id"] for r in refs if r["sk"].split("#")[1] <= payment.paid_on.isoformat()]
        marked = 0
        for bill_id in bill_ids:
            pk, sk = key("BILL", payment.tenant, bill_id), "BILL"
            existing = self._records.get(pk, sk)
            if existing is None:
                continue
            bill = _BILL.validate_json(existing["body"])
            if bill.paid_on is not None and (payment.bill_id is None or bill.paid_on >= payment.paid_on):
                continue
            paid = replace(bill, paid_on=payment.paid_on)
            self._records.put(fact_item(pk, sk, "bill", _dump(_BILL, paid), account_id=bill.account_id))
            marked += 1
        return marked

    def bill(self, tenant: str, bill_id: str) -> rc.BillView | None:
        if "#" in bill_id or not bill_id.strip():  # no such bill: ids never hold the key separator
            return None
        item = self._records.get(key("BILL", tenant, bill_id), "BILL")
        return None if item is None else _BILL.validate_json(item["body"])

    # --- reconsideration and appeal -------------------------------------------------------------
    def _billed_eru(self, tenant: str, parcel_id: str, bill: rc.BillView) -> Decimal:
        """The ERU in force at the start of the billed period (the determination billed)."""
        on = bill.period_start or bill.bill_date
        best: Decimal | None = None
        for item in self._records.query(parcel_pk(tenant, parcel_id), "ERU#"):
            if date.fromisoformat(item["effective_from"]) <= on:
                best = Decimal(item["eru"])
        if best is None:
            state = self.parcel(tenant, parcel_id)
            if state.current is None:
                raise NotFound("parcel_id", f"parcel {parcel_id} has no ERU determination")
            best = state.current.eru
        return best

    def reconsiderations(self, tenant: str, parcel_id: str) -> list[rc.Reconsideration]:
        latest: dict[str, rc.Reconsideration] = {}
        for item in self._records.query(parcel_pk(tenant, parcel_id), "RECON#"):
            if item["kind"] != "reconsideration":
                continue
            r = _RECON.validate_json(item["body"])
            if r.version >= latest.get(r.reconsideration_id, r).version:
                latest[r.reconsideration_id] = r
        return sorted(latest.values(), key=lambda r: (r.filed_on, r.reconsideration_id))

    def reconsideration(self, tenant: str, parcel_id: str, reconsideration_id: str) -> rc.Reconsideration:
        for r in self.reconsiderations(tenant, parcel_id):
            if r.reconsideration_id == reconsideration_id:
                return r
        raise NotFound("reconsideration_id", f"no reconsideration {reconsideration_id} on parcel {parcel_id}")

    def file_reconsideration(
        self, tenant: str, parcel_id: str, body: Mapping[str, Any]
    ) -> rc.Reconsideration:
        state = self.parcel(tenant, parcel_id)
        bill_id = str(body.get("bill_id") or "")
        bill = self.bill(tenant, bill_id)
        today = self._clock.now().date()
        recon = rc.file_reconsideration(
            bill,
            tenant=tenant,
            parcel_id=parcel_id,
            bill_id=bill_id,
            owner_name=state.owner_name,
            billed_eru=self._billed_eru(tenant, parcel_id, bill)
            if bill and bill.parcel_id == parcel_id
            else Decimal(0),
            grounds=str(body.get("grounds") or ""),
            asserted_amount=_decimal(body, "asserted_amount"),
            today=today,
        )
        for kept in self.reconsiderations(tenant, parcel_id):
            if kept.reconsideration_id == recon.reconsideration_id:
                return kept
        pk = parcel_pk(tenant, parcel_id)
        self._records.commit(
            [
                fact_item(
                    pk, f"RECON#{recon.reconsideration_id}#V#0001", "reconsideration", _dump(_RECON, recon)
                )
            ],
            pending=[_pending(recon)],
        )
        return recon

    def decide_reconsideration(
        self, tenant: str, parcel_id: str, reconsideration_id: str, body: Mapping[str, Any]
    ) -> rc.Reconsideration:
        recon = self.reconsideration(tenant, parcel_id, reconsideration_id)
        state = self.parcel(tenant, parcel_id)
        bill = self.bill(tenant, recon.bill_id)
        if bill is None:
            raise NotFound("bill_id", f"bill {recon.bill_id} is no longer known")
        outcome = body.get("outcome")
        if outcome not in ("deny", "decide"):
            raise BadRequest("outcome", "must be deny or decide")
        found = body.get("found")
        if found is not None and not isinstance(found, dict):
            raise BadRequest("found", "must be an object of parcel fields")
        now = self._clock.now()
        period_on = bill.period_start or bill.bill_date
        credit_percent = max(
            (c.percent_on(period_on) for c in self.credits(tenant, parcel_id)), default=Decimal(0)
        )
        decision = rc.decide(
            recon,
            outcome=outcome,
            reason=str(body.get("reason") or ""),
            found={k: str(v) for k, v in found.items()} if found else None,
            current=state.data,
            tariff=self._tariff_for(tenant, now.date()),
            bill=bill,
            credit_percent=credit_percent,
            now=now,
        )
        decided = decision.reconsideration
        pk = parcel_pk(tenant, parcel_id)
        base = f"RECON#{reconsideration_id}#V#{decided.version:04d}"
        facts = [fact_item(pk, base, "reconsideration", _dump(_RECON, decided), decision.decided)]
        if decision.found_data is None:
            self._records.commit(facts, pending=[_pending(decided)])
            return decided
        found_fields = {name: getattr(decision.found_data, name) for name in OVERRIDABLE}
        changed_state = replace(
            state, override=found_fields, override_id=reconsideration_id, override_source="reconsideration"
        )
        self._redetermine_and_commit(
            changed_state,
            cause="reconsideration",
            cause_ref=reconsideration_id,
            facts=facts,
            pending=[_pending(decided)],
            effective_from=decision.effective_from,
        )
        return decided

    def pending_decisions(
        self, tenant: str, *, limit: int | None, cursor: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """Reconsiderations, appeals awaiting the Board and credit applications awaiting a
        decision, oldest filed first, a page at a time."""
        items, after = self._records.pending(tenant, limit=limit, after=_from_cursor(cursor))
        return [json.loads(i["body"]) for i in items], _to_cursor(after)

    def appeals(self, tenant: str, parcel_id: str) -> list[rc.Appeal]:
        latest: dict[str, rc.Appeal] = {}
        for item in self._records.query(parcel_pk(tenant, parcel_id), "APPEAL#"):
            if item["kind"] != "appeal":
                continue
            a = _APPEAL.validate_json(item["body"])
            if a.version >= latest.get(a.appeal_id, a).version:
                latest[a.appeal_id] = a
        return sorted(latest.values(), key=lambda a: (a.filed_on, a.appeal_id))

    def file_appeal(self, tenant: str, parcel_id: str, body: Mapping[str, Any]) -> rc.Appeal:
        recon = self.reconsideration(tenant, parcel_id, str(body.get("reconsideration_id") or ""))
        now = self._clock.now()
        appeal, fee = rc.file_appeal(
            recon,
            grounds=str(body.get("grounds") or ""),
            tariff=self._tariff_for(tenant, now.date()),
            now=now,
        )
        for kept in self.appeals(tenant, parcel_id):
            if kept.appeal_id == appeal.appeal_id:
                return kept
        pk = parcel_pk(tenant, parcel_id)
        self._records.commit(
            [
                fact_item(pk, f"APPEAL#{appeal.appeal_id}#V#0001", "appeal", _dump(_APPEAL, appeal)),
                *_event_item(pk, key("FEE", fee.fee_id), fee),
            ],
            pending=[_pending(appeal)],
        )
        return appeal

    def record_hearing(
        self, tenant: str, parcel_id: str, appeal_id: str, body: Mapping[str, Any]
    ) -> rc.Appeal:
        appeal = next((a for a in self.appeals(tenant, parcel_id) if a.appeal_id == appeal_id), None)
        if appeal is None:
            raise NotFound("appeal_id", f"no appeal {appeal_id} on parcel {parcel_id}")
        found = body.get("found")
        if found is not None and not isinstance(found, dict):
            raise BadRequest("found", "must be an object of parcel fields")
        state = self.parcel(tenant, parcel_id)
        hearing_date = _date(body, "hearing_date")
        hearing = rc.record_hearing(
            appeal,
            hearing_date=hearing_date,
            members_present=_int(body, "members_present"),
            votes_to_reverse=_int(body, "votes_to_reverse"),
            votes_to_uphold=_int(body, "votes_to_uphold"),
            minutes_ref=str(body.get("minutes_ref") or "")[:500],
            found={k: str(v) for k, v in found.items()} if found else None,
            current=state.data,
            tariff=self._tariff_for(tenant, hearing_date),
            now=self._clock.now(),
        )
        heard = hearing.appeal
        pk = parcel_pk(tenant, parcel_id)
        facts = [
            fact_item(
                pk,
                f"APPEAL#{appeal_id}#V#{heard.version:04d}",
                "appeal",
                _dump(_APPEAL, heard),
                hearing.decided,
            )
        ]
        if hearing.found_data is None:
            self._records.commit(facts, pending=[_pending(heard)])
            return heard
        # PP-CWU-APPEAL: the Board's data replaces the parcel's from the hearing date on.
        found_fields = {name: getattr(hearing.found_data, name) for name in OVERRIDABLE}
        self._redetermine_and_commit(
            replace(state, override=found_fields, override_id=appeal_id, override_source="appeal"),
            cause="appeal",
            cause_ref=appeal_id,
            facts=facts,
            pending=[_pending(heard)],
            effective_from=hearing_date,
        )
        return heard


def _decimal(
    body: Mapping[str, Any], name: str, *, prefix: str = "", maximum: Decimal | None = None
) -> Decimal:
    try:
        return to_decimal(body.get(name), maximum=maximum)
    except NotADecimal as exc:
        raise BadRequest(prefix + name, str(exc)) from None


def _date(body: Mapping[str, Any], name: str) -> date:
    from common.values import NotADate, to_date

    try:
        return to_date(body.get(name))
    except NotADate as exc:
        raise BadRequest(name, str(exc)) from None


def _int(body: Mapping[str, Any], name: str) -> int:
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(name, f"must be a whole number, got {value!r}")
    return value


def as_document(value: Any) -> Any:
    """A domain record as JSON-ready data (Decimals as strings, dates ISO)."""
    return json.loads(TypeAdapter(type(value)).dump_json(value))
