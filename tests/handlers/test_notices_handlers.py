"""notices' queue consumer: exactly once, failures retried and recorded, legal notices by mail."""

from __future__ import annotations

import base64
import email
import io
import json
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import boto3
import pytest
from handler_support import (
    ACCOUNT,
    MAIL,
    REGION,
    Stack,
    eventbridge_body,
    issued,
    lambda_context,
    rejections,
    sqs_event,
)
from moto.ses.models import ses_backends
from pypdf import PdfReader

from billing.events import BillIssued, BillOverdue, BillsIssued, IssuedLine, Party
from common.outbox import OutboxRecord, outbox_records
from notices.handlers import on_notice_event

NOW = datetime(2026, 10, 21, 13, 0, tzinfo=UTC)


def chunk_of(*bills: BillIssued) -> BillsIssued:
    """The bills as billing publishes them: one BillsIssued of the tenant's bills."""
    return BillsIssued(
        occurred_at=bills[0].occurred_at,
        tenant=bills[0].tenant,
        first_bill_id=bills[0].bill_id,
        last_bill_id=bills[-1].bill_id,
        bills=bills,
    )


def overdue(account: str, unpaid: Decimal) -> BillOverdue:
    # GR-OVERDUE: issued 2026-10-01, overdue on day 20, disconnection eligible 10 days later.
    return BillOverdue(
        occurred_at=NOW,
        tenant="grafton-sewer",
        account_id=account,
        bill_id=f"B-{account}",
        bill_date=date(2026, 10, 1),
        due_date=date(2026, 11, 1),
        overdue_on=date(2026, 10, 21),
        amount_unpaid=unpaid,
        disconnection_eligible_on=date(2026, 10, 31),
    )


def delivered(body: str, receive_count: int = 1) -> dict[str, Any]:
    event = sqs_event(body)
    event["Records"][0]["attributes"]["ApproximateReceiveCount"] = str(receive_count)
    return on_notice_event.lambda_handler(event, lambda_context())


def log(stack: Stack) -> list[dict[str, Any]]:
    return [i for i in stack.items("notices") if i["pk"].startswith("NOTICE#")]


def published(stack: Stack) -> list[OutboxRecord]:
    """The events notices' outbox publisher would send for the table's writes since last asked."""
    return outbox_records(stack.stream_records("notices"))


def test_an_ses_failure_is_retried_recorded_and_sent_once_on_a_later_attempt(notices: Stack) -> None:
    body = eventbridge_body(issued())
    # The sender is not a verified SES identity yet: SES refuses, the message is retried.
    assert delivered(body) == {"batchItemFailures": [{"itemIdentifier": "m0"}]}
    [failed] = log(notices)
    assert (failed["status"], failed["attempts"], failed["channel"]) == ("failed", 1, "email")
    assert "SES refused" in failed["error"]
    # The log line carries its event: the table's stream publishes it (common.outbox).
    assert [r.detail_type for r in published(notices)] == ["NoticeFailed"]

    boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress="billing@sewerbill.local")
    assert delivered(body, receive_count=2) == {"batchItemFailures": []}
    assert delivered(body, receive_count=1) == {"batchItemFailures": []}  # a replay: nothing more
    [sent] = log(notices)
    assert (sent["status"], sent["attempts"]) == ("sent", 2)
    assert [r.detail_type for r in published(notices)] == ["NoticeSent"]  # the replay wrote nothing
    [email] = ses_backends[ACCOUNT][REGION].sent_messages  # moto's record of accepted emails
    assert set(email.destinations) == {"ada@example.org"}


def test_the_disconnection_notice_is_mailed_with_every_required_item(notices: Stack) -> None:
    assert delivered(eventbridge_body(issued(opted_in=False))) == {"batchItemFailures": []}
    assert delivered(eventbridge_body(overdue("GR-1", Decimal("45.00")))) == {"batchItemFailures": []}
    letters = [i for i in log(notices) if i["rule"] == "GR-OVERDUE"]
    assert [(i["channel"], i["status"]) for i in letters] == [("mail", "sent")]
    pdf = notices.s3.get_object(Bucket=MAIL, Key=letters[0]["reference"])["Body"].read()
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages).replace("\n", " ")
    for phrase in (
        "Ada Lovelace",
        "12 Oak St",
        "Amount due: $45.00",
        "may be disconnected after 2026-11-01",  # the due date (notice + 10 days is 10-31)
        "deferred payment agreement",
        "up to 21 days",
        "Public Service Commission of Wisconsin",
        "(262) 555-0175",
    ):
        assert phrase in text, phrase


def test_the_disconnection_notice_names_the_premise_the_bill_was_for(notices: Stack) -> None:
    # The bill recipient is mailed at a PO box; the premise served is another address.
    bill = issued(opted_in=False).model_copy(update={"service_address": "1200 Wisconsin Ave, Grafton"})
    assert delivered(eventbridge_body(bill)) == {"batchItemFailures": []}
    assert delivered(eventbridge_body(overdue("GR-1", Decimal("45.00")))) == {"batchItemFailures": []}
    [letter] = [i for i in log(notices) if i["rule"] == "GR-OVERDUE"]
    pdf = notices.s3.get_object(Bucket=MAIL, Key=letter["reference"])["Body"].read()
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages).replace("\n", " ")
    assert "1200 Wisconsin Ave, Grafton" in text  # the service address PSC 185.37 asks for
    assert "12 Oak St" in text  # still mailed to the recipient


def test_a_notice_with_no_address_on_file_is_rejected_not_retried(notices: Stack) -> None:
    assert delivered(eventbridge_body(overdue("GR-404", Decimal("1.00")))) == {"batchItemFailures": []}
    [rejected] = rejections(notices)
    assert rejected["detail"]["error"] == "UnaddressableNotice"
    assert "GR-404" in rejected["detail"]["reason"]
    assert log(notices) == []


def test_an_event_notices_does_not_consume_is_rejected(notices: Stack) -> None:
    body = json.loads(eventbridge_body(issued()))
    body["detail-type"] = "SomethingElse"
    assert delivered(json.dumps(body)) == {"batchItemFailures": []}
    assert [e["detail"]["error"] for e in rejections(notices)] == ["MalformedMessage"]


def api_get(path: str, claims: dict[str, Any], **query: str) -> tuple[int, dict[str, Any]]:
    from handler_support import http_event

    from notices.handlers import api

    event = http_event("GET", path, query)
    event["requestContext"]["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
    response = api.lambda_handler(event, lambda_context())
    return response["statusCode"], json.loads(response["body"])


STAFF = {"sub": "clerk", "role": "staff", "tenants": "[grafton-sewer]"}


def test_the_notice_log_is_readable_by_staff_and_the_accounts_customer_only(notices: Stack) -> None:
    delivered(eventbridge_body(issued(opted_in=False, account="GR-1")))
    delivered(eventbridge_body(issued(opted_in=False, account="GR-2")))
    status, body = api_get("/staff/grafton-sewer/accounts/GR-1/notices", STAFF)
    assert status == 200
    [entry] = body["notices"]
    assert (entry["rule_id"], entry["channel"], entry["status"]) == ("N-BILL", "mail", "sent")
    assert len(entry["content_sha256"]) == 64 and body["next_cursor"] is None
    mine = {"sub": "c1", "role": "customer", "tenants": "[grafton-sewer]", "accounts": "[GR-1]"}
    assert api_get("/staff/grafton-sewer/accounts/GR-1/notices", mine)[0] == 200
    status, body = api_get("/staff/grafton-sewer/accounts/GR-2/notices", mine)
    assert (status, body["error"]["code"]) == (403, "forbidden")
    other_tenant = {**STAFF, "tenants": "[sullivan-sewer]"}
    assert api_get("/staff/grafton-sewer/accounts/GR-1/notices", other_tenant)[0] == 403


def test_the_failed_notices_report_lists_what_is_being_retried(
    notices: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handler_support import dynamodb_calls

    body = eventbridge_body(issued(opted_in=True))
    delivered(body)  # SES refuses: the sender is unverified
    calls = dynamodb_calls(monkeypatch)
    status, report = api_get("/staff/grafton-sewer/notices/failed", STAFF)
    assert status == 200
    [failed] = report["failed"]
    assert (failed["account_id"], failed["channel"], failed["attempts"]) == ("GR-1", "email", 1)
    assert "SES refused" in failed["error"]
    assert "Scan" not in calls and "Query" in calls  # its own entries (issue 31), not the table
    sullivan = {**STAFF, "tenants": "[sullivan-sewer]"}
    assert api_get("/staff/sullivan-sewer/notices/failed", sullivan)[1]["failed"] == []
    # sent on the retry: no longer failed, so no longer in the report
    boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress="billing@sewerbill.local")
    assert delivered(body, receive_count=2) == {"batchItemFailures": []}
    assert api_get("/staff/grafton-sewer/notices/failed", STAFF)[1]["failed"] == []
    assert not [i for i in notices.items("notices") if i["pk"].startswith("FAILED#")]


def test_the_bill_pdf_as_sent_is_served_to_staff_and_its_customer_only(notices: Stack) -> None:
    from handler_support import http_event

    from notices.handlers import api

    delivered(eventbridge_body(issued(opted_in=False, account="GR-1")))

    def pdf_get(account: str, claims: dict[str, Any]) -> dict[str, Any]:
        event = http_event("GET", f"/staff/grafton-sewer/accounts/{account}/bills/B-{account}/pdf")
        event["requestContext"]["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
        return api.lambda_handler(event, lambda_context())

    response = pdf_get("GR-1", STAFF)
    assert response["statusCode"] == 200 and response["isBase64Encoded"] is True
    text = PdfReader(io.BytesIO(base64.b64decode(response["body"]))).pages[0].extract_text()
    assert "Bill GR-2026Q3-GR-1" in text
    stranger = {"sub": "c2", "role": "customer", "tenants": "[grafton-sewer]", "accounts": "[GR-2]"}
    assert pdf_get("GR-1", stranger)["statusCode"] == 403
    assert pdf_get("GR-9", STAFF)["statusCode"] == 404


def test_satellite_flow_data_and_the_report_reminder_are_emailed_once(notices: Stack) -> None:
    from metering.events import SatelliteFlowReady
    from sampling.events import AnnualReportReminderDue

    boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress="billing@sewerbill.local")
    # The satellite system's address arrives with its bill (event-carried state).
    satellite = issued(opted_in=False, account="SAT-1").model_copy(
        update={"tenant": "pleasant-prairie-sewer"}
    )
    assert delivered(eventbridge_body(satellite)) == {"batchItemFailures": []}
    flow = SatelliteFlowReady(
        occurred_at=NOW,
        tenant="pleasant-prairie-sewer",
        meter_id="FM-1",
        account_id="SAT-1",
        month="2026-09",
        volume_gal=Decimal("1250000"),
        days_with_data=30,
        downloaded_on=date(2026, 10, 2),
        provide_by=date(2026, 10, 20),  # PP-SEW-SAT-FLOW: within 18 days of the download
    )
    reminder = AnnualReportReminderDue(
        occurred_at=NOW,
        tenant="pleasant-prairie-sewer",
        account_id="SAT-1",
        year=2026,
        due_on=date(2027, 2, 10),
        reminder_on=date(2027, 1, 20),
    )
    for event in (flow, reminder, flow):
        assert delivered(eventbridge_body(event)) == {"batchItemFailures": []}
    sent = sorted((i["rule"], i["channel"]) for i in log(notices) if i["rule"] != "N-BILL")
    # Email is these deliveries' channel; with an address on file they go by email, once each.
    assert sent == [("PP-SEW-REPORT", "email"), ("PP-SEW-SAT-FLOW", "email")]
    texts = []
    for message in ses_backends[ACCOUNT][REGION].sent_messages:
        parsed = email.message_from_string(message.raw_data)
        texts += [
            p.get_payload(decode=True).decode() for p in parsed.walk() if p.get_content_type() == "text/plain"
        ]
    assert any("1250000" in t and "Due by: 2026-10-20" in t for t in texts)


def mailed_text(stack: Stack, record: dict[str, Any]) -> str:
    pdf = stack.s3.get_object(Bucket=MAIL, Key=record["reference"])["Body"].read()
    return " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages).replace("\n", " ")


def test_the_appeal_decision_is_mailed_once_to_the_appellant(notices: Stack) -> None:
    from handler_support import fixture_text

    # The parcel's owner (the appellant) arrives with the stormwater bill (event-carried state).
    stormwater_bill = issued(opted_in=False, account="PPW-7").model_copy(
        update={
            "tenant": "pleasant-prairie-stormwater",
            "parcel_id": "PP-93-4-122-0100",
            "owner": Party(
                name="Lakeview Commerce LLC", address="400 Lakeview Pkwy; Pleasant Prairie, WI 53158"
            ),
        }
    )
    assert delivered(eventbridge_body(stormwater_bill)) == {"batchItemFailures": []}
    appeal = fixture_text("AppealDecided.json")  # reversed 4 to 3 at the 2026-11-10 hearing
    for _ in range(2):
        assert delivered(appeal) == {"batchItemFailures": []}
    [letter] = [i for i in log(notices) if i["rule"] == "PP-CWU-APPEAL"]
    assert (letter["channel"], letter["recipient_role"], letter["account_id"]) == ("mail", "owner", "PPW-7")
    text = mailed_text(notices, letter)
    for phrase in (
        "Lakeview Commerce LLC",
        "400 Lakeview Pkwy",
        "AP-4d1a7e9c33",
        "RC-2c9e1b7d55",
        "hearing: 2026-11-10",
        "votes: 4 to reverse, 3 to uphold",
        "reversed: the reconsideration decision is reversed",
    ):
        assert phrase in text, phrase


def test_an_appeal_decision_for_a_parcel_without_an_owner_on_file_is_rejected(notices: Stack) -> None:
    from handler_support import fixture_text

    assert delivered(fixture_text("AppealDecided.json")) == {"batchItemFailures": []}
    [rejected] = rejections(notices)
    assert rejected["detail"]["error"] == "UnaddressableNotice"
    assert log(notices) == []


def test_certified_satellite_results_are_emailed_once_with_their_deadline(notices: Stack) -> None:
    from handler_support import fixture_text

    boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress="billing@sewerbill.local")
    satellite = issued(opted_in=False, account="SAT-KENOSHA").model_copy(
        update={"tenant": "pleasant-prairie-sewer"}
    )
    assert delivered(eventbridge_body(satellite)) == {"batchItemFailures": []}
    results = fixture_text("SatelliteResultsDelivered.json")  # sampled 2025-11-20, due 2025-12-18
    for _ in range(2):
        assert delivered(results) == {"batchItemFailures": []}
    [sent] = [i for i in log(notices) if i["rule"] == "PP-SEW-SAT-SAMPLE"]
    assert (sent["channel"], sent["status"]) == ("email", "sent")
    [message] = [
        m for m in ses_backends[ACCOUNT][REGION].sent_messages if "Certified lab results" in m.raw_data
    ]
    parsed = email.message_from_string(message.raw_data)
    [text] = [
        p.get_payload(decode=True).decode() for p in parsed.walk() if p.get_content_type() == "text/plain"
    ]
    for phrase in (
        "sample: SAT-2025-11-20",
        "bod (mg/l): 212, Northern Lake Service, analysed 2025-11-25",
        "fog (mg/l): <2",
        "tss (mg/l): 180",
        "Due by: 2025-12-18",
    ):
        assert phrase in text, phrase


def test_the_usage_chart_holds_each_billed_period_once(notices: Stack) -> None:
    def quarter(start: date, end: date, kgal: str) -> BillIssued:
        bill = issued(opted_in=False, account="GR-1")
        volume = IssuedLine(
            rule_id="GR-VOL",
            description="Volume charge",
            quantity=kgal,
            unit="kgal",
            rate="6.50",
            amount=Decimal(0),
        )
        return bill.model_copy(
            update={
                "period_start": start,
                "period_end": end,
                "bill_id": f"B-GR-1-{start.isoformat()}",
                "lines": (*bill.lines, volume),
            }
        )

    q2 = quarter(date(2026, 4, 1), date(2026, 7, 1), "19")
    q3 = quarter(date(2026, 7, 1), date(2026, 10, 1), "23")
    for event in (q2, q2, q3):  # Q2 delivered twice: its period counts once
        assert delivered(eventbridge_body(event)) == {"batchItemFailures": []}
    archived = notices.s3.get_object(Bucket=MAIL, Key="bills/grafton-sewer/GR-1/B-GR-1-2026-07-01.pdf")
    text = PdfReader(io.BytesIO(archived["Body"].read())).pages[0].extract_text()
    chart = text[text.index("Usage, last 13 periods") :]
    # 19 kgal in the April quarter, 23 kgal in the July quarter, each one bar.
    assert chart.count("04/26") == 1 and chart.count("07/26") == 1
    assert "19.0" in chart and "23.0" in chart


def test_a_chunk_of_bills_sends_each_and_retries_only_the_one_that_failed(notices: Stack) -> None:
    """Billing publishes its bills packed (BillsIssued): each is handled as its own
    BillIssued, and one bill's failed send neither stops the others nor sends them twice."""

    mailed, emailed, also = (
        issued(opted_in=False, account="GR-1"),
        issued(opted_in=True, account="GR-2"),  # SES refuses until the sender is verified
        issued(opted_in=False, account="GR-3"),
    )
    chunk = chunk_of(mailed, emailed, also)
    body = eventbridge_body(chunk)

    assert delivered(body) == {"batchItemFailures": [{"itemIdentifier": "m0"}]}
    states = {i["account_id"]: (i["status"], i["attempts"]) for i in log(notices)}
    assert states == {"GR-1": ("sent", 1), "GR-2": ("failed", 1), "GR-3": ("sent", 1)}

    boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress="billing@sewerbill.local")
    assert delivered(body, receive_count=2) == {"batchItemFailures": []}
    states = {i["account_id"]: (i["status"], i["attempts"]) for i in log(notices)}
    assert states == {"GR-1": ("sent", 1), "GR-2": ("sent", 2), "GR-3": ("sent", 1)}
    assert len(ses_backends[ACCOUNT][REGION].sent_messages) == 1  # the email, once
    assert rejections(notices) == []


def test_a_chunk_member_that_can_never_be_sent_is_rejected_and_the_rest_sent(
    notices: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from notices.app.delivery import UnaddressableNotice
    from notices.handlers import on_notice_event as handler

    bills = tuple(issued(opted_in=False, account=f"GR-{n}") for n in (1, 2, 3))
    real = handler.deliver_bills  # Grafton's bills are delivered together, each its own outcome

    def refusing(events: Any, **kwargs: Any) -> Any:
        done = iter(real([e for e in events if e.account_id != "GR-2"], **kwargs))
        refused = UnaddressableNotice("no address on file for account GR-2 of grafton-sewer")
        return [refused if e.account_id == "GR-2" else next(done) for e in events]

    monkeypatch.setattr(handler, "deliver_bills", refusing)
    chunk = chunk_of(*bills)
    body = eventbridge_body(chunk)

    assert delivered(body) == {"batchItemFailures": []}
    assert sorted((i["account_id"], i["status"]) for i in log(notices)) == [
        ("GR-1", "sent"),
        ("GR-3", "sent"),
    ]
    [rejected] = rejections(notices)
    assert rejected["detail"]["error"] == "MembersRejected"
    assert rejected["detail"]["reason"] == (
        "1 of 3 members refused: bills.1 (B-GR-2): UnaddressableNotice: no address on file for account GR-2 of grafton-sewer"
    )
    assert delivered(body, receive_count=2) == {"batchItemFailures": []}  # again: nothing more
    assert len(log(notices)) == 2 and len(rejections(notices)) == 1


@pytest.mark.parametrize(("name", "accounts"), [("BillIssued", 1), ("BillsIssued", 2)])
def test_billings_bill_fixtures_are_each_sent_once(notices: Stack, name: str, accounts: int) -> None:
    """STYLE 5: what billing publishes for its bills (a chunk; a lone bill from before it),
    as its fixture shows, run through notices' handler."""
    from handler_support import fixture_text

    boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress="billing@sewerbill.local")
    body = fixture_text(f"{name}.json")
    bills = json.loads(body)["detail"].get("bills") or [json.loads(body)["detail"]]

    assert delivered(body) == {"batchItemFailures": []}
    assert delivered(body, receive_count=2) == {"batchItemFailures": []}

    sent = {(i["account_id"], i["status"]) for i in log(notices)}
    assert {account for account, _ in sent} == {b["account_id"] for b in bills} and len(bills) == accounts
    assert {status for _, status in sent} == {"sent"}
    assert rejections(notices) == []


def test_a_malformed_bill_in_a_chunk_costs_only_itself_and_is_rejected_by_name(notices: Stack) -> None:
    bills = tuple(issued(opted_in=False, account=f"GR-{n}") for n in (1, 2, 3))
    chunk = chunk_of(*bills)
    body = json.loads(eventbridge_body(chunk))
    del body["detail"]["bills"][1]["total"]

    assert delivered(json.dumps(body)) == {"batchItemFailures": []}

    assert sorted((i["account_id"], i["status"]) for i in log(notices)) == [
        ("GR-1", "sent"),
        ("GR-3", "sent"),
    ]
    [rejected] = rejections(notices)
    assert rejected["detail"]["error"] == "MembersRejected"
    reason = rejected["detail"]["reason"]
    assert reason.startswith(
        "1 of 3 members refused: bills.1 (B-GR-2): MalformedMessage: BillsIssued bills.1"
    )
    assert "total" in reason


@pytest.mark.parametrize("bills", [None, [], "GR-1", [1] * 1001])
def test_a_chunk_without_a_list_of_bills_is_rejected_whole(notices: Stack, bills: Any) -> None:
    chunk = chunk_of(issued())
    body = json.loads(eventbridge_body(chunk))
    body["detail"]["bills"] = bills

    assert delivered(json.dumps(body)) == {"batchItemFailures": []}

    [rejected] = rejections(notices)
    assert rejected["detail"]["error"] == "MalformedMessage"
    assert rejected["detail"]["reason"].startswith("BillsIssued: bills: ")
    assert log(notices) == []
