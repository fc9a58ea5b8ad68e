"""Billing's portal routes (HTTP API with the PortalJwt authorizer; see template.yaml).

``app`` is the resolver, so the OpenAPI document is generated from this code
(``common.openapi``). Bill, ledger and payment routes come with their issues.
"""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query
from aws_lambda_powertools.logging import correlation_paths
from pydantic import BaseModel, ConfigDict, Field

from billing import arrangements, composition, readmodels, usecases
from billing.domain import accounts, septage
from billing.domain.arrangements import ArrangementRefused
from billing.domain.csvfiles import BadCell
from common.authz import Caller, require
from common.clock import RuntimeClock
from common.dates import add_months
from common.http import ApiError, error_responses, install_error_handlers
from common.money import fmt
from common.observability import observed
from common.openapi import PUBLIC_EXTENSION
from common.tariffs import TariffNotInForce, UnknownTenant

app = APIGatewayHttpResolver(enable_validation=True)
install_error_handlers(app)


class Health(BaseModel):
    status: str


class TariffVersion(BaseModel):
    tenant: str
    version: str
    effective_from: date
    effective_until: date | None
    billing_period_months: int
    tariff: dict[str, Any]


@app.get("/health", summary="Liveness check", tags=["health"], openapi_extensions={PUBLIC_EXTENSION: True})
def health() -> Health:
    return Health(status="ok")


@app.get(
    "/tariffs/<tenant>",
    summary="The tariff version in force for a tenant on a date",
    tags=["tariffs"],
    responses={**error_responses(400, 401, 404), 200: {"description": "The tariff version in force"}},
)
def get_tariff(
    tenant: Annotated[str, Path(description="Tenant id, e.g. grafton-sewer")],
    on: Annotated[date, Query(description="The date (YYYY-MM-DD) the version must be in force on")],
) -> TariffVersion:
    try:
        tariff = composition.tariff_book().in_force(tenant, on)
    except UnknownTenant:
        raise ApiError(404, "unknown_tenant", f"tenant: no tenant {tenant!r}") from None
    except TariffNotInForce as exc:
        raise ApiError(404, "tariff_not_in_force", f"on: {exc}") from None
    return TariffVersion(
        tenant=tariff.tenant,
        version=tariff.version_id,
        effective_from=tariff.effective_from,
        effective_until=tariff.effective_until,
        billing_period_months=tariff.billing_period_months,
        tariff=tariff.model_dump(mode="json"),
    )


# --- staff and payment routes (issue 12) -------------------------------------------------


def _require(tenant: str, *, roles: tuple[str, ...] = ("staff",), account_id: str | None = None) -> Caller:
    """CONTRACTS.md tokens (``common.authz``): ``role`` and ``tenants``; a customer only its ``accounts``."""
    return require(app.current_event.raw_event, tenant, roles=roles, account_id=account_id)


def _known_tenant(tenant: str) -> None:
    if tenant not in composition.tariff_book().tenants:
        raise ApiError(404, "unknown_tenant", f"tenant: no tenant {tenant!r}")


Limit = Annotated[int | None, Query(ge=1, le=1000, description="Page size; without it, everything")]
Cursor = Annotated[str | None, Query(pattern=r"^[0-9]{1,9}$", description="next_cursor of the previous page")]
TenantPath = Annotated[str, Path(description="Tenant id, e.g. grafton-sewer", max_length=64)]
AccountPath = Annotated[str, Path(description="Account id", max_length=64, pattern=r"^[^#]+$")]


class BillsPage(BaseModel):
    bills: list[dict[str, Any]]
    next_cursor: str | None


class LedgerPage(BaseModel):
    entries: list[dict[str, Any]]
    balance: str
    next_cursor: str | None


class TaxRollList(BaseModel):
    noticed_on: str
    certified_on: str | None
    entries: list[dict[str, Any]]
    next_cursor: str | None


@app.get(
    "/staff/<tenant>/accounts/<account_id>/bills",
    summary="An account's bills, oldest first",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_bills(
    tenant: TenantPath, account_id: AccountPath, limit: Limit = None, cursor: Cursor = None
) -> BillsPage:
    _known_tenant(tenant)
    _require(tenant, roles=("staff", "customer"), account_id=account_id)
    items, nxt = readmodels.page(readmodels.bills_of(composition.repo(), tenant, account_id), limit, cursor)
    return BillsPage(bills=items, next_cursor=nxt)


@app.get(
    "/staff/<tenant>/accounts/<account_id>/ledger",
    summary="An account's ledger entries and derived balance",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_ledger(
    tenant: TenantPath, account_id: AccountPath, limit: Limit = None, cursor: Cursor = None
) -> LedgerPage:
    _known_tenant(tenant)
    _require(tenant, roles=("staff", "customer"), account_id=account_id)
    entries, total = readmodels.ledger_of(composition.repo(), tenant, account_id)
    items, nxt = readmodels.page(entries, limit, cursor)
    return LedgerPage(entries=items, balance=fmt(total), next_cursor=nxt)


@app.get(
    "/staff/<tenant>/tax-roll/<year>",
    summary="The year's tax-roll list (X-TAXROLL): noticed, then certified",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_tax_roll(
    tenant: TenantPath,
    year: Annotated[int, Path(ge=2000, le=2200)],
    limit: Limit = None,
    cursor: Cursor = None,
) -> TaxRollList:
    _known_tenant(tenant)
    _require(tenant)
    found = readmodels.tax_roll(composition.repo(), tenant, year)
    if found is None:
        raise ApiError(404, "not_noticed", f"year: no tax-roll notice for {tenant} in {year}")
    items, nxt = readmodels.page(found["entries"], limit, cursor)
    return TaxRollList(
        noticed_on=found["noticed_on"], certified_on=found["certified_on"], entries=items, next_cursor=nxt
    )


@app.get(
    "/staff/<tenant>/accounts/<account_id>",
    summary="An account's current version and its history",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_account(tenant: TenantPath, account_id: AccountPath) -> dict[str, Any]:
    _known_tenant(tenant)
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


@app.put(
    "/staff/<tenant>/accounts/<account_id>",
    summary="Add or change an account (the accounts/ import columns as JSON strings)",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_put_account(tenant: TenantPath, account_id: AccountPath) -> dict[str, Any]:
    _known_tenant(tenant)
    who = _require(tenant)
    body = app.current_event.json_body
    if not isinstance(body, dict):
        raise ApiError(400, "invalid_request", "body: must be a JSON object")
    row = {str(k): str(v) for k, v in body.items() if v is not None and str(v).strip()}
    row.update({"tenant": tenant, "account_id": account_id})
    unknown = sorted(set(row) - set(accounts.REQUIRED) - set(accounts.OPTIONAL))
    if unknown:
        raise ApiError(400, "invalid_request", f"{unknown[0]}: unknown field")
    try:
        record = accounts.parse_account_row(row, composition.tariff_book().tenants)
    except BadCell as exc:
        raise ApiError(400, "invalid_request", f"{exc.column}: {exc.reason}") from None
    composition.repo().store_accounts([record], source=f"api:{who.sub}", now=RuntimeClock().now())
    return {"account_id": account_id, "stored": True}


@app.get(
    "/staff/<tenant>/cycles/<period_start>",
    summary="Cycle summary: bills, total, held accounts with reasons",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_cycle(tenant: TenantPath, period_start: Annotated[date, Path()]) -> dict[str, Any]:
    _known_tenant(tenant)
    _require(tenant)
    months = composition.tariff_book().in_force(tenant, period_start).billing_period_months
    return usecases.cycle_summary(tenant, period_start, add_months(period_start, months), composition.repo())


@app.post(
    "/staff/<tenant>/cycles/<period_start>/dry-run",
    summary="What a cycle would bill, writing nothing",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_dry_run(tenant: TenantPath, period_start: Annotated[date, Path()]) -> dict[str, Any]:
    _known_tenant(tenant)
    _require(tenant)
    return usecases.dry_run(
        tenant,
        period_start,
        repo=composition.repo(),
        book=composition.tariff_book(),
        today=RuntimeClock().now().date(),
    )


REPORT_CONTENT: dict[str, Any] = {
    "application/json": {
        "schema": {
            "type": "object",
            "required": ["report", "tenant", "rows"],
            "properties": {
                "report": {"type": "string", "enum": ["aging", "revenue", "reconciliation"]},
                "tenant": {"type": "string"},
                "rows": {"type": "array", "items": {"type": "object"}},
            },
        }
    },
    "text/csv": {"schema": {"type": "string"}},
}


@app.get(
    "/staff/<tenant>/reports/<report>",
    summary="Reports: aging, revenue, reconciliation (SU-FUNDS), as JSON or CSV (format=csv)",
    tags=["staff"],
    responses={
        **error_responses(400, 401, 403, 404),
        200: {"description": "The report's rows", "content": REPORT_CONTENT},
    },
)
def staff_report(
    tenant: TenantPath,
    report: Annotated[str, Path(pattern=r"^(aging|revenue|reconciliation)$")],
    start: Annotated[date | None, Query()] = None,
    end: Annotated[date | None, Query()] = None,
    format: Annotated[str, Query(pattern=r"^(json|csv)$")] = "json",  # noqa: A002
) -> Response[str]:
    _known_tenant(tenant)
    _require(tenant)
    repo = composition.repo()
    today = RuntimeClock().now().date()
    if report == "aging":
        rows = readmodels.aging(repo, tenant, today)
    else:
        first = start or date(today.year, 1, 1)
        last = end or add_months(first, 12)
        rows = (
            readmodels.revenue(repo, tenant, first, last)
            if report == "revenue"
            else readmodels.reconciliation(repo, tenant, first, last)
        )
    if format == "csv":
        return Response(200, "text/csv", readmodels.to_csv(rows))
    return Response(200, "application/json", json.dumps({"report": report, "tenant": tenant, "rows": rows}))


class OwnerBill(BaseModel):
    period: dict[str, str]
    due_date: str
    total: str
    paid: bool


class OwnerBillsPage(BaseModel):
    parcel_id: str
    bills: list[OwnerBill]
    next_cursor: str | None


@app.get(
    "/owners/<tenant>/parcels/<parcel_id>/bills",
    summary="PP-CWU-BILLING: whether the charges on an owner's rental parcel were paid",
    tags=["owners"],
    responses=error_responses(400, 401, 403, 404),
)
def owner_bills(
    tenant: TenantPath,
    parcel_id: Annotated[str, Path(description="Parcel id", max_length=64, pattern=r"^[^#]+$")],
    limit: Limit = None,
    cursor: Cursor = None,
) -> OwnerBillsPage:
    _known_tenant(tenant)
    require(app.current_event.raw_event, tenant, roles=("staff", "owner"), parcel_id=parcel_id)
    items, nxt = readmodels.page(readmodels.owner_bills(composition.repo(), tenant, parcel_id), limit, cursor)
    return OwnerBillsPage(parcel_id=parcel_id, bills=[OwnerBill(**b) for b in items], next_cursor=nxt)


class AdjustmentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bill_id: str = Field(max_length=140)
    # A decimal string of dollars and cents, non-zero, below ten million either way: a debit
    # memo positive, a credit memo negative. The pattern says so in the OpenAPI document, so a
    # schema-valid amount is never refused.
    amount: str = Field(
        pattern=r"^-?([1-9][0-9]{0,6}(\.[0-9]{1,2})?|0\.(0[1-9]|[1-9][0-9]?))$",
        max_length=11,
        examples=["-12.50"],
    )
    reason: str = Field(min_length=3, max_length=500)
    approver: str = Field(min_length=1, max_length=100)
    reference: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")


@app.post(
    "/staff/<tenant>/accounts/<account_id>/adjustments",
    summary="A credit or debit memo on a bill (X-IMMUTABLE), with reason and approver",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def staff_adjustment(tenant: TenantPath, account_id: AccountPath, adjustment: AdjustmentIn) -> dict[str, Any]:
    _known_tenant(tenant)
    _require(tenant)
    now = RuntimeClock().now()
    try:
        return usecases.post_adjustment(
            tenant,
            account_id,
            adjustment.bill_id,
            Decimal(adjustment.amount),
            adjustment.reason,
            adjustment.approver,
            adjustment.reference,
            usecases.local_today(now),
            repo=composition.repo(),
            now=now,
        )
    except usecases.AdjustmentRefused as exc:
        status = 404 if str(exc).startswith("bill_id") else 409
        raise ApiError(status, "adjustment_refused", str(exc)) from None


# --- payment arrangements (issue 12, GR-OVERDUE) ----------------------------------------

AMOUNT_PATTERN = r"^([1-9][0-9]{0,6}(\.[0-9]{1,2})?|0\.(0[1-9]|[1-9][0-9]?))$"
ArrangementIdPath = Annotated[str, Path(max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]


class InstalmentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    due_on: date
    # Dollars and cents above zero, below ten million (the pattern is in the OpenAPI document).
    amount: str = Field(pattern=AMOUNT_PATTERN, max_length=10, examples=["50.00"])


class ArrangementIn(BaseModel):
    """A schedule of instalments (each due by its date, oldest first) and an end date."""

    model_config = ConfigDict(extra="forbid")

    arrangement_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")
    instalments: list[InstalmentIn] = Field(min_length=1, max_length=60)
    end_on: date
    approver: str = Field(min_length=1, max_length=100)
    note: str = Field(default="", max_length=500)


class CancelIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    by: str = Field(min_length=1, max_length=100)
    reason: str = Field(min_length=3, max_length=500)


class ArrangementsPage(BaseModel):
    arrangements: list[dict[str, Any]]
    next_cursor: str | None


def _arrangement_error(exc: Exception) -> ApiError:
    if isinstance(exc, arrangements.UnknownArrangement):
        return ApiError(404, "unknown_arrangement", str(exc))
    if isinstance(exc, arrangements.ArrangementConflict):
        return ApiError(409, "arrangement_conflict", str(exc))
    return ApiError(400, "arrangement_refused", str(exc))


@app.post(
    "/staff/<tenant>/accounts/<account_id>/arrangements",
    summary="Make a payment arrangement (GR-OVERDUE): instalments and an end date; idempotent by arrangement_id",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def staff_make_arrangement(
    tenant: TenantPath, account_id: AccountPath, arrangement: ArrangementIn
) -> dict[str, Any]:
    _known_tenant(tenant)
    _require(tenant)
    now = RuntimeClock().now()
    try:
        return arrangements.make(
            tenant,
            account_id,
            arrangement.arrangement_id,
            [(i.due_on, Decimal(i.amount)) for i in arrangement.instalments],
            arrangement.end_on,
            arrangement.approver,
            arrangement.note,
            repo=composition.repo(),
            today=usecases.local_today(now),
            now=now,
            book=composition.tariff_book(),
        )
    except (ArrangementRefused, arrangements.UnknownArrangement, arrangements.ArrangementConflict) as exc:
        raise _arrangement_error(exc) from None


@app.get(
    "/staff/<tenant>/accounts/<account_id>/arrangements",
    summary="An account's payment arrangements, oldest first, with their status today",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_arrangements(
    tenant: TenantPath, account_id: AccountPath, limit: Limit = None, cursor: Cursor = None
) -> ArrangementsPage:
    _known_tenant(tenant)
    _require(tenant)
    today = usecases.local_today(RuntimeClock().now())
    items, nxt = readmodels.page(
        arrangements.listed(composition.repo(), tenant, account_id, today), limit, cursor
    )
    return ArrangementsPage(arrangements=items, next_cursor=nxt)


@app.post(
    "/staff/<tenant>/accounts/<account_id>/arrangements/<arrangement_id>/cancel",
    summary="Cancel a payment arrangement from today (kept as history)",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def staff_cancel_arrangement(
    tenant: TenantPath, account_id: AccountPath, arrangement_id: ArrangementIdPath, cancel: CancelIn
) -> dict[str, Any]:
    _known_tenant(tenant)
    _require(tenant)
    now = RuntimeClock().now()
    try:
        return arrangements.cancel(
            tenant,
            account_id,
            arrangement_id,
            cancel.by,
            cancel.reason,
            repo=composition.repo(),
            today=usecases.local_today(now),
            now=now,
        )
    except (arrangements.UnknownArrangement, arrangements.ArrangementConflict) as exc:
        raise _arrangement_error(exc) from None


class RerateRefused(BaseModel):
    bill_id: str
    account_id: str
    from_volume_gal: str | None
    to_volume_gal: str | None
    source_event_id: str
    reason: str
    rule_id: str
    recorded_at: str | None


class RerateRefusedPage(BaseModel):
    refused: list[RerateRefused]
    next_cursor: str | None


@app.get(
    "/staff/<tenant>/rerating/refused",
    summary="X-IMMUTABLE: billed periods whose corrected consumption could not be rated again, with why",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_rerate_refused(tenant: TenantPath, limit: Limit = None, cursor: Cursor = None) -> RerateRefusedPage:
    _known_tenant(tenant)
    _require(tenant)
    items, nxt = readmodels.page(readmodels.rerate_refused(composition.repo(), tenant), limit, cursor)
    return RerateRefusedPage(refused=[RerateRefused(**i) for i in items], next_cursor=nxt)


# --- bill preview and septage haulers (issue 14) ------------------------------------------

# A non-negative decimal string of gallons: up to twelve digits, up to three places. The
# pattern is in the OpenAPI document, so a schema-valid figure is never refused.
GALLONS_PATTERN = r"^(0|[1-9][0-9]{0,11})(\.[0-9]{1,3})?$"
Gallons = Field(pattern=GALLONS_PATTERN, max_length=16, examples=["23000"])
Text = Field(min_length=1, max_length=200)
IdText = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")


class PreviewIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    period_start: date
    period_end: date
    water_gallons: str | None = Field(
        default=None, pattern=GALLONS_PATTERN, max_length=16, examples=["23000"]
    )


@app.post(
    "/staff/<tenant>/accounts/<account_id>/preview",
    summary="The bill an account would get for a period and volume, writing nothing",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_preview(tenant: TenantPath, account_id: AccountPath, preview: PreviewIn) -> dict[str, Any]:
    _known_tenant(tenant)
    _require(tenant)
    gallons = None if preview.water_gallons is None else Decimal(preview.water_gallons)
    try:
        return usecases.preview_bill(
            tenant,
            account_id,
            preview.period_start,
            preview.period_end,
            gallons,
            repo=composition.repo(),
            book=composition.tariff_book(),
        )
    except usecases.PreviewRefused as exc:
        status = 404 if str(exc).startswith("account_id") else 400
        raise ApiError(status, "preview_refused", str(exc)) from None


class UnitIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    make: str = Text
    model: str = Text
    licence_number: str = IdText


class PermitIn(BaseModel):
    """GR-SEPTAGE-PERMIT; the insurance amount is a decimal string of dollars and cents."""

    model_config = ConfigDict(extra="forbid")

    permit_id: str = IdText
    name: str = Text
    address: str = Field(min_length=1, max_length=500)
    units: list[UnitIn] = Field(min_length=1, max_length=100)
    insurance_amount: str = Field(
        pattern=r"^[0-9]{1,12}(\.[0-9]{1,2})?$", max_length=15, examples=["250000.00"]
    )
    account_id: str | None = Field(default=None, max_length=64, pattern=r"^[^#]+$")


def _septage_tenant(tenant: str) -> None:
    """Septage haulers are Grafton's (GR-SEPTAGE-PERMIT); other tenants have none."""
    _known_tenant(tenant)
    if tenant != septage.TENANT:
        raise ApiError(
            404, "no_septage", f"tenant: {tenant} has no septage hauler permits (GR-SEPTAGE-PERMIT)"
        )


@app.post(
    "/staff/<tenant>/septage/permits",
    summary="GR-SEPTAGE-PERMIT: register a septage hauler permit (idempotent by permit_id)",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def staff_register_permit(tenant: TenantPath, permit: PermitIn) -> dict[str, Any]:
    _septage_tenant(tenant)
    _require(tenant)
    record = septage.Permit(
        permit_id=permit.permit_id,
        name=permit.name,
        address=permit.address,
        units=tuple(septage.Unit(u.make, u.model, u.licence_number) for u in permit.units),
        insurance_amount=Decimal(permit.insurance_amount),
        account_id=permit.account_id,
    )
    try:
        return usecases.register_permit(record, repo=composition.repo(), now=RuntimeClock().now())
    except septage.SeptageRefused as exc:
        raise ApiError(400, "permit_refused", str(exc)) from None
    except usecases.SeptageConflict as exc:
        raise ApiError(409, "permit_id_reused", str(exc)) from None


@app.get(
    "/staff/<tenant>/septage/permits/<permit_id>",
    summary="GR-SEPTAGE-PERMIT: a septage hauler permit",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404),
)
def staff_permit(
    tenant: TenantPath,
    permit_id: Annotated[str, Path(max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")],
) -> dict[str, Any]:
    _septage_tenant(tenant)
    _require(tenant)
    found = usecases.septage_permit(permit_id, repo=composition.repo())
    if found is None:
        raise ApiError(404, "unknown_permit", f"permit_id: no septage hauler permit {permit_id!r}")
    return found.to_json()


class DisposalIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    permit_id: str = IdText
    licence_number: str = IdText
    gallons: str = Gallons
    disposed_on: date
    reference: str = IdText


@app.post(
    "/staff/<tenant>/septage/disposals",
    summary="GR-SEPTAGE-CHARGE: charge a permitted hauler's disposal (idempotent by reference)",
    tags=["staff"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def staff_disposal(tenant: TenantPath, disposal: DisposalIn) -> dict[str, Any]:
    _septage_tenant(tenant)
    _require(tenant)
    record = septage.Disposal(
        disposal.reference,
        disposal.permit_id,
        disposal.licence_number,
        Decimal(disposal.gallons),
        disposal.disposed_on,
    )
    try:
        return usecases.record_disposal(
            record, repo=composition.repo(), book=composition.tariff_book(), now=RuntimeClock().now()
        )
    except septage.SeptageRefused as exc:
        raise ApiError(400, "disposal_refused", str(exc)) from None
    except TariffNotInForce as exc:
        raise ApiError(400, "tariff_not_in_force", f"disposed_on: {exc}") from None
    except usecases.SeptageConflict as exc:
        raise ApiError(409, "reference_reused", str(exc)) from None


class PaymentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tenant: str = Field(max_length=64)
    account_id: str = Field(max_length=64, pattern=r"^[^#]+$")
    # A decimal string of dollars and cents above zero, below ten million (the pattern says
    # so in the OpenAPI document, so a schema-valid amount is never refused).
    amount: str = Field(
        pattern=r"^([1-9][0-9]{0,6}(\.[0-9]{1,2})?|0\.(0[1-9]|[1-9][0-9]?))$",
        max_length=10,
        examples=["68.00"],
    )
    paid_on: date | None = Field(
        default=None,
        description=(
            "The day the payment was received (the utility's date; omitted: today). Never after"
            " today; only staff give an earlier day (X-DUE: a payment counts on this date, and"
            " one dated before a late charge reverses it), a customer's is dated the day it is made."
        ),
    )


class PaymentOut(BaseModel):
    reference: str
    tenant: str
    account_id: str
    amount: str
    paid_on: date
    suspense: bool
    replayed: bool


@app.post(
    "/payments",
    summary="Post a payment; idempotent by the Idempotency-Key header",
    tags=["payments"],
    responses=error_responses(400, 401, 403, 404, 409),
)
def post_payment(
    payment: PaymentIn,
    idempotency_key: Annotated[
        str, Header(alias="idempotency-key", min_length=8, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")
    ],
) -> PaymentOut:
    _known_tenant(payment.tenant)
    caller = _require(payment.tenant, roles=("staff", "customer"), account_id=payment.account_id)
    now = RuntimeClock().now()
    today = usecases.local_today(now)
    # X-DUE: a payment counts on its paid_on date for every cut-off, and one dated before a
    # late charge or penalty reverses it. So only staff may date a payment earlier (a check
    # received by mail); a customer's is dated the day it is made, and none is dated ahead.
    if payment.paid_on is not None and payment.paid_on > today:
        raise ApiError(400, "invalid_request", f"paid_on: {payment.paid_on} is after today ({today})")
    if payment.paid_on not in (None, today) and caller.role != "staff":
        raise ApiError(
            400,
            "invalid_request",
            f"paid_on: a customer's payment is dated the day it is made ({today}); only staff date one earlier",
        )
    try:
        result = usecases.post_api_payment(
            payment.tenant,
            payment.account_id,
            Decimal(payment.amount),
            payment.paid_on or today,
            idempotency_key,
            repo=composition.repo(),
            now=now,
            given_paid_on=payment.paid_on is not None,
            book=composition.tariff_book(),
        )
    except usecases.PaymentConflict as exc:
        raise ApiError(409, "idempotency_key_reused", f"idempotency-key: {exc}") from None
    return PaymentOut(**result)


@observed(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)
