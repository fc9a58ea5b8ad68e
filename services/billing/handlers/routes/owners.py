"""Owner routes: a parcel's bills and their paid status."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel

from billing import composition
from billing.app import readmodels
from billing.handlers.routes.common import (
    Cursor,
    Limit,
    TenantPath,
    known_tenant,
    requirer,
)
from common.authz import require
from common.http import error_responses

router = APIGatewayHttpRouter()
_require = requirer(router)


class OwnerBill(BaseModel):
    period: dict[str, str]
    due_date: str
    total: str
    paid: bool


class OwnerBillsPage(BaseModel):
    parcel_id: str
    bills: list[OwnerBill]
    next_cursor: str | None


@router.get(
    "/owners/<tenant>/parcels/<parcel_id>/bills",
    summary="PP-CWU-BILLING: whether the charges on an owner's rental parcel were paid",
    tags=["owners"],
    responses=error_responses(400, 401, 403, 404),
)
def owner_bills(
    tenant: TenantPath,
    parcel_id: Annotated[str, Path(description="Parcel id", max_length=64, pattern=r"^[^#]+$")],
    limit: Limit = None,
    cursor: Cursor = None,
) -> OwnerBillsPage:
    known_tenant(tenant)
    require(router.current_event.raw_event, tenant, roles=("staff", "owner"), parcel_id=parcel_id)
    items, nxt = readmodels.page(readmodels.owner_bills(composition.repo(), tenant, parcel_id), limit, cursor)
    return OwnerBillsPage(parcel_id=parcel_id, bills=[OwnerBill(**b) for b in items], next_cursor=nxt)
