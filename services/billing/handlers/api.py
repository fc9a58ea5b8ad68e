"""Billing's portal routes (HTTP API with the PortalJwt authorizer; see template.yaml).

``app`` is the resolver, so the OpenAPI document is generated from this code
(``common.openapi``). Each capability's routes live in a router of its own under
``routes/`` (a route is found by its path); they are included here in a fixed order.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.logging import correlation_paths
from pydantic import BaseModel

from billing.handlers.routes import (
    accounts,
    adjustments,
    arrangements,
    audit,
    bills,
    cycles,
    imports,
    inquiry,
    owners,
    payments,
    preview,
    receipts,
    reports,
    rerating,
    septage,
    tariffs,
    taxroll,
)
from common.http import install_error_handlers
from common.observability import observed
from common.openapi import PUBLIC_EXTENSION

app = APIGatewayHttpResolver(enable_validation=True)
install_error_handlers(app)


class Health(BaseModel):
    status: str


@app.get("/health", summary="Liveness check", tags=["health"], openapi_extensions={PUBLIC_EXTENSION: True})
def health() -> Health:
    return Health(status="ok")


# In this order the resolver's routes, and so its OpenAPI paths, stand as they did when
# they were one module.
ROUTERS = (
    tariffs,
    bills,
    taxroll,
    accounts,
    cycles,
    reports,
    audit,  # issue 30: X-AUDIT
    owners,
    adjustments,
    arrangements,
    rerating,
    preview,
    septage,
    payments,
    inquiry,
    receipts,  # issue 33: the counter and the drawer
    imports,  # issue 33: import exception review
)
for _routes in ROUTERS:
    app.include_router(_routes.router)


@observed(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)
