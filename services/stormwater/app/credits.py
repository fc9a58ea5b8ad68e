"""Credit use cases (PP-CWU-CREDIT): application, review, decision, revocation, inspection."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from common.ids import key
from stormwater.adapters.dynamodb import (
    fact_item,
    parcel_pk,
)
from stormwater.app.common import (
    _CREDIT,
    BadRequest,
    NotFound,
    UseCaseBase,
    _date,
    _decimal,
    _dump,
    _event_item,
    _pending,
)
from stormwater.domain import credits as cr


class CreditUseCases(UseCaseBase):
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
