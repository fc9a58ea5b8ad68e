"""Staff account inquiry routes (issue 33): find an account from one box, and the account
page's summary (balance, due by when, aging, holds, use, strength, ERU)."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from billing import composition
from billing.app import inquiry
from billing.domain.search import MAX_QUERY
from billing.handlers.routes.common import AccountPath, Cursor, TenantPath, known_tenant, requirer
from common.clock import RuntimeClock
from common.http import ApiError, error_responses

router = APIGatewayHttpRouter()
_require = requirer(router)

SearchQuery = Annotated[
    str,
    Query(
        min_length=1,
        max_length=MAX_QUERY,
        description="What to find: an account, parcel or meter id, a name, an address, or a part of one",
    ),
]
SearchLimit = Annotated[int, Query(ge=1, le=100, description="Page size")]


@router.get(
    "/staff/<tenant>/search",
    summary=(
        "Find accounts by id, name, service or mailing address, parcel or meter id: exact id "
        "first, then values the query starts, then accounts with every word of it; paged"
    ),
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_search(
    tenant: TenantPath, q: SearchQuery, limit: SearchLimit = 20, cursor: Cursor = None
) -> dict[str, Any]:
    known_tenant(tenant)
    _require(tenant)
    return inquiry.search_accounts(composition.search_index(), composition.repo(), tenant, q, limit, cursor)


@router.get(
    "/staff/<tenant>/accounts/<account_id>/summary",
    summary=(
        "The account page's figures: balance, what is due by when, aging (current/30/60/90+), "
        "periods held and why, consumption by period, strength category and basis, ERU"
    ),
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_account_summary(tenant: TenantPath, account_id: AccountPath) -> dict[str, Any]:
    known_tenant(tenant)
    _require(tenant)
    today = RuntimeClock().now().date()
    found = inquiry.account_summary(composition.repo(), composition.tariff_book(), tenant, account_id, today)
    if found is None:
        raise ApiError(404, "unknown_account", f"account_id: no account {account_id!r} at {tenant}")
    return found
