"""Staff septage routes: hauler permits and disposals (issue 14)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel, ConfigDict, Field

from billing import composition
from billing.app.septage import SeptageConflict, record_disposal, register_permit, septage_permit
from billing.domain import septage
from billing.handlers.routes.common import (
    Gallons,
    IdText,
    TenantPath,
    Text,
    known_tenant,
    requirer,
)
from common.clock import RuntimeClock
from common.http import ApiError, error_responses
from common.tariffs import TariffNotInForce

router = APIGatewayHttpRouter()
_require = requirer(router)


class UnitIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    make: str = Text
    model: str = Text
    licence_number: str = IdText


class PermitIn(BaseModel):
    """GR-SEPTAGE-PERMIT; the insurance amount is a decimal string of dollars and cents."""

    model_config = ConfigDict(extra="forbid")

    permit_id: str = IdText
    name: str = Text
    address: str = Field(min_length=1, max_length=500)
    units: list[UnitIn] = Field(min_length=1, max_length=100)
    insurance_amount: str = Field(
        pattern=r"^[0-9]{1,12}(\.[0-9]{1,2})?$", max_length=15, examples=["250000.00"]
    )
    account_id: str | None = Field(default=None, max_length=64, pattern=r"^[^#]+$")


def _septage_tenant(tenant: str) -> None:
    """Septage haulers are Grafton's (GR-SEPTAGE-PERMIT); other tenants have none."""
    known_tenant(tenant)
    if tenant != septage.TENANT:
        raise ApiError(
            404, "no_septage", f"tenant: {tenant} has no septage hauler permits (GR-SEPTAGE-PERMIT)"
        )


@router.post(
    "/staff/<tenant>/septage/permits",
    summary="GR-SEPTAGE-PERMIT: register a septage hauler permit (idempotent by permit_id)",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def staff_register_permit(tenant: TenantPath, permit: PermitIn) -> dict[str, Any]:
    _septage_tenant(tenant)
    _require(tenant)
    record = septage.Permit(
        permit_id=permit.permit_id,
        name=permit.name,
        address=permit.address,
        units=tuple(septage.Unit(u.make, u.model, u.licence_number) for u in permit.units),
        insurance_amount=Decimal(permit.insurance_amount),
        account_id=permit.account_id,
    )
    try:
        return register_permit(record, repo=composition.repo(), now=RuntimeClock().now())
    except septage.SeptageRefused as exc:
        raise ApiError(400, "permit_refused", str(exc)) from None
    except SeptageConflict as exc:
        raise ApiError(409, "permit_id_reused", str(exc)) from None


@router.get(
    "/staff/<tenant>/septage/permits/<permit_id>",
    summary="GR-SEPTAGE-PERMIT: a septage hauler permit",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_permit(
    tenant: TenantPath,
    permit_id: Annotated[str, Path(max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")],
) -> dict[str, Any]:
    _septage_tenant(tenant)
    _require(tenant)
    found = septage_permit(permit_id, repo=composition.repo())
    if found is None:
        raise ApiError(404, "unknown_permit", f"permit_id: no septage hauler permit {permit_id!r}")
    return found.to_json()


class DisposalIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    permit_id: str = IdText
    licence_number: str = IdText
    gallons: str = Gallons
    disposed_on: date
    reference: str = IdText


@router.post(
    "/staff/<tenant>/septage/disposals",
    summary="GR-SEPTAGE-CHARGE: charge a permitted hauler's disposal (idempotent by reference)",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def staff_disposal(tenant: TenantPath, disposal: DisposalIn) -> dict[str, Any]:
    _septage_tenant(tenant)
    _require(tenant)
    record = septage.Disposal(
        disposal.reference,
        disposal.permit_id,
        disposal.licence_number,
        Decimal(disposal.gallons),
        disposal.disposed_on,
    )
    try:
        return record_disposal(
            record, repo=composition.repo(), book=composition.tariff_book(), now=RuntimeClock().now()
        )
    except septage.SeptageRefused as exc:
        raise ApiError(400, "disposal_refused", str(exc)) from None
    except TariffNotInForce as exc:
        raise ApiError(400, "tariff_not_in_force", f"disposed_on: {exc}") from None
    except SeptageConflict as exc:
        raise ApiError(409, "reference_reused", str(exc)) from None
