"""Staff cycle routes: a cycle's summary and its dry run."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from billing import composition
from billing.app.cycles import cycle_summary
from billing.app.preview import dry_run
from billing.handlers.routes.common import (
    TenantPath,
    known_tenant,
    requirer,
)
from common.clock import RuntimeClock
from common.dates import add_months
from common.http import error_responses

router = APIGatewayHttpRouter()
_require = requirer(router)


@router.get(
    "/staff/<tenant>/cycles/<period_start>",
    summary="Cycle summary: bills, total, held accounts with reasons",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_cycle(tenant: TenantPath, period_start: Annotated[date, Path()]) -> dict[str, Any]:
    known_tenant(tenant)
    _require(tenant)
    months = composition.tariff_book().in_force(tenant, period_start).billing_period_months
    return cycle_summary(tenant, period_start, add_months(period_start, months), composition.repo())


@router.post(
    "/staff/<tenant>/cycles/<period_start>/dry-run",
    summary="What a cycle would bill, writing nothing",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_dry_run(tenant: TenantPath, period_start: Annotated[date, Path()]) -> dict[str, Any]:
    known_tenant(tenant)
    _require(tenant)
    return dry_run(
        tenant,
        period_start,
        repo=composition.repo(),
        book=composition.tariff_book(),
        today=RuntimeClock().now().date(),
    )
