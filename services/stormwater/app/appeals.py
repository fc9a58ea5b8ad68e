"""Reconsideration and appeal use cases (PP-CWU-RECON, PP-CWU-APPEAL) and staff's pending decisions."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from decimal import Decimal
from typing import Any

from common.ids import key
from stormwater.adapters.dynamodb import (
    fact_item,
    parcel_pk,
)
from stormwater.app.bills import BillUseCases
from stormwater.app.common import (
    _APPEAL,
    _RECON,
    BadRequest,
    NotFound,
    _date,
    _decimal,
    _dump,
    _event_item,
    _from_cursor,
    _int,
    _pending,
    _to_cursor,
)
from stormwater.app.credits import CreditUseCases
from stormwater.app.parcels import ParcelUseCases
from stormwater.domain import reconsiderations as rc
from stormwater.domain.determinations import OVERRIDABLE


class AppealUseCases(ParcelUseCases, CreditUseCases, BillUseCases):
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
