"""Staff tax-roll route: the arrears noticed for a year's tax roll and their certification."""

from __future__ import annotations

from typing import Annotated, Any

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
from common.http import ApiError, error_responses

router = APIGatewayHttpRouter()
_require = requirer(router)


class TaxRollList(BaseModel):
    noticed_on: str
    certified_on: str | None
    entries: list[dict[str, Any]]
    next_cursor: str | None


@router.get(
    "/staff/<tenant>/tax-roll/<year>",
    summary="The year's tax-roll list (X-TAXROLL): noticed, then certified",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_tax_roll(
    tenant: TenantPath,
    year: Annotated[int, Path(ge=2000, le=2200)],
    limit: Limit = None,
    cursor: Cursor = None,
) -> TaxRollList:
    known_tenant(tenant)
    _require(tenant)
    found = readmodels.tax_roll(composition.repo(), tenant, year)
    if found is None:
        raise ApiError(404, "not_noticed", f"year: no tax-roll notice for {tenant} in {year}")
    items, nxt = readmodels.page(found["entries"], limit, cursor)
    return TaxRollList(
        noticed_on=found["noticed_on"], certified_on=found["certified_on"], entries=items, next_cursor=nxt
    )
