"""A bill's delivery at the cost of its work (issue 31): the AWS calls notices makes for a
chunk of Grafton bills, counted at botocore as the handler makes them (moto in process).

Per bill, the hot path is its PDF stored, and for an email its send and its log line (one
item carrying its ``NoticeSent``); everything else is the chunk's (its reads and its
writes in batches, its letters in one object), so a bill costs at most 3 calls. The next
morning's print batch reads that object once, not each letter's PDF."""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import botocore.client
import pytest
from handler_support import MAIL, REGION, Stack, eventbridge_body, issued, lambda_context, sqs_event
from pypdf import PdfReader

from billing.events import BillIssued, BillsIssued
from common import clock
from common.outbox import outbox_records
from notices.handlers import on_notice_event, run_print_batch

BILLS = 40  # every other one opted in to email


@pytest.fixture
def calls(notices: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Every AWS call made in this process from here on, as ``service:Operation``."""
    boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress="billing@sewerbill.local")
    simulated = clock.FixedClock(datetime(2026, 10, 1, 13, 0, tzinfo=UTC))
    clock.install(simulated)
    counted: Counter[str] = Counter()
    real = botocore.client.BaseClient._make_api_call

    def counting(client: Any, operation: str, params: dict[str, Any]) -> Any:
        counted[f"{client.meta.service_model.service_name}:{operation}"] += 1
        return real(client, operation, params)

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", counting)
    yield counted
    clock.install(None)


def chunk(n: int, *, email_every: int = 2) -> str:
    bills: list[BillIssued] = [
        issued(opted_in=i % email_every == 0, account=f"GR-{i:03d}", email=f"c{i}@example.org")
        for i in range(n)
    ]
    return eventbridge_body(
        BillsIssued(
            occurred_at=bills[0].occurred_at,
            tenant="grafton-sewer",
            first_bill_id=bills[0].bill_id,
            last_bill_id=bills[-1].bill_id,
            bills=tuple(bills),
        )
    )


def deliver(body: str, receive_count: int = 1) -> dict[str, Any]:
    event = sqs_event(body)
    event["Records"][0]["attributes"]["ApproximateReceiveCount"] = str(receive_count)
    return on_notice_event.lambda_handler(event, lambda_context())


def sent(stack: Stack) -> Counter[str]:
    return Counter(
        i["channel"]
        for i in stack.items("notices")
        if i["pk"].startswith("NOTICE#") and i["status"] == "sent"
    )


def test_a_bill_is_delivered_in_at_most_three_calls(notices: Stack, calls: Counter[str]) -> None:
    assert deliver(chunk(BILLS)) == {"batchItemFailures": []}
    assert sent(notices) == {"email": BILLS // 2, "mail": BILLS // 2}
    made = sum(calls.values())
    assert made <= 3 * BILLS, calls
    # Per bill: its PDF archived; per email: its send and its log line, nothing else.
    assert calls["s3:PutObject"] == BILLS + 1  # and the chunk's letters, one object
    assert calls["ses:SendRawEmail"] == BILLS // 2
    assert calls["dynamodb:PutItem"] == BILLS // 2
    assert calls["dynamodb:GetItem"] == 0 and calls["s3:GetObject"] == 0
    # The chunk's own: its reads and writes in batches of 100, whatever its size.
    shared = made - calls["s3:PutObject"] - calls["ses:SendRawEmail"] - calls["dynamodb:PutItem"]
    assert shared <= 6, calls
    # Each log line carries its event: one NoticeSent a notice, published by the stream.
    events = Counter(r.detail_type for r in outbox_records(notices.stream_records("notices")))
    assert events["NoticeSent"] == BILLS

    calls.clear()
    assert deliver(chunk(BILLS), receive_count=2) == {"batchItemFailures": []}  # a redelivery
    assert sent(notices) == {"email": BILLS // 2, "mail": BILLS // 2}  # nothing sent twice
    assert calls["ses:SendRawEmail"] == 0 and calls["s3:PutObject"] == 0


def test_an_all_email_chunk_costs_three_calls_a_bill_and_its_shared_reads(
    notices: Stack, calls: Counter[str]
) -> None:
    assert deliver(chunk(BILLS, email_every=1)) == {"batchItemFailures": []}
    assert sent(notices) == {"email": BILLS}
    per_bill = calls["s3:PutObject"] + calls["ses:SendRawEmail"] + calls["dynamodb:PutItem"]
    assert per_bill == 3 * BILLS
    assert sum(calls.values()) - per_bill <= 4, calls  # one BatchGetItem and one transaction


def test_the_print_batch_reads_the_chunks_letters_once(notices: Stack, calls: Counter[str]) -> None:
    assert deliver(chunk(BILLS)) == {"batchItemFailures": []}
    calls.clear()
    clock.install(clock.FixedClock(datetime(2026, 10, 2, 10, 0, tzinfo=UTC)))  # 05:00 in Grafton
    body = json.dumps({"scheduled_time": "2026-10-02T10:00:00Z"})
    assert run_print_batch.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}
    assert calls["s3:GetObject"] == 1, calls  # one object holds the chunk's 20 letters
    batch = notices.s3.get_object(Bucket=MAIL, Key="batches/2026-10-01/batch.pdf")["Body"].read()
    pages = PdfReader(io.BytesIO(batch)).pages
    assert len(pages) >= BILLS // 2
    text = " ".join(page.extract_text() for page in pages)
    assert all(f"GR-2026Q3-GR-{i:03d}" in text for i in range(1, BILLS, 2))  # every letter, whole
