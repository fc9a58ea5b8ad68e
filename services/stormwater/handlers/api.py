"""Stormwater's portal routes (HTTP API, PortalJwt authorizer; see template.yaml).

Owner routes (``/parcels/{tenant}/{parcel_id}/...``): the parcel's owner (role ``owner`` with
the tenant in ``tenants`` and the parcel in ``parcels``) or the tenant's staff. Staff routes
(``/staff/{tenant}/...``): role ``staff`` with the tenant. Each route parses, calls one use
case and answers; rule refusals are 400 naming the field, state conflicts 409.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.logging import correlation_paths
from pydantic import BaseModel, ConfigDict, Field

from common.authz import caller, require
from common.errors import FieldError, TransientError
from common.http import ApiError, error_responses, install_error_handlers
from common.observability import observed
from stormwater import composition
from stormwater.domain.credits import CreditConflict, Documentation
from stormwater.domain.reconsiderations import BillNotKnown, ReconsiderationConflict
from stormwater.service import NotFound, as_document

app = APIGatewayHttpResolver(enable_validation=True)
# Domain errors as HTTP answers (the closest class along the exception's MRO wins); a
# transient error on a write is a concurrent change: the client may try again.
install_error_handlers(
    app,
    {
        NotFound: (404, "not_found"),
        BillNotKnown: (404, "not_found"),
        CreditConflict: (409, "conflict"),
        ReconsiderationConflict: (409, "conflict"),
        FieldError: (400, "refused"),
        TransientError: (409, "conflict"),
    },
)

TenantPath = Annotated[str, Path(description="Tenant id, e.g. pleasant-prairie-stormwater", max_length=100)]
ParcelPath = Annotated[str, Path(description="Parcel id", max_length=200)]
IdPath = Annotated[str, Path(description="Record id", max_length=100)]
# Writes may meet a conflict (a decision already taken, a concurrent change): 409.
ERRORS = error_responses(400, 401, 403, 404, 409)
READ_ERRORS = error_responses(400, 401, 403, 404)


# --- access -------------------------------------------------------------------------------------
def _staff(tenant: str) -> str:
    return require(app.current_event.raw_event, tenant).sub or "staff"


def _owner_or_staff(tenant: str, parcel_id: str) -> str:
    who = caller(app.current_event.raw_event)
    in_tenant = tenant in who.tenants
    if who.role == "staff" and in_tenant:
        return "staff"
    # A customer whose token names the parcel (an owner-occupant) may act on it as its owner.
    if who.role in ("owner", "customer") and in_tenant and parcel_id in who.parcels:
        return "owner"
    raise ApiError(
        403, "forbidden", f"parcel_id: only the owner of parcel {parcel_id} or {tenant} staff may do this"
    )


# --- request bodies -------------------------------------------------------------------------------
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreditApplication(_Body):
    engineer_name: str = Field(max_length=500)
    engineer_license: str = Field(max_length=100)
    document_ref: str = Field(max_length=500, description="The PE's report or plan set (reference)")
    practice: str = Field(max_length=2000, description="The stormwater practice and what it treats")


class ReconsiderationRequest(_Body):
    bill_id: str = Field(max_length=200, pattern=r"^[^#]*[^#\s][^#]*$", description="The bill's id (no '#')")
    grounds: str = Field(max_length=4000, pattern=r"\S", description="Why (not blank)")
    asserted_amount: str = Field(
        max_length=40,
        pattern=r"^[0-9]{1,7}(\.[0-9]{1,2})?$",
        description="The amount the customer asserts, in dollars (decimal string, e.g. 25.00)",
    )


class AppealRequest(_Body):
    reconsideration_id: str = Field(max_length=100)
    grounds: str = Field(max_length=4000, pattern=r"\S", description="Why (not blank)")


class OverrideRequest(_Body):
    fields: dict[str, str] = Field(
        description="use, area_sqft, impervious_sqft, woods_sqft, excluded_sqft; {} withdraws the override"
    )
    reason: str = Field(max_length=2000, description="Why, and the other reliable data used (PP-CWU-DATA)")


class CreditDecision(_Body):
    decision: Literal["approve", "deny"]
    tss_removal_percent: str | None = Field(
        default=None,
        max_length=20,
        pattern=r"^(100(\.0{1,2})?|[0-9]{1,2}(\.[0-9]{1,2})?)$",
        description="TSS removal the practice achieves, percent (0 to 100, decimal string)",
    )
    reason: str = Field(default="", max_length=2000)


class CreditRevocation(_Body):
    revocation_date: date
    reason: str = Field(max_length=2000)


class InspectionRecord(_Body):
    inspected_on: date
    inspector: str = Field(max_length=200)
    result: Literal["satisfactory", "deficient"]
    notes: str = Field(default="", max_length=2000)


class ReconsiderationDecision(_Body):
    outcome: Literal["deny", "decide"]
    reason: str = Field(max_length=2000)
    found: dict[str, str] | None = Field(default=None, description="Parcel data found (areas, use)")


class HearingRecord(_Body):
    hearing_date: date
    members_present: int = Field(ge=0, le=100)
    votes_to_reverse: int = Field(ge=0, le=100)
    votes_to_uphold: int = Field(ge=0, le=100)
    minutes_ref: str = Field(default="", max_length=500)
    found: dict[str, str] | None = Field(
        default=None,
        description="A reversal: the parcel data the Board finds (areas, use); the ERU it sets follows",
    )


class ServiceApplication(_Body):
    kind: Literal["building_permit", "site_plan_review"]
    reference: str = Field(
        max_length=200, pattern=r"^[^#]*[^#\s][^#]*$", description="Permit or plan reference (no '#')"
    )
    use: str = Field(max_length=40)
    area_sqft: str = Field(max_length=40, pattern=r"^[0-9]{1,9}(\.[0-9]{1,2})?$", description="Square feet")
    impervious_sqft: str = Field(
        max_length=40, pattern=r"^[0-9]{1,9}(\.[0-9]{1,2})?$", description="Square feet"
    )


def _service() -> Any:
    return composition.service()


class PendingDecision(BaseModel):
    kind: Literal["reconsideration", "appeal", "credit"]
    id: str
    parcel_id: str
    owner_name: str
    status: str
    filed_on: date
    summary: str


class PendingDecisionsPage(BaseModel):
    decisions: list[PendingDecision]
    next_cursor: str | None


# --- staff: what waits for a decision ----------------------------------------------------------------
@app.get(
    "/staff/<tenant>/parcels/pending-decisions",
    summary="Reconsiderations, appeals and credit applications awaiting a decision, oldest first",
    tags=["stormwater", "staff"],
    responses=READ_ERRORS,
)
def get_pending_decisions(
    tenant: TenantPath,
    limit: Annotated[
        int | None, Query(ge=1, le=1000, description="Page size; without it, everything")
    ] = None,
    cursor: Annotated[
        str | None, Query(pattern=r"^[A-Za-z0-9_-]{1,600}$", description="next_cursor of the previous page")
    ] = None,
) -> PendingDecisionsPage:
    _staff(tenant)
    items, nxt = _service().pending_decisions(tenant, limit=limit, cursor=cursor)
    return PendingDecisionsPage(decisions=[PendingDecision(**i) for i in items], next_cursor=nxt)


# --- owner (or staff) routes ------------------------------------------------------------------------
@app.get(
    "/parcels/<tenant>/<parcel_id>/eru",
    summary="The parcel's ERU, its breakdown and history",
    tags=["stormwater"],
    responses=READ_ERRORS,
)
def get_eru(tenant: TenantPath, parcel_id: ParcelPath) -> dict[str, Any]:
    _owner_or_staff(tenant, parcel_id)
    view: dict[str, Any] = _service().eru_view(tenant, parcel_id)
    view["credits"] = [as_document(c) for c in _service().credits(tenant, parcel_id)]
    view["reconsiderations"] = [as_document(r) for r in _service().reconsiderations(tenant, parcel_id)]
    view["appeals"] = [as_document(a) for a in _service().appeals(tenant, parcel_id)]
    return _jsonable(view)


@app.post(
    "/parcels/<tenant>/<parcel_id>/credits",
    summary="File a stormwater credit application (PP-CWU-CREDIT; the review fee is charged)",
    tags=["stormwater"],
    responses=ERRORS,
)
def post_credit(
    tenant: TenantPath, parcel_id: ParcelPath, body: Annotated[CreditApplication, Body()]
) -> dict[str, Any]:
    _owner_or_staff(tenant, parcel_id)
    credit = _service().apply_for_credit(tenant, parcel_id, Documentation(**body.model_dump()))
    return dict(as_document(credit))


@app.post(
    "/parcels/<tenant>/<parcel_id>/reconsiderations",
    summary="File a written request for reconsideration (PP-CWU-RECONSIDER)",
    tags=["stormwater"],
    responses=ERRORS,
)
def post_reconsideration(
    tenant: TenantPath, parcel_id: ParcelPath, body: Annotated[ReconsiderationRequest, Body()]
) -> dict[str, Any]:
    _owner_or_staff(tenant, parcel_id)
    return dict(as_document(_service().file_reconsideration(tenant, parcel_id, body.model_dump())))


@app.post(
    "/parcels/<tenant>/<parcel_id>/appeals",
    summary="Appeal a reconsideration decision to the Village Board (PP-CWU-APPEAL; fee charged)",
    tags=["stormwater"],
    responses=ERRORS,
)
def post_appeal(
    tenant: TenantPath, parcel_id: ParcelPath, body: Annotated[AppealRequest, Body()]
) -> dict[str, Any]:
    _owner_or_staff(tenant, parcel_id)
    return dict(as_document(_service().file_appeal(tenant, parcel_id, body.model_dump())))


# --- staff routes -------------------------------------------------------------------------------------
@app.post(
    "/staff/<tenant>/parcels/<parcel_id>/overrides",
    summary="The Engineer's manual override of a parcel's data, with its reason (PP-CWU-DATA)",
    tags=["stormwater staff"],
    responses=ERRORS,
)
def post_override(
    tenant: TenantPath, parcel_id: ParcelPath, body: Annotated[OverrideRequest, Body()]
) -> dict[str, Any]:
    engineer = _staff(tenant)
    return _jsonable(_service().override(tenant, parcel_id, body.fields, body.reason, engineer))


@app.post(
    "/staff/<tenant>/parcels/<parcel_id>/applications",
    summary="Record a service application at building permit or site plan review (PP-CWU-APPLICATION)",
    tags=["stormwater staff"],
    responses=ERRORS,
)
def post_application(
    tenant: TenantPath, parcel_id: ParcelPath, body: Annotated[ServiceApplication, Body()]
) -> dict[str, Any]:
    _staff(tenant)
    return _jsonable(_service().record_application(tenant, parcel_id, body.model_dump()))


@app.post(
    "/staff/<tenant>/parcels/<parcel_id>/credits/<credit_id>/review",
    summary="Start the review of a credit application",
    tags=["stormwater staff"],
    responses=ERRORS,
)
def post_credit_review(tenant: TenantPath, parcel_id: ParcelPath, credit_id: IdPath) -> dict[str, Any]:
    _staff(tenant)
    return dict(as_document(_service().credit_action(tenant, parcel_id, credit_id, "review", {})))


@app.post(
    "/staff/<tenant>/parcels/<parcel_id>/credits/<credit_id>/decision",
    summary="Approve (with the TSS removal percent) or deny a credit, effective today",
    tags=["stormwater staff"],
    responses=ERRORS,
)
def post_credit_decision(
    tenant: TenantPath, parcel_id: ParcelPath, credit_id: IdPath, body: Annotated[CreditDecision, Body()]
) -> dict[str, Any]:
    _staff(tenant)
    action = "approve" if body.decision == "approve" else "deny"
    credit = _service().credit_action(tenant, parcel_id, credit_id, action, body.model_dump())
    return dict(as_document(credit))


@app.post(
    "/staff/<tenant>/parcels/<parcel_id>/credits/<credit_id>/inspections",
    summary="Record an inspection of a credited practice",
    tags=["stormwater staff"],
    responses=ERRORS,
)
def post_credit_inspection(
    tenant: TenantPath, parcel_id: ParcelPath, credit_id: IdPath, body: Annotated[InspectionRecord, Body()]
) -> dict[str, Any]:
    _staff(tenant)
    return dict(as_document(_service().inspect_credit(tenant, parcel_id, credit_id, body.model_dump())))


@app.post(
    "/staff/<tenant>/parcels/<parcel_id>/credits/<credit_id>/revocation",
    summary="Revoke a credit after written notice at least 30 days ahead (PP-CWU-CREDIT-REVOKE)",
    tags=["stormwater staff"],
    responses=ERRORS,
)
def post_credit_revocation(
    tenant: TenantPath, parcel_id: ParcelPath, credit_id: IdPath, body: Annotated[CreditRevocation, Body()]
) -> dict[str, Any]:
    _staff(tenant)
    credit = _service().credit_action(tenant, parcel_id, credit_id, "revoke", body.model_dump())
    return dict(as_document(credit))


@app.post(
    "/staff/<tenant>/parcels/<parcel_id>/reconsiderations/<reconsideration_id>/decision",
    summary="The Engineer's decision on a reconsideration (no change unless over 10%)",
    tags=["stormwater staff"],
    responses=ERRORS,
)
def post_reconsideration_decision(
    tenant: TenantPath,
    parcel_id: ParcelPath,
    reconsideration_id: IdPath,
    body: Annotated[ReconsiderationDecision, Body()],
) -> dict[str, Any]:
    _staff(tenant)
    decided = _service().decide_reconsideration(tenant, parcel_id, reconsideration_id, body.model_dump())
    return dict(as_document(decided))


@app.post(
    "/staff/<tenant>/parcels/<parcel_id>/appeals/<appeal_id>/hearing",
    summary="Record the Village Board's hearing and vote on an appeal (majority to reverse)",
    tags=["stormwater staff"],
    responses=ERRORS,
)
def post_hearing(
    tenant: TenantPath, parcel_id: ParcelPath, appeal_id: IdPath, body: Annotated[HearingRecord, Body()]
) -> dict[str, Any]:
    _staff(tenant)
    return dict(as_document(_service().record_hearing(tenant, parcel_id, appeal_id, body.model_dump())))


def _jsonable(value: Any) -> dict[str, Any]:
    import json

    return dict(json.loads(json.dumps(value, default=str)))


@observed(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)
