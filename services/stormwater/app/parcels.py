"""Parcel use cases: the ERU view, Engineer overrides (PP-CWU-DATA) and service
applications (PP-CWU-APPLICATION); the redetermination every other use case commits through."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from typing import Any

from common.errors import FieldError
from common.ids import key
from common.values import AREA_SQFT
from stormwater.adapters.dynamodb import (
    determination_item,
    fact_item,
    gis_values,
    parcel_pk,
)
from stormwater.app.common import BadRequest, NotFound, UseCaseBase, _decimal
from stormwater.domain.determinations import OVERRIDABLE, ParcelData
from stormwater.domain.parcels import ParcelState, redetermine
from stormwater.events import DeterminationCause


class ParcelUseCases(UseCaseBase):
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
