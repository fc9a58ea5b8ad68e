"""Staff adjustment routes: a correction posted to an account."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel, ConfigDict, Field

from billing import composition
from billing.app.adjustments import AdjustmentRefused, post_adjustment
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


@router.post(
    "/staff/<tenant>/accounts/<account_id>/adjustments",
    summary="A credit or debit memo on a bill (X-IMMUTABLE), with reason and approver",
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
        )
    except AdjustmentRefused as exc:
        status = 404 if str(exc).startswith("bill_id") else 409
        raise ApiError(status, "adjustment_refused", str(exc)) from None
