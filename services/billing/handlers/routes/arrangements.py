"""Staff payment-arrangement routes: made, listed and cancelled (GR-OVERDUE)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Path
from pydantic import ConfigDict, Field

from billing import composition
from billing.app import arrangements
from billing.app.common import local_today
from billing.domain.arrangements import ArrangementRefused
from billing.handlers.routes.common import (
    AccountPath,
    BaseModel,
    Cursor,
    Limit,
    TenantPath,
    checked_router,
    error_responses,
    known_tenant,
    readmodels,
)
from common.clock import RuntimeClock
from common.http import ApiError

router, _require = checked_router()


AMOUNT_PATTERN = r"^([1-9][0-9]{0,6}(\.[0-9]{1,2})?|0\.(0[1-9]|[1-9][0-9]?))$"


ArrangementIdPath = Annotated[str, Path(max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]


class InstalmentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    due_on: date
    # Dollars and cents above zero, below ten million (the pattern is in the OpenAPI document).
    amount: str = Field(pattern=AMOUNT_PATTERN, max_length=10, examples=["50.00"])


class ArrangementIn(BaseModel):
    """A schedule of instalments (each due by its date, oldest first) and an end date."""

    model_config = ConfigDict(extra="forbid")

    arrangement_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")
    instalments: list[InstalmentIn] = Field(min_length=1, max_length=60)
    end_on: date
    approver: str = Field(min_length=1, max_length=100)
    note: str = Field(default="", max_length=500)


class CancelIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    by: str = Field(min_length=1, max_length=100)
    reason: str = Field(min_length=3, max_length=500)


class ArrangementsPage(BaseModel):
    arrangements: list[dict[str, Any]]
    next_cursor: str | None


def _arrangement_error(exc: Exception) -> ApiError:
    if isinstance(exc, arrangements.UnknownArrangement):
        return ApiError(404, "unknown_arrangement", str(exc))
    if isinstance(exc, arrangements.ArrangementConflict):
        return ApiError(409, "arrangement_conflict", str(exc))
    return ApiError(400, "arrangement_refused", str(exc))


@router.post(
    "/staff/<tenant>/accounts/<account_id>/arrangements",
    summary="Make a payment arrangement (GR-OVERDUE): instalments and an end date; idempotent by arrangement_id",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def staff_make_arrangement(
    tenant: TenantPath, account_id: AccountPath, arrangement: ArrangementIn
) -> dict[str, Any]:
    known_tenant(tenant)
    _require(tenant)
    now = RuntimeClock().now()
    try:
        return arrangements.make(
            tenant,
            account_id,
            arrangement.arrangement_id,
            [(i.due_on, Decimal(i.amount)) for i in arrangement.instalments],
            arrangement.end_on,
            arrangement.approver,
            arrangement.note,
            repo=composition.repo(),
            today=local_today(now),
            now=now,
            book=composition.tariff_book(),
        )
    except (ArrangementRefused, arrangements.UnknownArrangement, arrangements.ArrangementConflict) as exc:
        raise _arrangement_error(exc) from None


@router.get(
    "/staff/<tenant>/accounts/<account_id>/arrangements",
    summary="An account's payment arrangements, oldest first, with their status today",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_arrangements(
    tenant: TenantPath, account_id: AccountPath, limit: Limit = None, cursor: Cursor = None
) -> ArrangementsPage:
    known_tenant(tenant)
    _require(tenant)
    today = local_today(RuntimeClock().now())
    items, nxt = readmodels.page(
        arrangements.listed(composition.repo(), tenant, account_id, today), limit, cursor
    )
    return ArrangementsPage(arrangements=items, next_cursor=nxt)


@router.post(
    "/staff/<tenant>/accounts/<account_id>/arrangements/<arrangement_id>/cancel",
    summary="Cancel a payment arrangement from today (kept as history)",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def staff_cancel_arrangement(
    tenant: TenantPath, account_id: AccountPath, arrangement_id: ArrangementIdPath, cancel: CancelIn
) -> dict[str, Any]:
    known_tenant(tenant)
    _require(tenant)
    now = RuntimeClock().now()
    try:
        return arrangements.cancel(
            tenant,
            account_id,
            arrangement_id,
            cancel.by,
            cancel.reason,
            repo=composition.repo(),
            today=local_today(now),
            now=now,
        )
    except (arrangements.UnknownArrangement, arrangements.ArrangementConflict) as exc:
        raise _arrangement_error(exc) from None
