"""What billing's routers share: the caller's token checked, a known tenant, path and query types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter, Router
from pydantic import BaseModel as BaseModel
from pydantic import Field

from billing import composition
from billing.app import readmodels as readmodels
from common.authz import Caller, require
from common.http import ApiError
from common.http import error_responses as error_responses


def requirer(router: Router) -> Callable[..., Caller]:
    """The check of ``router``'s caller: CONTRACTS.md tokens (``common.authz``): ``role`` and
    ``tenants``; a customer only its ``accounts``."""

    def _require(
        tenant: str, *, roles: tuple[str, ...] = ("staff",), account_id: str | None = None
    ) -> Caller:
        return require(router.current_event.raw_event, tenant, roles=roles, account_id=account_id)

    return _require


def checked_router() -> tuple[APIGatewayHttpRouter, Callable[..., Caller]]:
    """A router of billing's staff routes with its caller's check (:func:`requirer`), so each
    routes module starts the same way in one line. ``BaseModel``, ``readmodels`` and
    ``error_responses`` are re-exported here for those modules."""
    router = APIGatewayHttpRouter()
    return router, requirer(router)


def known_tenant(tenant: str) -> None:
    if tenant not in composition.tariff_book().tenants:
        raise ApiError(404, "unknown_tenant", f"tenant: no tenant {tenant!r}")


Limit = Annotated[int | None, Query(ge=1, le=1000, description="Page size; without it, everything")]
Cursor = Annotated[str | None, Query(pattern=r"^[0-9]{1,9}$", description="next_cursor of the previous page")]
TenantPath = Annotated[str, Path(description="Tenant id, e.g. grafton-sewer", max_length=64)]
AccountPath = Annotated[str, Path(description="Account id", max_length=64, pattern=r"^[^#]+$")]


# A non-negative decimal string of gallons: up to twelve digits, up to three places. The
# pattern is in the OpenAPI document, so a schema-valid figure is never refused.
GALLONS_PATTERN = r"^(0|[1-9][0-9]{0,11})(\.[0-9]{1,3})?$"
Gallons = Field(pattern=GALLONS_PATTERN, max_length=16, examples=["23000"])
Text = Field(min_length=1, max_length=200)
IdText = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")
