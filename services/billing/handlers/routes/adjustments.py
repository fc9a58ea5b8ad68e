"""Staff adjustment routes: a correction posted to an account."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel, ConfigDict, Field

from billing import composition
from billing.app.adjustments import AdjustmentInvalid, AdjustmentRefused, post_adjustment
from billing.app.common import local_today
from billing.handlers.routes.common import (
    AccountPath,
    TenantPath,
    known_tenant,
    requirer,
)
from common.clock import RuntimeClock
from common.http import ApiError, error_responses

router = APIGatewayHttpRouter()
_require = requirer(router)


class ChargeBasis(BaseModel):
    """What a charge under a rule stands on (GR-TOXIC: the pollutant, the added cost it
    caused, equal to the memo's amount, and the document that shows that cost)."""

    model_config = ConfigDict(extra="forbid")

    pollutant: str = Field(min_length=1, max_length=200, examples=["cadmium"])
    added_cost: str = Field(pattern=r"^[0-9]{1,7}(\.[0-9]{1,2})?$", max_length=10, examples=["1840.00"])
    document: str = Field(min_length=1, max_length=300, examples=["WWTP invoice 2026-114"])
    note: str | None = Field(default=None, max_length=500)


class AdjustmentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bill_id: str = Field(max_length=140)
    # A decimal string of dollars and cents, non-zero, below ten million either way: a debit
    # memo positive, a credit memo negative. The pattern says so in the OpenAPI document, so a
    # schema-valid amount is never refused.
    amount: str = Field(
        pattern=r"^-?([1-9][0-9]{0,6}(\.[0-9]{1,2})?|0\.(0[1-9]|[1-9][0-9]?))$",
        max_length=11,
        examples=["-12.50"],
    )
    reason: str = Field(min_length=3, max_length=500)
    approver: str = Field(min_length=1, max_length=100)
    reference: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")
    # A debit memo charged under a rule of the tenant's ordinance that staff may charge
    # under (GR-TOXIC for grafton-sewer), with its basis; absent: a plain correction.
    rule_id: str | None = Field(
        default=None, max_length=40, pattern=r"^[A-Z]+(-[A-Z0-9]+)+$", examples=["GR-TOXIC"]
    )
    basis: ChargeBasis | None = None


@router.post(
    "/staff/<tenant>/accounts/<account_id>/adjustments",
    summary="A credit or debit memo on a bill (X-IMMUTABLE), with reason and approver",
    description="A debit memo may charge under a rule of the ordinance (GR-TOXIC) with its basis.",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def staff_adjustment(tenant: TenantPath, account_id: AccountPath, adjustment: AdjustmentIn) -> dict[str, Any]:
    known_tenant(tenant)
    _require(tenant)
    now = RuntimeClock().now()
    try:
        return post_adjustment(
            tenant,
            account_id,
            adjustment.bill_id,
            Decimal(adjustment.amount),
            adjustment.reason,
            adjustment.approver,
            adjustment.reference,
            local_today(now),
            repo=composition.repo(),
            now=now,
            rule_id=adjustment.rule_id,
            basis=None if adjustment.basis is None else adjustment.basis.model_dump(exclude_none=True),
        )
    except AdjustmentInvalid as exc:
        raise ApiError(400, "invalid_request", str(exc)) from None
    except AdjustmentRefused as exc:
        status = 404 if str(exc).startswith("bill_id") else 409
        raise ApiError(status, "adjustment_refused", str(exc)) from None
