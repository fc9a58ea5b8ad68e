"""Counter receipting routes (issue 33): a payment taken at the counter and its receipt, and
the day's drawer by clerk and tender (JSON or spreadsheet-safe CSV for the deposit)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from pydantic import BaseModel, ConfigDict, Field

from billing import composition
from billing.app import receipts
from billing.app.payments import PaymentConflict
from billing.handlers.routes.common import AccountPath, TenantPath, checked_router, known_tenant
from common.clock import RuntimeClock
from common.http import ApiError, error_responses

router, _require = checked_router()

# Dollars and cents above zero, below ten million (PaymentIn's rule: a refund is an adjustment).
AMOUNT_PATTERN = r"^([1-9][0-9]{0,6}(\.[0-9]{1,2})?|0\.(0[1-9]|[1-9][0-9]?))$"
REF_PATTERN = r"^R-[0-9]{8}-[0-9A-F]{8}$"


class ReceiptIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    amount: str = Field(pattern=AMOUNT_PATTERN, max_length=10, examples=["68.00"])
    tender: Literal["cash", "check", "card"]
    check_number: str | None = Field(default=None, min_length=1, max_length=20, pattern=r"^[0-9A-Za-z-]+$")
    card_reference: str | None = Field(
        default=None, min_length=1, max_length=40, pattern=r"^[0-9A-Za-z_.:-]+$"
    )
    receipt_key: str = Field(
        min_length=8,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="The client's key for this receipt: the same clerk's key again posts nothing more",
    )


def _tender_fields(body: ReceiptIn) -> None:
    """A check carries its number, a card its reference, cash neither (each error names its field)."""
    if body.tender == "check" and body.check_number is None:
        raise ApiError(400, "invalid_request", "check_number: is required for a check")
    if body.tender != "check" and body.check_number is not None:
        raise ApiError(400, "invalid_request", f"check_number: is only for a check, not {body.tender}")
    if body.tender == "card" and body.card_reference is None:
        raise ApiError(400, "invalid_request", "card_reference: is required for a card payment")
    if body.tender != "card" and body.card_reference is not None:
        raise ApiError(
            400, "invalid_request", f"card_reference: is only for a card payment, not {body.tender}"
        )


@router.post(
    "/staff/<tenant>/accounts/<account_id>/receipts",
    summary=(
        "Take a payment at the counter (cash, check with its number, card with its reference) and"
        " keep its receipt; idempotent by the clerk's receipt_key (a re-sent request posts once)"
    ),
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def staff_post_receipt(tenant: TenantPath, account_id: AccountPath, body: ReceiptIn) -> dict[str, Any]:
    known_tenant(tenant)
    caller = _require(tenant)
    _tender_fields(body)
    try:
        return receipts.post_receipt(
            tenant,
            account_id,
            Decimal(body.amount),
            tender=body.tender,
            check_number=body.check_number,
            card_reference=body.card_reference,
            key=body.receipt_key,
            clerk=caller.sub,
            repo=composition.repo(),
            book=composition.tariff_book(),
            now=RuntimeClock().now(),
        )
    except receipts.UnknownAccount as exc:
        raise ApiError(404, "unknown_account", str(exc)) from None
    except PaymentConflict as exc:
        raise ApiError(409, "idempotency_key_reused", f"receipt_key: {exc}") from None


@router.get(
    "/staff/<tenant>/receipts/<ref>",
    summary="A receipt by its reference (the printable receipt page's figures)",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_receipt(
    tenant: TenantPath,
    ref: Annotated[str, Path(pattern=REF_PATTERN, max_length=19, description="e.g. R-20250201-7F3A2C91")],
) -> dict[str, Any]:
    known_tenant(tenant)
    _require(tenant)
    try:
        return receipts.receipt_of(composition.repo(), tenant, ref)
    except receipts.NoSuchReceipt as exc:
        raise ApiError(404, "unknown_receipt", str(exc)) from None


DRAWER_CONTENT: dict[str, Any] = {
    "application/json": {"schema": {"type": "object", "required": ["day", "receipts", "total"]}},
    "text/csv": {"schema": {"type": "string"}},
}


@router.get(
    "/staff/<tenant>/drawer/<day>",
    summary=(
        "Close the drawer: a day's receipts (every clerk's, or clerk=), with totals by clerk and"
        " tender, as JSON or as a spreadsheet-safe CSV for the deposit (format=csv)"
    ),
    tags=["staff"],
    responses={
        **error_responses(400, 401, 403, 404),
        200: {"description": "The drawer", "content": DRAWER_CONTENT},
    },
)
def staff_drawer(
    tenant: TenantPath,
    day: Annotated[date, Path(description="The utility's day, YYYY-MM-DD")],
    clerk: Annotated[
        str | None, Query(min_length=1, max_length=128, description="One clerk's (token sub)")
    ] = None,
    format: Annotated[str, Query(pattern=r"^(json|csv)$")] = "json",  # noqa: A002
) -> Response[str]:
    import json

    known_tenant(tenant)
    _require(tenant)
    close = receipts.drawer(composition.repo(), tenant, day, clerk=clerk)
    if format == "csv":
        return Response(
            200,
            "text/csv",
            receipts.drawer_csv(close),
            headers={"content-disposition": f'attachment; filename="drawer-{tenant}-{day.isoformat()}.csv"'},
        )
    return Response(200, "application/json", json.dumps(close))
