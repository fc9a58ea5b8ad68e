"""Staff routes under ``/staff/{tenant}/parcels/{parcel_id}/``: overrides, service applications,
credit review, decision, inspections and revocation, reconsideration decisions and hearings.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from stormwater.handlers.routes.common import (
    ERRORS,
    Body,
    Field,
    IdPath,
    ParcelPath,
    TenantPath,
    _Body,
    _jsonable,
    _service,
    as_document,
    checked_router,
)

router, _staff, _owner_or_staff = checked_router()


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


@router.post(
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


@router.post(
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


@router.post(
    "/staff/<tenant>/parcels/<parcel_id>/credits/<credit_id>/review",
    summary="Start the review of a credit application",
    tags=["stormwater staff"],
    responses=ERRORS,
)
def post_credit_review(tenant: TenantPath, parcel_id: ParcelPath, credit_id: IdPath) -> dict[str, Any]:
    _staff(tenant)
    return dict(as_document(_service().credit_action(tenant, parcel_id, credit_id, "review", {})))


@router.post(
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


@router.post(
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


@router.post(
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


@router.post(
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


@router.post(
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
