"""Staff re-rating routes: the re-ratings refused (X-IMMUTABLE)."""

from __future__ import annotations

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
from common.http import error_responses

router = APIGatewayHttpRouter()
_require = requirer(router)


class RerateRefused(BaseModel):
    bill_id: str
    account_id: str
    from_volume_gal: str | None
    to_volume_gal: str | None
    source_event_id: str
    reason: str
    rule_id: str
    recorded_at: str | None


class RerateRefusedPage(BaseModel):
    refused: list[RerateRefused]
    next_cursor: str | None


@router.get(
    "/staff/<tenant>/rerating/refused",
    summary="X-IMMUTABLE: billed periods whose corrected consumption could not be rated again, with why",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_rerate_refused(tenant: TenantPath, limit: Limit = None, cursor: Cursor = None) -> RerateRefusedPage:
    known_tenant(tenant)
    _require(tenant)
    items, nxt = readmodels.page(readmodels.rerate_refused(composition.repo(), tenant), limit, cursor)
    return RerateRefusedPage(refused=[RerateRefused(**i) for i in items], next_cursor=nxt)
