"""Notices through the local runtime on moto server: a BillIssued for an opted-in customer
gives exactly one email (read back from the emulator's SES, PDF attached), the others one
letter each in the day's print batch; the same event twice sends nothing twice."""

from __future__ import annotations

import email
import io
import json
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2026, 10, 1, 13, 0, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
    ) as runtime:
        yield runtime


def bill_issued(
    account: str, *, opted_in: bool, zip_code: str, tenant: str = "grafton-sewer"
) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "event_id": f"evt-{account}",
        "occurred_at": "2026-10-01T12:00:00+00:00",
        "tenant": tenant,
        "account_id": account,
        "bill_id": f"B-{account}",
        "bill_number": f"GR-2026Q3-{account}",
        "period_start": "2026-07-01",
        "period_end": "2026-10-01",
        "bill_date": "2026-10-01",
        "due_date": "2026-11-01",
        "lines": [
            {
                "rule_id": "GR-SVC",
                "description": 'Quarterly service charge, 5/8" meter',
                "quantity": "1",
                "unit": "quarter",
                "rate": "45.00",
                "amount": "45.00",
            },
            {
                "rule_id": "GR-VOL",
                "description": "Volume charge",
                "quantity": "23",
                "unit": "kgal",
                "rate": "6.50",
                "amount": "149.50",
            },
        ],
        "total": "194.50",
        "previous_balance": "0.00",
        "payments_since": "0.00",
        "amount_due": "194.50",
        "estimated": False,
        "recipient": {
            "name": f"Customer {account}",
            "address": f"{account} Main St; Grafton, WI {zip_code}",
            "email": f"{account.lower()}@example.org",
            "email_opt_in": opted_in,
        },
        "parcel_id": None,
    }


def test_an_opted_in_customer_gets_one_email_and_the_others_a_letter_once(rt: LocalRuntime) -> None:
    bills = [
        bill_issued("GR-1", opted_in=True, zip_code="53024"),
        bill_issued("GR-2", opted_in=False, zip_code="53012"),
        bill_issued("GR-3", opted_in=False, zip_code="53004"),
    ]
    for detail in bills:
        rt.put_event("sewerbill.billing", "BillIssued", detail, bus="EventBus")
    rt.drain()
    # The same events again (a redelivery or a replay): nothing is sent twice.
    for detail in bills:
        rt.put_event("sewerbill.billing", "BillIssued", detail, bus="EventBus")
    rt.drain()
    assert rt.dead_letters == []

    raw = raw_emails(rt)
    assert len(raw) == 1
    message = email.message_from_string(raw[0]["raw_data"])
    assert message["To"] == "gr-1@example.org"
    parts = {part.get_content_type(): part for part in message.walk()}
    assert "text/plain" in parts and "text/html" in parts
    pdf = parts["application/pdf"].get_payload(decode=True)
    text = PdfReader(io.BytesIO(pdf)).pages[0].extract_text()
    assert "GR-2026Q3-GR-1" in text and "$194.50" in text and "Due date November 1, 2026" in text

    # The next morning's print batch holds the two mailed bills, sorted by ZIP.
    rt.clock.advance(to=datetime(2026, 10, 2, 12, 0, tzinfo=UTC))
    s3 = rt.client("s3")
    bucket = rt.resource("MailBucket")
    manifest = s3.get_object(Bucket=bucket, Key="batches/2026-10-01/manifest.csv")["Body"].read().decode()
    rows = manifest.splitlines()
    assert rows[0].startswith("sequence,zip,name")
    assert [r.split(",")[1] for r in rows[1:]] == ["53004", "53012"]
    batch = s3.get_object(Bucket=bucket, Key="batches/2026-10-01/batch.pdf")["Body"].read()
    pages = PdfReader(io.BytesIO(batch)).pages
    assert len(pages) == 2
    assert "GR-2026Q3-GR-3" in pages[0].extract_text()
    # ... announced once through the notices outbox, naming the objects (claim check).
    outbox = [i for i in items_of(rt) if i["pk"]["S"].startswith("OUTBOX#")]
    announced = [
        json.loads(i["detail"]["S"]) for i in outbox if i["detail_type"]["S"] == "PrintBatchAssembled"
    ]
    assert [(a["day"], a["letters"], a["pdf_key"]) for a in announced] == [
        ("2026-10-01", 2, "batches/2026-10-01/batch.pdf")
    ]

    # The notice log: one entry per notice, channel and content hash, readable per account.
    log = [i for i in items_of(rt) if i["pk"]["S"].startswith("NOTICE#")]
    assert sorted((i["account_id"]["S"], i["channel"]["S"], i["status"]["S"]) for i in log) == [
        ("GR-1", "email", "sent"),
        ("GR-2", "mail", "sent"),
        ("GR-3", "mail", "sent"),
    ]
    assert all(len(i["content_sha256"]["S"]) == 64 for i in log)


def raw_emails(rt: LocalRuntime) -> list[dict[str, Any]]:
    with urllib.request.urlopen(rt.emulator.endpoint_url + "/moto-api/data.json", timeout=10) as resp:  # noqa: S310
        data = json.loads(resp.read())
    # moto's model data: every RawMessage the emulator's SES accepted, with its MIME text.
    return list(data.get("ses", {}).get("RawMessage", []))


def items_of(rt: LocalRuntime) -> list[dict[str, Any]]:
    pages = rt.client("dynamodb").get_paginator("scan").paginate(TableName=rt.resource("NoticesTable"))
    return [item for page in pages for item in page["Items"]]
