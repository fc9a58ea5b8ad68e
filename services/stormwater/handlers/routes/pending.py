"""Staff route: what waits for a decision (reconsiderations, appeals, credit applications)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from aws_lambda_powertools.event_handler.openapi.params import Query
from pydantic import BaseModel

from stormwater.handlers.routes.common import (
    READ_ERRORS,
    TenantPath,
    _service,
    checked_router,
)

router, _staff, _ = checked_router()


class PendingDecision(BaseModel):
    kind: Literal["reconsideration", "appeal", "credit"]
    id: str
    parcel_id: str
    owner_name: str
    status: str
    filed_on: date
    summary: str


class PendingDecisionsPage(BaseModel):
    decisions: list[PendingDecision]
    next_cursor: str | None


@router.get(
    "/staff/<tenant>/parcels/pending-decisions",
    summary="Reconsiderations, appeals and credit applications awaiting a decision, oldest first",
    tags=["stormwater", "staff"],
    responses=READ_ERRORS,
)
def get_pending_decisions(
    tenant: TenantPath,
    limit: Annotated[
        int | None, Query(ge=1, le=1000, description="Page size; without it, everything")
    ] = None,
    cursor: Annotated[
        str | None, Query(pattern=r"^[A-Za-z0-9_-]{1,600}$", description="next_cursor of the previous page")
    ] = None,
) -> PendingDecisionsPage:
    _staff(tenant)
    items, nxt = _service().pending_decisions(tenant, limit=limit, cursor=cursor)
    return PendingDecisionsPage(decisions=[PendingDecision(**i) for i in items], next_cursor=nxt)
