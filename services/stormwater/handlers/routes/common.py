"""What stormwater's routers share: the caller's checks, path types, error responses, the service."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Body as Body
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter, Router
from pydantic import BaseModel, ConfigDict
from pydantic import Field as Field

from common.authz import caller, require
from common.http import ApiError, error_responses
from stormwater import composition
from stormwater.app.service import as_document as as_document

TenantPath = Annotated[str, Path(description="Tenant id, e.g. pleasant-prairie-stormwater", max_length=100)]
ParcelPath = Annotated[str, Path(description="Parcel id", max_length=200)]
IdPath = Annotated[str, Path(description="Record id", max_length=100)]


# Writes may meet a conflict (a decision already taken, a concurrent change): 409.
ERRORS = error_responses(400, 401, 403, 404, 409)
READ_ERRORS = error_responses(400, 401, 403, 404)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _service() -> Any:
    return composition.service()


def _jsonable(value: Any) -> dict[str, Any]:
    import json

    return dict(json.loads(json.dumps(value, default=str)))


def staff_check(router: Router) -> Callable[[str], str]:
    """The check of a staff route of ``router``: role ``staff`` with the tenant; the caller's id."""

    def _staff(tenant: str) -> str:
        return require(router.current_event.raw_event, tenant).sub or "staff"

    return _staff


def owner_or_staff_check(router: Router) -> Callable[[str, str], str]:
    """The check of an owner route of ``router``: the parcel's owner or the tenant's staff."""

    def _owner_or_staff(tenant: str, parcel_id: str) -> str:
        who = caller(router.current_event.raw_event)
        in_tenant = tenant in who.tenants
        if who.role == "staff" and in_tenant:
            return "staff"
        # A customer whose token names the parcel (an owner-occupant) may act on it as its owner.
        if who.role in ("owner", "customer") and in_tenant and parcel_id in who.parcels:
            return "owner"
        raise ApiError(
            403, "forbidden", f"parcel_id: only the owner of parcel {parcel_id} or {tenant} staff may do this"
        )

    return _owner_or_staff


def checked_router() -> tuple[APIGatewayHttpRouter, Callable[[str], str], Callable[[str, str], str]]:
    """A router of stormwater's routes with its two caller checks (:func:`staff_check`,
    :func:`owner_or_staff_check`), so each routes module starts the same way in one line.
    ``Body``, ``Field`` and ``as_document`` are re-exported here for those modules."""
    router = APIGatewayHttpRouter()
    return router, staff_check(router), owner_or_staff_check(router)
