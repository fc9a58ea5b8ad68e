"""Stormwater's portal routes (HTTP API, PortalJwt authorizer; see template.yaml).

Owner routes (``/parcels/{tenant}/{parcel_id}/...``): the parcel's owner (role ``owner`` with
the tenant in ``tenants`` and the parcel in ``parcels``) or the tenant's staff. Staff routes
(``/staff/{tenant}/...``): role ``staff`` with the tenant. Each route parses, calls one use
case and answers; rule refusals are 400 naming the field, state conflicts 409. The routes
live in routers under ``routes/`` (a route is found by its path), included here in order.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.logging import correlation_paths

from common.errors import FieldError, TransientError
from common.http import install_error_handlers
from common.observability import observed
from stormwater.app.service import NotFound
from stormwater.domain.credits import CreditConflict
from stormwater.domain.reconsiderations import BillNotKnown, ReconsiderationConflict
from stormwater.handlers.routes import owners, pending, staff

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

# In this order the resolver's routes, and so its OpenAPI paths, stand as they did when
# they were one module.
ROUTERS = (pending, owners, staff)
for _routes in ROUTERS:
    app.include_router(_routes.router)


@observed(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)
