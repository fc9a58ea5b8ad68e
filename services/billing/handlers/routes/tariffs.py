"""Tariff routes: the tariff version in force for a tenant on a date."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel

from billing import composition
from billing.handlers.routes.common import (
    requirer,
)
from common.http import ApiError, error_responses
from common.tariffs import TariffNotInForce, UnknownTenant

router = APIGatewayHttpRouter()
_require = requirer(router)


class TariffVersion(BaseModel):
    tenant: str
    version: str
    effective_from: date
    effective_until: date | None
    billing_period_months: int
    tariff: dict[str, Any]


@router.get(
    "/tariffs/<tenant>",
    summary="The tariff version in force for a tenant on a date",
    tags=["tariffs"],
    responses={**error_responses(400, 401, 404), 200: {"description": "The tariff version in force"}},
)
def get_tariff(
    tenant: Annotated[str, Path(description="Tenant id, e.g. grafton-sewer")],
    on: Annotated[date, Query(description="The date (YYYY-MM-DD) the version must be in force on")],
) -> TariffVersion:
    try:
        tariff = composition.tariff_book().in_force(tenant, on)
    except UnknownTenant:
        raise ApiError(404, "unknown_tenant", f"tenant: no tenant {tenant!r}") from None
    except TariffNotInForce as exc:
        raise ApiError(404, "tariff_not_in_force", f"on: {exc}") from None
    return TariffVersion(
        tenant=tariff.tenant,
        version=tariff.version_id,
        effective_from=tariff.effective_from,
        effective_until=tariff.effective_until,
        billing_period_months=tariff.billing_period_months,
        tariff=tariff.model_dump(mode="json"),
    )
