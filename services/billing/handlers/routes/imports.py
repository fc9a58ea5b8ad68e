"""Import exception review routes (issue 33): the files billing took in (accounts, payments)
with their counts and batch totals, a file's rejection report line by line, and the bank
deposit a clerk enters against a lockbox file."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from pydantic import BaseModel, ConfigDict, Field

from billing import composition
from billing.app import imports
from billing.handlers.routes.common import Cursor, Limit, TenantPath, checked_router, known_tenant
from common.clock import RuntimeClock
from common.http import ApiError, error_responses

router, _require = checked_router()

FilePath = Annotated[str, Path(pattern=r"^F[0-9a-f]{20}$", max_length=21, description="The file's id")]


class DepositIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    amount: str = Field(
        pattern=r"^(0|[1-9][0-9]{0,8})(\.[0-9]{1,2})?$",
        max_length=12,
        examples=["1234.50"],
        description="The bank's deposit figure for this lockbox file, dollars and cents",
    )


@router.get(
    "/staff/<tenant>/imports",
    summary=(
        "Every file billing took in (accounts, payments), newest first, with its counts"
        " (accepted, repeated, changed, rejected, waiting) and a payments file's batch totals; paged"
    ),
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_imports(tenant: TenantPath, limit: Limit = None, cursor: Cursor = None) -> dict[str, Any]:
    known_tenant(tenant)
    _require(tenant)
    files, following = imports.imports_of(composition.repo(), tenant, limit=limit, cursor=int(cursor or 0))
    return {"tenant": tenant, "files": files, "next_cursor": None if following is None else str(following)}


@router.get(
    "/staff/<tenant>/imports/<file_id>",
    summary="One file's counts, totals, deposit and its rejection report, line by line (paged)",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_import(
    tenant: TenantPath,
    file_id: FilePath,
    limit: Annotated[int, Query(ge=1, le=imports.MAX_REPORT_LINES, description="Report lines")] = (
        imports.MAX_REPORT_LINES
    ),
    cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,9}$")] = None,
) -> dict[str, Any]:
    known_tenant(tenant)
    _require(tenant)
    try:
        return imports.import_of(
            composition.repo(),
            tenant,
            file_id,
            s3=composition.s3(),
            bucket=composition.uploads_bucket(),
            limit=limit,
            cursor=int(cursor or 0),
        )
    except imports.NoSuchImport as exc:
        raise ApiError(404, "unknown_file", str(exc)) from None


@router.put(
    "/staff/<tenant>/imports/<file_id>/deposit",
    summary="Enter the bank's deposit figure for a lockbox file: reconciled when it equals the file's total",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_import_deposit(tenant: TenantPath, file_id: FilePath, body: DepositIn) -> dict[str, Any]:
    known_tenant(tenant)
    caller = _require(tenant)
    try:
        return imports.record_deposit(
            composition.repo(),
            tenant,
            file_id,
            Decimal(body.amount),
            clerk=caller.sub,
            now=RuntimeClock().now(),
        )
    except imports.NoSuchImport as exc:
        raise ApiError(404, "unknown_file", str(exc)) from None
    except imports.NotALockboxFile as exc:
        raise ApiError(400, "invalid_request", str(exc)) from None
