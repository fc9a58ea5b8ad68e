"""Issue 28 item 4: a notice as sent, readable by a clerk by its id (staff only)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from handler_support import TABLES, Stack, eventbridge_body, http_event, issued, lambda_context, sqs_event
from pypdf import PdfReader

from billing.events import BillIssued, BillOverdue
from notices.handlers import api, on_notice_event

STAFF = {"sub": "clerk", "role": "staff", "tenants": "[grafton-sewer]"}


def issued_here() -> BillIssued:
    """The bill of these tests: its printed number differs from its id, and no email."""
    return issued(False, bill_id="GR-1-2026-07-01", bill_number="GR-202607-GR-1", email=None)


def overdue() -> BillOverdue:
    return BillOverdue(
        occurred_at=datetime(2026, 10, 21, 13, tzinfo=UTC),
        tenant="grafton-sewer",
        account_id="GR-1",
        bill_id="GR-1-2026-07-01",
        bill_date=date(2026, 10, 1),
        due_date=date(2026, 11, 1),
        overdue_on=date(2026, 10, 21),
        amount_unpaid=Decimal("45.00"),
        disconnection_eligible_on=date(2026, 10, 31),
    )


def delivered(event: Any) -> None:
    on_notice_event.lambda_handler(sqs_event(eventbridge_body(event)), lambda_context())


def get(path: str, claims: dict[str, Any], query: dict[str, str] | None = None) -> dict[str, Any]:
    event = http_event("GET", path, query)
    event["requestContext"]["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
    return api.lambda_handler(event, lambda_context())


def notice_ids(rule: str) -> list[str]:
    response = get("/staff/grafton-sewer/accounts/GR-1/notices", STAFF)
    return [n["notice_id"] for n in json.loads(response["body"])["notices"] if n["rule_id"] == rule]


def test_x_audit_a_clerk_reads_a_disconnection_notice_as_sent_and_its_hash_matches(notices: Stack) -> None:
    delivered(issued_here())
    delivered(overdue())
    [notice_id] = notice_ids("GR-OVERDUE")
    response = get(f"/staff/grafton-sewer/notices/{notice_id}", STAFF)
    assert response["statusCode"] == 200
    body = json.loads(response["body"])
    assert (body["notice_id"], body["account_id"], body["rule_id"], body["channel"]) == (
        notice_id,
        "GR-1",
        "GR-OVERDUE",
        "mail",
    )
    assert body["trigger"] == "BillOverdue#grafton-sewer#GR-1#GR-1-2026-07-01"
    assert body["subject"].startswith("Disconnection notice: $45.00")
    assert "Amount due: $45.00" in body["text"] and "GR-202607-GR-1" in body["text"]
    assert body["pdf"] == {"route": f"/staff/grafton-sewer/notices/{notice_id}/pdf", "enclosed": True}
    pdf = get(body["pdf"]["route"], STAFF)
    assert pdf["statusCode"] == 200 and pdf["headers"]["Content-Type"] == "application/pdf"
    pdf_bytes = base64.b64decode(pdf["body"])
    # The log's content hash is of exactly this text, then this PDF.
    assert hashlib.sha256(body["text"].encode() + pdf_bytes).hexdigest() == body["content_sha256"]
    printed = PdfReader(io.BytesIO(pdf_bytes)).pages[0].extract_text()
    assert "DISCONNECTION NOTICE" in printed and "GR-202607-GR-1" in printed


def test_x_audit_a_bills_notice_points_to_the_bill_pdf_it_carried(notices: Stack) -> None:
    delivered(issued_here())
    [notice_id] = notice_ids("N-BILL")
    body = json.loads(get(f"/staff/grafton-sewer/notices/{notice_id}", STAFF)["body"])
    pdf_bytes = base64.b64decode(get(body["pdf"]["route"], STAFF)["body"])
    assert "Bill GR-202607-GR-1" in PdfReader(io.BytesIO(pdf_bytes)).pages[0].extract_text()
    assert hashlib.sha256(body["text"].encode() + pdf_bytes).hexdigest() == body["content_sha256"]


def test_x_audit_a_notice_is_staffs_of_its_tenant_only(notices: Stack) -> None:
    delivered(issued_here())
    [notice_id] = notice_ids("N-BILL")
    customer = {"sub": "c1", "role": "customer", "tenants": "[grafton-sewer]", "accounts": "[GR-1]"}
    response = get(f"/staff/grafton-sewer/notices/{notice_id}", customer)
    assert (response["statusCode"], json.loads(response["body"])["error"]["code"]) == (403, "forbidden")
    assert get(f"/staff/grafton-sewer/notices/{notice_id}/pdf", customer)["statusCode"] == 403
    # Another tenant's staff, asking under its own tenant, finds nothing by this id.
    sullivan = {**STAFF, "tenants": "[sullivan-sewer]"}
    response = get(f"/staff/sullivan-sewer/notices/{notice_id}", sullivan)
    assert (response["statusCode"], json.loads(response["body"])["error"]["code"]) == (404, "not_found")
    assert get(f"/staff/grafton-sewer/notices/{notice_id}", sullivan)["statusCode"] == 403
    unknown = get("/staff/grafton-sewer/notices/0123456789abcdef0123456789abcdef", STAFF)
    assert unknown["statusCode"] == 404
    assert json.loads(unknown["body"])["error"]["message"].startswith("notice_id:")
    assert (
        get("/staff/grafton-sewer/notices/0123456789abcdef0123456789abcdef/pdf", STAFF)["statusCode"] == 404
    )


def test_x_audit_a_tenant_with_5000_notices_answers_a_notice_by_its_key_and_pages_its_log(
    notices: Stack,
) -> None:
    """Volume: 5,000 notices of one tenant (1,000 on account GR-BIG). The notice by id is one
    key lookup (GetItem on the id's index item, then on the notice: no Scan, no Query),
    and the account's log, a page of 100 at a time, gives each of its notices once, oldest
    first."""
    from unittest import mock

    import botocore.client

    from notices.adapters.aws import _record_item
    from notices.domain.delivery import NoticeRecord

    delivered(issued_here())
    [real] = notice_ids("N-BILL")
    ddb = notices.ddb
    table = TABLES["notices"]
    items = []
    for n in range(5000):
        account = "GR-BIG" if n < 1000 else f"GR-{n % 40:03d}X"
        record = NoticeRecord(
            notice_id=hashlib.sha256(f"bulk-{n}".encode()).hexdigest()[:32],
            tenant="grafton-sewer",
            account_id=account,
            rule="N-BILL",
            channel="mail",
            recipient_role="customer",
            recipient_name=f"Customer {n}",
            trigger=f"BillIssued#grafton-sewer#{account}#B-{n}",
            subject=f"Your bill {n}",
            status="sent",
            at=datetime(2026, 10, 1, 12, tzinfo=UTC) + timedelta(minutes=n),
            content_sha256="0" * 64,
        )
        items.append(_record_item(record))
        items.append({"pk": "NOTICEID#grafton-sewer", "sk": record.notice_id, "account_id": account})
    from common.dynamo import to_item

    for start in range(0, len(items), 25):
        ddb.batch_write_item(
            RequestItems={table: [{"PutRequest": {"Item": to_item(i)}} for i in items[start : start + 25]]}
        )

    calls: list[str] = []
    real_call = botocore.client.BaseClient._make_api_call

    def counted(self: Any, operation: str, params: dict[str, Any]) -> Any:
        if self.meta.service_model.service_name == "dynamodb":
            calls.append(operation)
        return real_call(self, operation, params)

    with mock.patch.object(botocore.client.BaseClient, "_make_api_call", counted):
        response = get(f"/staff/grafton-sewer/notices/{real}", STAFF)
    assert response["statusCode"] == 200 and json.loads(response["body"])["notice_id"] == real
    assert calls == ["GetItem", "GetItem"]

    seen: list[str] = []
    query = {"limit": "100"}
    pages = 0
    while True:
        page = json.loads(get("/staff/grafton-sewer/accounts/GR-BIG/notices", STAFF, query)["body"])
        seen += [n["notice_id"] for n in page["notices"]]
        pages += 1
        if page["next_cursor"] is None:
            break
        query = {"limit": "100", "cursor": page["next_cursor"]}
    expected = [hashlib.sha256(f"bulk-{n}".encode()).hexdigest()[:32] for n in range(1000)]
    assert (pages, seen) == (10, expected)
