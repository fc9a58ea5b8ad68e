"""Staff report routes: aging, revenue, reconciliation (SU-FUNDS), unbilled account-periods
(X-PERIOD) and payments waiting in suspense (issue 26), as JSON or CSV."""

from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from billing import composition
from billing.app import readmodels
from billing.app.payments import SUSPENSE_COLUMNS, waiting_payments
from billing.handlers.routes.common import (
    Cursor,
    Limit,
    TenantPath,
    known_tenant,
    requirer,
)
from common.clock import RuntimeClock
from common.dates import add_months
from common.http import ApiError, error_responses

router = APIGatewayHttpRouter()
MAX_JOURNAL_DAYS = 92
"""A journal covers at most a quarter per request (the accounting export runs daily)."""
_require = requirer(router)


REPORT_CONTENT: dict[str, Any] = {
    "application/json": {
        "schema": {
            "type": "object",
            "required": ["report", "tenant", "rows"],
            "properties": {
                "report": {
                    "type": "string",
                    "enum": [
                        "aging",
                        "revenue",
                        "reconciliation",
                        "unbilled",
                        "suspense",
                        "journal",
                        "trial-balance",
                    ],
                },
                "tenant": {"type": "string"},
                "rows": {"type": "array", "items": {"type": "object"}},
                "next_cursor": {"type": ["string", "null"]},
            },
        }
    },
    "text/csv": {"schema": {"type": "string"}},
}


@router.get(
    "/staff/<tenant>/reports/<report>",
    summary=(
        "Reports: aging, revenue, reconciliation (SU-FUNDS), unbilled account-periods "
        "(X-PERIOD: held with the reason, or not yet due), payments waiting in suspense for an "
        "account not known yet (paged by limit and cursor), the daily journal by general-ledger "
        "account and fund for [start, end) (default today), the trial balance by fund at the end "
        "of as_of (default today), as JSON or CSV (format=csv)"
    ),
    tags=["staff"],
    responses={
        **error_responses(400, 401, 403, 404),
        200: {"description": "The report's rows", "content": REPORT_CONTENT},
    },
)
def staff_report(
    tenant: TenantPath,
    report: Annotated[
        str, Path(pattern=r"^(aging|revenue|reconciliation|unbilled|suspense|journal|trial-balance)$")
    ],
    start: Annotated[date | None, Query()] = None,
    end: Annotated[date | None, Query()] = None,
    as_of: Annotated[date | None, Query()] = None,
    format: Annotated[str, Query(pattern=r"^(json|csv)$")] = "json",  # noqa: A002
    limit: Limit = None,
    cursor: Cursor = None,
) -> Response[str]:
    known_tenant(tenant)
    _require(tenant)
    repo = composition.repo()
    today = RuntimeClock().now().date()
    columns: tuple[str, ...] = ()
    page: dict[str, Any] = {}
    if report == "suspense":
        rows, following = waiting_payments(repo, tenant, limit=limit, cursor=int(cursor or 0))
        columns = SUSPENSE_COLUMNS
        page = {"next_cursor": None if following is None else str(following)}
    elif report == "aging":
        rows = readmodels.aging(repo, tenant, today)
    elif report == "journal":
        first = start or today
        if first >= date.max - timedelta(days=MAX_JOURNAL_DAYS):
            raise ApiError(400, "invalid_request", "start: too late a date")
        last = end or first + timedelta(days=1)
        if not first < last <= first + timedelta(days=MAX_JOURNAL_DAYS):
            raise ApiError(
                400, "invalid_request", f"end: must be after start and within {MAX_JOURNAL_DAYS} days of it"
            )
        rows = readmodels.journal(repo, tenant, composition.tariff_book(), first, last)
        columns = readmodels.JOURNAL_COLUMNS
    elif report == "trial-balance":
        rows = readmodels.trial_balance(repo, tenant, composition.tariff_book(), as_of or today)
        columns = readmodels.TRIAL_BALANCE_COLUMNS
    elif report == "unbilled":
        rows = readmodels.unbilled(repo, tenant, composition.tariff_book(), today)
        columns = readmodels.UNBILLED_COLUMNS
    else:
        first = start or date(today.year, 1, 1)
        last = end or add_months(first, 12)
        rows = (
            readmodels.revenue(repo, tenant, first, last)
            if report == "revenue"
            else readmodels.reconciliation(repo, tenant, first, last)
        )
    if format == "csv":
        return Response(200, "text/csv", readmodels.to_csv(rows, columns))
    body = {"report": report, "tenant": tenant, "rows": rows, **page}
    return Response(200, "application/json", json.dumps(body))
