"""Metering's staff routes (HTTP API with the PortalJwt authorizer; see template.yaml).

``POST /staff/{tenant}/meters/{meter_id}/reads`` takes in one register read, checked and
applied exactly as a read file's row is (``metering.app.ingest.take_in_read``). Only a
staff token of the tenant may post (claims ``role`` and ``tenants``).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.logging import correlation_paths
from pydantic import BaseModel, ConfigDict, Field

from common.authz import require
from common.http import ApiError, error_responses, install_error_handlers
from common.observability import observed
from metering import composition
from metering.app.ingest import reading_from_request
from metering.domain import csvinput

app = APIGatewayHttpResolver(enable_validation=True)
install_error_handlers(app)


class ReadPosted(BaseModel):
    model_config = ConfigDict(extra="forbid")

    read_on: date = Field(description="the day the register was read (YYYY-MM-DD)")
    reading: str = Field(max_length=30, description="register value in the meter's units, a decimal string")
    read_type: Literal["actual", "customer", "estimated"] = "actual"


class ReadTaken(BaseModel):
    status: Literal["accepted", "duplicate"]
    consumptions: int = Field(description="billing periods this read completed")


def _require_staff(tenant: str) -> None:
    require(app.current_event.raw_event, tenant)


@app.post(
    "/staff/<tenant>/meters/<meter_id>/reads",
    summary="Take in one register read (checked as a read file's row is)",
    tags=["metering"],
    responses={
        201: {"description": "The read was accepted, or was already there (duplicate)"},
        **error_responses(400, 401, 403, 404, 422),
    },
)
def post_read(
    tenant: Annotated[str, Path(description="Tenant id, e.g. grafton-sewer", max_length=64)],
    meter_id: Annotated[str, Path(description="The meter's id", max_length=64)],
    body: ReadPosted,
) -> Response[str]:
    _require_staff(tenant)
    try:
        read = reading_from_request(
            tenant,
            meter_id,
            body.model_dump(mode="json"),
            composition.metered_tenants(composition.today()),
            composition.field_rules(composition.today()),
        )
    except csvinput.BadField as exc:
        raise ApiError(400, "invalid_request", f"{exc.column}: {exc.reason}") from None
    source = f"api/{tenant}/{meter_id}/{read.read_on}/{read.reading}"
    status, result = composition.take_in_read(read, source)
    if status == "rejected":
        [rejection] = result.first_rejections
        raise ApiError(422, "read_rejected", f"{rejection.column}: {rejection.reason}")
    taken = ReadTaken(status=status, consumptions=result.consumptions)
    return Response(
        status_code=201, content_type=content_types.APPLICATION_JSON, body=taken.model_dump_json()
    )


@app.get(
    "/staff/<tenant>/meter-suspense",
    summary="Meters-file lines in suspense: a new meter on an account billing has not published "
    "yet (taken in when it arrives), or refused when it arrived, with the reason (issue 26)",
    tags=["metering"],
    responses=error_responses(400, 401, 403, 404),
)
def get_meter_suspense(
    tenant: Annotated[str, Path(description="Tenant id, e.g. grafton-sewer", max_length=64)],
) -> dict[str, Any]:
    _require_staff(tenant)
    return {"tenant": tenant, "lines": composition.repository().meter_suspense(tenant)}


@observed(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)
