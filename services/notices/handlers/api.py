"""Notices' portal routes: an account's notice log (staff, and the customer for its own
account), the failed-notices report and a notice as sent, by its id (staff). HTTP API with
the PortalJwt authorizer."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.logging import correlation_paths
from pydantic import BaseModel

from common.authz import require
from common.http import ApiError, error_responses, install_error_handlers
from common.observability import observed
from notices import composition
from notices.domain.delivery import NoticeRecord

app = APIGatewayHttpResolver(enable_validation=True)
install_error_handlers(app)

MAX_LIMIT = 1000

# A notice id is the first 32 hex digits of a SHA-256 (notices.domain.model.notice_id); a
# path that cannot be one is refused here, never sent to the table (DynamoDB refuses a sort
# key over 1,024 bytes with a ValidationException, which would be a 5xx).
NoticeIdPath = Annotated[
    str, Path(description="Notice id, as the notice log gives it", max_length=64, pattern=r"^[0-9a-f]{1,64}$")
]
TenantPath = Annotated[str, Path(description="Tenant id", max_length=64, pattern=r"^[a-z0-9-]+$")]


class NoticeEntry(BaseModel):
    notice_id: str
    rule_id: str
    channel: str
    status: str
    at: str
    subject: str
    recipient_role: str
    trigger: str
    content_sha256: str
    attempts: int
    error: str


class NoticeLogPage(BaseModel):
    notices: list[NoticeEntry]
    next_cursor: str | None


class NoticePdf(BaseModel):
    route: str
    enclosed: bool


class NoticeCopy(BaseModel):
    notice_id: str
    account_id: str
    rule_id: str
    trigger: str
    channel: str
    status: str
    sent_at: str
    recipient_role: str
    subject: str
    text: str
    content_sha256: str
    pdf: NoticePdf | None


class FailedNotice(NoticeEntry):
    account_id: str


class FailedNotices(BaseModel):
    failed: list[FailedNotice]


def _entry(record: NoticeRecord) -> dict[str, Any]:
    return {
        "notice_id": record.notice_id,
        "rule_id": record.rule,
        "channel": record.channel,
        "status": record.status,
        "at": record.at.isoformat(),
        "subject": record.subject,
        "recipient_role": record.recipient_role,
        "trigger": record.trigger,
        "content_sha256": record.content_sha256,
        "attempts": record.attempts,
        "error": record.error,
    }


@app.get(
    "/staff/<tenant>/accounts/<account_id>/notices",
    summary="An account's notice log: what was sent, when, by which channel, with its content hash",
    tags=["notices"],
    responses={**error_responses(400, 401, 403, 404), 200: {"description": "The notice log, oldest first"}},
)
def get_notice_log(
    tenant: Annotated[str, Path(description="Tenant id")],
    account_id: Annotated[str, Path(description="Account id")],
    limit: Annotated[int | None, Query(ge=1, le=MAX_LIMIT, description="Page size")] = None,
    cursor: Annotated[str | None, Query(description="next_cursor of the previous page")] = None,
) -> NoticeLogPage:
    require(app.current_event.raw_event, tenant, roles=("staff", "customer"), account_id=account_id)
    records = composition.api_log().of_account(tenant, account_id)
    start = 0
    if cursor:
        ids = [r.notice_id for r in records]
        if cursor not in ids:
            raise ApiError(400, "bad_cursor", "cursor: not a cursor of this list")
        start = ids.index(cursor) + 1
    page = records[start:] if limit is None else records[start : start + limit]
    more = limit is not None and start + limit < len(records)
    return NoticeLogPage(
        notices=[NoticeEntry(**_entry(r)) for r in page],
        next_cursor=page[-1].notice_id if more and page else None,
    )


@app.get(
    "/staff/<tenant>/notices/failed",
    summary="The failed-notices report: sends that failed and are being retried or dead-lettered",
    tags=["notices"],
    responses={**error_responses(401, 403, 404), 200: {"description": "Failed notices"}},
)
def get_failed_notices(tenant: Annotated[str, Path(description="Tenant id")]) -> FailedNotices:
    require(app.current_event.raw_event, tenant)
    failed = composition.api_log().failed(tenant)
    return FailedNotices(failed=[FailedNotice(account_id=r.account_id, **_entry(r)) for r in failed])


def _found(tenant: str, notice_id: str) -> NoticeRecord:
    record = composition.api_log().find(tenant, notice_id)
    if record is None or not (record.text or record.text_key):
        raise ApiError(
            404, "not_found", f"notice_id: no notice {notice_id} of {tenant} with its content kept"
        )
    return record


def _object(key: str, notice_id: str) -> bytes:
    body = composition.api_copies().read(key)
    if body is None:
        raise ApiError(404, "not_found", f"notice_id: the content of notice {notice_id} is not kept")
    return body


@app.get(
    "/staff/<tenant>/notices/<notice_id>",
    summary="A notice as sent: its text, and the route of its PDF; content_sha256 is the "
    "SHA-256 of the text (UTF-8) followed by the PDF's bytes",
    tags=["notices"],
    responses={**error_responses(401, 403, 404), 200: {"description": "The notice"}},
)
def get_notice(
    tenant: TenantPath,
    notice_id: NoticeIdPath,
) -> NoticeCopy:
    require(app.current_event.raw_event, tenant)
    record = _found(tenant, notice_id)
    text = record.text or _object(record.text_key, notice_id).decode()
    pdf = None
    if record.pdf_key:
        # Mailed letters and bills (mailed or attached) enclose it; an email letter is the
        # text alone, its PDF the printable copy the content hash also covers.
        enclosed = record.channel == "mail" or record.pdf_key.startswith("bills/")
        pdf = NoticePdf(route=f"/staff/{tenant}/notices/{notice_id}/pdf", enclosed=enclosed)
    return NoticeCopy(
        notice_id=record.notice_id,
        account_id=record.account_id,
        rule_id=record.rule,
        trigger=record.trigger,
        channel=record.channel,
        status=record.status,
        sent_at=record.at.isoformat(),
        recipient_role=record.recipient_role,
        subject=record.subject,
        text=text,
        content_sha256=record.content_sha256,
        pdf=pdf,
    )


@app.get(
    "/staff/<tenant>/notices/<notice_id>/pdf",
    summary="A notice's PDF as sent (the letter, or the bill it carried)",
    tags=["notices"],
    responses={
        **error_responses(401, 403, 404),
        200: {"description": "The notice's PDF", "content": {"application/pdf": {}}},
    },
)
def get_notice_pdf(
    tenant: TenantPath,
    notice_id: NoticeIdPath,
):  # no return annotation: a binary body is not validated as JSON
    require(app.current_event.raw_event, tenant)
    record = _found(tenant, notice_id)
    if not record.pdf_key:
        raise ApiError(404, "not_found", f"notice_id: notice {notice_id} has no PDF")
    return Response(
        status_code=200,
        content_type="application/pdf",
        body=_object(record.pdf_key, notice_id),
        headers={"Content-Disposition": f'attachment; filename="notice-{notice_id}.pdf"'},
    )


@app.get(
    "/staff/<tenant>/accounts/<account_id>/bills/<bill_id>/pdf",
    summary="A bill as the customer received it (PDF)",
    tags=["notices"],
    responses={
        **error_responses(401, 403, 404),
        200: {"description": "The bill PDF", "content": {"application/pdf": {}}},
    },
)
def get_bill_pdf(
    tenant: Annotated[str, Path(description="Tenant id")],
    account_id: Annotated[str, Path(description="Account id")],
    bill_id: Annotated[str, Path(description="Bill number as printed on the bill")],
):  # no return annotation: a binary body is not validated as JSON
    require(app.current_event.raw_event, tenant, roles=("staff", "customer"), account_id=account_id)
    pdf = composition.api_archive().fetch(tenant, account_id, bill_id)
    if pdf is None:
        raise ApiError(404, "not_found", f"bill_id: no bill {bill_id} for account {account_id}")
    return Response(
        status_code=200,
        content_type="application/pdf",
        body=pdf,
        headers={"Content-Disposition": f'attachment; filename="bill-{bill_id}.pdf"'},
    )


@observed(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)
