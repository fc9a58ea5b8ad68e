"""Staff audit route (X-AUDIT): who did what, when and why, per account or per actor."""

from __future__ import annotations

import json
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from billing import composition
from billing.adapters.audit import COLUMNS, BadCursor
from billing.app import readmodels
from billing.handlers.routes.common import TenantPath, known_tenant, requirer
from common.http import ApiError, error_responses

router = APIGatewayHttpRouter()
_require = requirer(router)

AUDIT_CONTENT: dict[str, Any] = {
    "application/json": {
        "schema": {
            "type": "object",
            "required": ["tenant", "rows", "next_cursor"],
            "properties": {
                "tenant": {"type": "string"},
                "account_id": {"type": ["string", "null"]},
                "actor": {"type": ["string", "null"]},
                "rows": {"type": "array", "items": {"type": "object"}},
                "next_cursor": {"type": ["string", "null"]},
            },
        }
    },
    "text/csv": {"schema": {"type": "string"}},
}


@router.get(
    "/staff/<tenant>/audit",
    summary=(
        "The audit trail (X-AUDIT): every event about an account (account_id) or by an actor "
        "(actor: a token's sub or a function's name), oldest first, paged by limit and "
        "cursor, as JSON or CSV (format=csv)"
    ),
    tags=["staff"],
    responses={
        **error_responses(400, 401, 403, 404),
        200: {"description": "Who, when, what and why, an event a row", "content": AUDIT_CONTENT},
    },
)
def staff_audit(
    tenant: TenantPath,
    account_id: Annotated[str | None, Query(max_length=64, pattern=r"^[^#]+$")] = None,
    actor: Annotated[str | None, Query(max_length=256, pattern=r"^[^#]+$")] = None,
    format: Annotated[str, Query(pattern=r"^(json|csv)$")] = "json",  # noqa: A002
    limit: Annotated[int, Query(ge=1, le=1000, description="Page size")] = 100,
    cursor: Annotated[
        str | None,
        Query(max_length=2048, pattern=r"^[A-Za-z0-9_=-]+$", description="next_cursor of the previous page"),
    ] = None,
) -> Response[str]:
    known_tenant(tenant)
    _require(tenant)
    if account_id is None and actor is None:
        raise ApiError(400, "invalid_request", "account_id: give an account_id or an actor")
    if account_id is not None and actor is not None:
        raise ApiError(400, "invalid_request", "actor: give an account_id or an actor, not both")
    try:
        page = composition.audit_log().page(
            tenant, account_id=account_id, actor=actor, limit=limit, cursor=cursor
        )
    except BadCursor as exc:
        raise ApiError(400, "invalid_request", str(exc)) from None
    if format == "csv":
        rows = [{c: r.get(c) for c in COLUMNS} for r in page.rows]
        headers = {"X-Next-Cursor": page.next_cursor} if page.next_cursor else None
        return Response(200, "text/csv", readmodels.to_csv(rows, COLUMNS), headers=headers)
    body = {
        "tenant": tenant,
        "account_id": account_id,
        "actor": actor,
        "rows": page.rows,
        "next_cursor": page.next_cursor,
    }
    return Response(200, "application/json", json.dumps(body))
