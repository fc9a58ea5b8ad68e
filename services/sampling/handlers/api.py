"""Sampling's staff routes (HTTP API with the PortalJwt authorizer; see template.yaml).

Every route needs a staff token of the tenant in the path (claims ``role`` = ``staff`` and
``tenants`` holding the tenant); ``sub`` is recorded as who decided or registered.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from aws_lambda_powertools.logging import correlation_paths
from pydantic import BaseModel, Field

from common.authz import require
from common.http import decimal_string, error_responses, install_error_handlers
from common.observability import observed
from sampling import composition
from sampling.app.service import Conflict, NotFound, Refused
from sampling.domain.errors import SamplingError, UnknownTenant

app = APIGatewayHttpResolver(enable_validation=True)
# Domain errors as HTTP answers (the closest class along the exception's MRO wins).
install_error_handlers(
    app,
    {
        NotFound: (404, "not_found"),
        UnknownTenant: (404, "not_found"),
        Conflict: (409, "conflict"),
        Refused: (422, "refused"),
        SamplingError: (400, "invalid_request"),
    },
)

_KEY = r"^[A-Za-z0-9][A-Za-z0-9._/:-]{0,63}$"


def staff(tenant: str) -> str:
    """The staff member's ``sub``; 403 unless the token is a staff token of ``tenant``."""
    return require(app.current_event.raw_event, tenant).sub or "unknown"


Tenant = Annotated[str, Path(description="Tenant id, e.g. pleasant-prairie-sewer")]
Key = Annotated[str, Path(pattern=_KEY, description="An account or sample id")]


class SamplingPoint(BaseModel):
    sampling_point: str = Field(min_length=1, max_length=64)
    satellite: bool = False
    nonresidential: bool = True
    sic_division: str | None = Field(default=None, pattern="^[A-Ka-k]$")
    avg_daily_flow_gal: (
        Annotated[
            Decimal, decimal_string(9, 4, "Average daily flow in gallons, e.g. 2400 (below 1,000,000,000)")
        ]
        | None
    ) = Field(default=None, ge=0, le=Decimal("1000000000"))
    nongovernmental: bool = True
    discharges_toxic: bool = False
    private: bool = Field(
        default=False,
        description="A private sewer (PP-SEW-PRIVATE, Pleasant Prairie sewer): sampled and classified "
        "like any user, listed as Category B when it discharges above the thresholds",
    )


class ResultIn(BaseModel):
    """One lab result: the columns of a ``lab/`` file row (CONTRACTS.md), tenant from the path."""

    sample_id: str = Field(max_length=64)
    account_id: str = Field(max_length=64)
    collected_on: str
    parameter: str
    value: str = Field(max_length=40, description="Decimal string")
    units: str = Field(max_length=20)
    analysed_on: str
    lab: str = Field(max_length=200)
    kind: Literal["routine", "resample", "split"] = "routine"
    resample_of: str | None = Field(default=None, max_length=64)
    method: str | None = Field(default=None, max_length=200)


class DecisionIn(BaseModel):
    decision: Literal["original", "resample", "average"]
    reason: str = Field(min_length=1, max_length=1000)


class DeliveryIn(BaseModel):
    delivered_on: date


class ResampleRequestIn(BaseModel):
    requested_on: date


class ReportIn(BaseModel):
    account_id: str = Field(pattern=_KEY)
    year: int = Field(ge=2000, le=2100)
    received_on: date


class LabInvoiceIn(BaseModel):
    account_id: str = Field(pattern=_KEY)
    reference: str = Field(pattern=_KEY)
    amount: Annotated[
        Decimal, decimal_string(6, 2, "The invoice in dollars, e.g. 185.00 (below 1,000,000)")
    ] = Field(ge=0, le=Decimal("1000000"), decimal_places=2)
    invoiced_on: date
    sample_ids: list[str] = Field(default_factory=list, max_length=100)


_ERRORS = error_responses(400, 401, 403, 404)


def _json(body: Any, status: int = 200) -> Response[Any]:
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body)


@app.put(
    "/staff/<tenant>/sampling-points/<account_id>",
    summary="Register an account's sampling point (how sampling learns the accounts it samples)",
    tags=["sampling"],
    responses=_ERRORS,
)
def put_sampling_point(
    tenant: Tenant, account_id: Key, body: Annotated[SamplingPoint, Body()]
) -> dict[str, Any]:
    by = staff(tenant)
    info = composition.service().register_sampling_point(tenant, account_id, body.model_dump(), by)
    return {
        "tenant": info.tenant,
        "account_id": info.account_id,
        "sampling_point": info.sampling_point,
        "satellite": info.satellite,
        "private": info.private,
    }


@app.post(
    "/staff/<tenant>/results",
    summary="Take in one lab result (same checks as a lab/ file row)",
    tags=["sampling"],
    responses={**_ERRORS, **error_responses(409)},
)
def post_result(tenant: Tenant, body: Annotated[ResultIn, Body()]) -> dict[str, Any]:
    staff(tenant)
    cells = {k: ("" if v is None else str(v)) for k, v in body.model_dump().items()}
    return composition.service().add_result(tenant, cells)


@app.get(
    "/staff/<tenant>/accounts/<account_id>/samples",
    summary="An account's samples, results, split results beside them, decisions and category",
    tags=["sampling"],
    responses=_ERRORS,
)
def get_samples(tenant: Tenant, account_id: Key) -> dict[str, Any]:
    staff(tenant)
    return composition.service().account_view(tenant, account_id)


@app.get(
    "/staff/<tenant>/lab-suspense",
    summary="Lab lines in suspense: waiting for an account billing has not published yet "
    "(taken in when it arrives), or refused when it arrived, with the reason (issue 26)",
    tags=["sampling"],
    responses=_ERRORS,
)
def get_lab_suspense(tenant: Tenant) -> dict[str, Any]:
    staff(tenant)
    return {"tenant": tenant, "lines": composition.service().lab_suspense(tenant)}


@app.get(
    "/staff/<tenant>/private-sewers",
    summary="The private sewers and their categories, Category B above the thresholds (PP-SEW-PRIVATE)",
    tags=["sampling"],
    responses=_ERRORS,
)
def get_private_sewers(tenant: Tenant) -> dict[str, Any]:
    staff(tenant)
    return {"tenant": tenant, "private_sewers": composition.service().private_sewers(tenant)}


@app.post(
    "/staff/<tenant>/samples/<sample_id>/decision",
    summary="Record a resample decision: the original, the resample, or their average (PP-SEW-RESAMPLE)",
    tags=["sampling"],
    responses={**_ERRORS, **error_responses(409)},
)
def post_decision(tenant: Tenant, sample_id: Key, body: Annotated[DecisionIn, Body()]) -> dict[str, Any]:
    by = staff(tenant)
    return composition.service().decide(tenant, sample_id, body.decision, body.reason, by)


@app.post(
    "/staff/<tenant>/samples/<sample_id>/delivery",
    summary="Certified results delivered to the satellite system (PP-SEW-SAT-SAMPLE)",
    tags=["sampling"],
    responses={**_ERRORS, **error_responses(409)},
)
def post_delivery(tenant: Tenant, sample_id: Key, body: Annotated[DeliveryIn, Body()]) -> dict[str, Any]:
    staff(tenant)
    return composition.service().deliver(tenant, sample_id, body.delivered_on)


@app.post(
    "/staff/<tenant>/samples/<sample_id>/resample-requests",
    summary="A resample request: a satellite system's, accepted within 3 days of delivery "
    "(PP-SEW-SAT-RESAMPLE), or a discharger's on its split sample, accepted on a significant "
    "difference (PP-SEW-SPLIT)",
    tags=["sampling"],
    responses=_ERRORS,
)
def post_resample_request(
    tenant: Tenant, sample_id: Key, body: Annotated[ResampleRequestIn, Body()]
) -> dict[str, Any]:
    by = staff(tenant)
    return composition.service().request_resample(tenant, sample_id, body.requested_on, by)


@app.post(
    "/staff/<tenant>/annual-reports",
    summary="An annual discharger report received (PP-SEW-REPORT)",
    tags=["sampling"],
    responses=_ERRORS,
)
def post_annual_report(tenant: Tenant, body: Annotated[ReportIn, Body()]) -> dict[str, Any]:
    staff(tenant)
    return composition.service().receive_report(tenant, body.account_id, body.year, body.received_on)


@app.post(
    "/staff/<tenant>/lab-invoices",
    summary="Pass a lab invoice through to the discharger (PP-SEW-SAMPLE-COST)",
    tags=["sampling"],
    responses=_ERRORS,
)
def post_lab_invoice(tenant: Tenant, body: Annotated[LabInvoiceIn, Body()]) -> dict[str, Any]:
    staff(tenant)
    charge = composition.service().charge_lab_invoice(
        tenant, body.account_id, body.reference, body.amount, body.sample_ids, body.invoiced_on
    )
    return charge.model_dump(mode="json")


@observed(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)
