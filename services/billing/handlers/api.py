"""Billing's portal routes (HTTP API with the PortalJwt authorizer; see template.yaml).

``app`` is the resolver, so the OpenAPI document is generated from this code
(``common.openapi``). Bill, ledger and payment routes come with their issues.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.logging import correlation_paths
from pydantic import BaseModel

from billing import composition
from common.http import ApiError, error_responses, install_error_handlers
from common.observability import observed
from common.openapi import PUBLIC_EXTENSION
from common.tariffs import TariffNotInForce, UnknownTenant

app = APIGatewayHttpResolver(enable_validation=True)
install_error_handlers(app)


class Health(BaseModel):
    status: str


class TariffVersion(BaseModel):
    tenant: str
    version: str
    effective_from: date
    effective_until: date | None
    billing_period_months: int
    tariff: dict[str, Any]


@app.get("/health", summary="Liveness check", tags=["health"], openapi_extensions={PUBLIC_EXTENSION: True})
def health() -> Health:
    return Health(status="ok")


@app.get(
    "/tariffs/<tenant>",
    summary="The tariff version in force for a tenant on a date",
    tags=["tariffs"],
    responses={200: {"description": "The tariff version in force"}, **error_responses(400, 401, 404)},
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


@observed(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)
