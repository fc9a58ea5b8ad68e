"""Staff account routes: an account as registered, read and replaced."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from typing import Any

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from billing import composition
from billing.app.accounts import bills_from_rules, put_account
from billing.app.payments import release_waiting
from billing.domain import accounts
from billing.domain.csvfiles import BadCell
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


@router.get(
    "/staff/<tenant>/accounts/<account_id>",
    summary="An account's current version and its history",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_account(tenant: TenantPath, account_id: AccountPath) -> dict[str, Any]:
    known_tenant(tenant)
    _require(tenant)
    repo = composition.repo()
    current = repo.account(tenant, account_id)
    if current is None:
        raise ApiError(404, "unknown_account", f"account_id: no account {account_id!r} at {tenant}")
    history = [
        {**json.loads(h["record"]), "recorded_at": h["recorded_at"], "source": h.get("source")}
        for h in repo.account_history(tenant, account_id)
    ]
    values = {
        k: (v.isoformat() if isinstance(v, date) else str(v) if isinstance(v, Decimal) else v)
        for k, v in current.to_values().items()
    }
    return {"account": values, "history": json.loads(json.dumps(history, default=str))}


@router.put(
    "/staff/<tenant>/accounts/<account_id>",
    summary="Add or change an account (the accounts/ import columns as JSON strings)",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_put_account(tenant: TenantPath, account_id: AccountPath) -> dict[str, Any]:
    known_tenant(tenant)
    who = _require(tenant)
    body = router.current_event.json_body
    if not isinstance(body, dict):
        raise ApiError(400, "invalid_request", "body: must be a JSON object")
    row = {str(k): str(v) for k, v in body.items() if v is not None and str(v).strip()}
    row.update({"tenant": tenant, "account_id": account_id})
    unknown = sorted(set(row) - set(accounts.REQUIRED) - set(accounts.OPTIONAL))
    if unknown:
        raise ApiError(400, "invalid_request", f"{unknown[0]}: unknown field")
    try:
        book = composition.tariff_book()
        record = accounts.parse_account_row(
            row, book.tenants, bills_from_rules(book, RuntimeClock().now().date())
        )
    except BadCell as exc:
        raise ApiError(400, "invalid_request", f"{exc.column}: {exc.reason}") from None
    repo, now = composition.repo(), RuntimeClock().now()
    # A new account takes in the payments that waited for it in suspense (issue 26).
    counted = put_account(
        record,
        source=f"api:{who.sub}",
        repo=repo,
        now=now,
        release=lambda t, ids: release_waiting(t, ids, repo=repo, now=now, book=book),
    )
    return {"account_id": account_id, "stored": True, "outcome": counted}
