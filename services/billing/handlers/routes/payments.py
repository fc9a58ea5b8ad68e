"""Payment route: a payment posted by staff or a customer, idempotent by its caller's key."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Header
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel, ConfigDict, Field

from billing import composition
from billing.app.common import local_today
from billing.app.payments import PaymentConflict, post_api_payment
from billing.domain.csvfiles import BadCell
from billing.domain.payments import paid_on_of, parse_amount
from billing.handlers.routes.common import (
    known_tenant,
    requirer,
)
from common import fields
from common.clock import RuntimeClock
from common.http import ApiError, error_responses

router = APIGatewayHttpRouter()
_require = requirer(router)


class PaymentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tenant: str = Field(max_length=64)
    account_id: str = Field(max_length=64, pattern=r"^[^#]+$")
    # A decimal string of dollars and cents above zero, below ten million (the pattern says
    # so in the OpenAPI document, so a schema-valid amount is never refused).
    amount: str = Field(
        pattern=r"^([1-9][0-9]{0,6}(\.[0-9]{1,2})?|0\.(0[1-9]|[1-9][0-9]?))$",
        max_length=10,
        examples=["68.00"],
    )
    paid_on: date | None = Field(
        default=None,
        description=(
            "The day the payment was received (the utility's date; omitted: today). Never after"
            " today nor before the tenant's first tariff version; only staff give an earlier day (X-DUE: a payment counts on this date, and"
            " one dated before a late charge reverses it), a customer's is dated the day it is made."
        ),
    )


class PaymentOut(BaseModel):
    reference: str
    tenant: str
    account_id: str
    amount: str
    paid_on: date
    suspense: bool
    replayed: bool


@router.post(
    "/payments",
    summary="Post a payment; idempotent by the caller's Idempotency-Key header",
    description=(
        "A key is unique per caller (the token's subject) and route: another caller's same key is"
        " another payment. The same caller's key with the same body replays the first result;"
        " with another body it is a 409 naming only that caller's own earlier request."
    ),
    tags=["payments"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def post_payment(
    payment: PaymentIn,
    idempotency_key: Annotated[
        str, Header(alias="idempotency-key", min_length=8, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")
    ],
) -> PaymentOut:
    known_tenant(payment.tenant)
    caller = _require(payment.tenant, roles=("staff", "customer"), account_id=payment.account_id)
    now = RuntimeClock().now()
    today = local_today(now)
    # X-DUE: a payment counts on its paid_on date for every cut-off, and one dated before a
    # late charge or penalty reverses it. So only staff may date a payment earlier (a check
    # received by mail); a customer's is dated the day it is made, and none is dated ahead.
    if payment.paid_on is not None and payment.paid_on > today:
        raise ApiError(400, "invalid_request", f"paid_on: {payment.paid_on} is after today ({today})")
    # The lockbox file's rules for the same fields (issue 27): a safe account id, a date
    # not before the tenant's first tariff version, an amount in cents.
    book = composition.tariff_book()
    try:
        fields.identifier("account_id", payment.account_id)
        paid_on_of(
            (payment.paid_on or today).isoformat(),
            payment.tenant,
            today,
            {payment.tenant: book.first_effective(payment.tenant)},
        )
        parse_amount(payment.amount)
    except fields.BadField as exc:
        raise ApiError(400, "invalid_request", str(exc)) from None
    except BadCell as exc:
        raise ApiError(400, "invalid_request", f"{exc.column}: {exc.reason}") from None
    if payment.paid_on not in (None, today) and caller.role != "staff":
        raise ApiError(
            400,
            "invalid_request",
            f"paid_on: a customer's payment is dated the day it is made ({today}); only staff date one earlier",
        )
    try:
        result = post_api_payment(
            payment.tenant,
            payment.account_id,
            Decimal(payment.amount),
            payment.paid_on or today,
            idempotency_key,
            caller=caller.sub,
            repo=composition.repo(),
            now=now,
            given_paid_on=payment.paid_on is not None,
            book=book,
        )
    except PaymentConflict as exc:
        raise ApiError(409, "idempotency_key_reused", f"idempotency-key: {exc}") from None
    return PaymentOut(**result)
