"""Staff preview route: one account's bill for a what-if consumption."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel, ConfigDict, Field

from billing import composition
from billing.app.preview import PreviewRefused, preview_bill
from billing.handlers.routes.common import (
    GALLONS_PATTERN,
    AccountPath,
    TenantPath,
    known_tenant,
    requirer,
)
from common.http import ApiError, error_responses

router = APIGatewayHttpRouter()
_require = requirer(router)


class PreviewIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    period_start: date
    period_end: date
    water_gallons: str | None = Field(
        default=None, pattern=GALLONS_PATTERN, max_length=16, examples=["23000"]
    )


@router.post(
    "/staff/<tenant>/accounts/<account_id>/preview",
    summary="The bill an account would get for a period and volume, writing nothing",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_preview(tenant: TenantPath, account_id: AccountPath, preview: PreviewIn) -> dict[str, Any]:
    known_tenant(tenant)
    _require(tenant)
    gallons = None if preview.water_gallons is None else Decimal(preview.water_gallons)
    try:
        return preview_bill(
            tenant,
            account_id,
            preview.period_start,
            preview.period_end,
            gallons,
            repo=composition.repo(),
            book=composition.tariff_book(),
        )
    except PreviewRefused as exc:
        status = 404 if str(exc).startswith("account_id") else 400
        raise ApiError(status, "preview_refused", str(exc)) from None
