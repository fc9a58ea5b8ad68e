"""Staff routes of an account's bills and ledger, oldest first, a page at a time."""

from __future__ import annotations

from typing import Any

from billing import composition
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
from common.money import fmt

router, _require = checked_router()


class BillsPage(BaseModel):
    bills: list[dict[str, Any]]
    next_cursor: str | None


class LedgerPage(BaseModel):
    entries: list[dict[str, Any]]
    balance: str
    next_cursor: str | None


@router.get(
    "/staff/<tenant>/accounts/<account_id>/bills",
    summary="An account's bills, oldest first",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_bills(
    tenant: TenantPath, account_id: AccountPath, limit: Limit = None, cursor: Cursor = None
) -> BillsPage:
    known_tenant(tenant)
    _require(tenant, roles=("staff", "customer"), account_id=account_id)
    items, nxt = readmodels.page(readmodels.bills_of(composition.repo(), tenant, account_id), limit, cursor)
    return BillsPage(bills=items, next_cursor=nxt)


@router.get(
    "/staff/<tenant>/accounts/<account_id>/ledger",
    summary="An account's ledger entries and derived balance",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_ledger(
    tenant: TenantPath, account_id: AccountPath, limit: Limit = None, cursor: Cursor = None
) -> LedgerPage:
    known_tenant(tenant)
    _require(tenant, roles=("staff", "customer"), account_id=account_id)
    entries, total = readmodels.ledger_of(composition.repo(), tenant, account_id)
    items, nxt = readmodels.page(entries, limit, cursor)
    return LedgerPage(entries=items, balance=fmt(total), next_cursor=nxt)
