"""Owner (or staff) routes under ``/parcels/{tenant}/{parcel_id}/``: the ERU, credit applications,
reconsiderations and appeals.
"""

from __future__ import annotations

from typing import Annotated, Any

from stormwater.domain.credits import Documentation
from stormwater.handlers.routes.common import (
    ERRORS,
    READ_ERRORS,
    Body,
    Field,
    ParcelPath,
    TenantPath,
    _Body,
    _jsonable,
    _service,
    as_document,
    checked_router,
)

router, _staff, _owner_or_staff = checked_router()


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


@router.get(
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


@router.post(
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


@router.post(
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


@router.post(
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
