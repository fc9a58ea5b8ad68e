"""X-IMMUTABLE: billing's BillAdjusted (a credit or debit memo on an issued bill) becomes a
memo to the bill's recipient, sent once however often the event arrives, by the channel a
bill takes (email where opted in, else mail)."""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

from handler_support import MAIL, Stack, eventbridge_body, fixture_text, lambda_context, rejections, sqs_event
from pypdf import PdfReader
from test_notices_handlers import issued

from billing.events import AdjustedFund, BillAdjusted
from common.messages import parse_event
from notices.handlers import on_notice_event


def delivered(body: str) -> dict[str, Any]:
    return on_notice_event.lambda_handler(sqs_event(body), lambda_context())


def memos(stack: Stack) -> list[dict[str, Any]]:
    return [i for i in stack.items("notices") if i["pk"].startswith("NOTICE#") and i["rule"] == "X-IMMUTABLE"]


def test_a_rerating_credit_is_mailed_once_to_the_bill_recipient_with_its_funds_and_reason(
    notices: Stack,
) -> None:
    # The recipient's address arrives with the bill (event-carried state), then the memo:
    # the fixture's Q4 credit of 19.50 = 17.16 O&M + 2.34 replacement (GR-FUNDS), twice.
    assert delivered(eventbridge_body(issued(opted_in=False))) == {"batchItemFailures": []}
    memo = fixture_text("BillAdjusted.json")
    for _ in range(2):
        assert delivered(memo) == {"batchItemFailures": []}
    [letter] = memos(notices)
    assert (letter["channel"], letter["status"], letter["account_id"]) == ("mail", "sent", "GR-1")
    pdf = notices.s3.get_object(Bucket=MAIL, Key=letter["reference"])["Body"].read()
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages).replace("\n", " ")
    for phrase in (
        "Ada Lovelace",
        "12 Oak St",
        "Credit memo on your bill GR-2027-000001: -$19.50",
        "memo: credit of $19.50",
        "fund om: -$17.16",
        "fund replacement: -$2.34",
        "23000 gal re-determined as 20000 gal",
        "X-IMMUTABLE re-rating (credit memo)",
        "RERATE-GR-2027-000001-001",  # the printed number, never the internal bill id
    ):
        assert phrase in text, phrase


def test_a_debit_memo_to_a_customer_who_opted_in_is_emailed(notices: Stack) -> None:
    import boto3
    from handler_support import REGION

    boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress="billing@sewerbill.local")
    delivered(eventbridge_body(issued(opted_in=True)))
    debit = parse_event(fixture_text("BillAdjusted.json"), BillAdjusted).model_copy(
        update={
            "reference": "ADJ-STAFF-7",
            "amount": Decimal("19.50"),
            "memo": "debit",
            "kind": "correction",
        }
    )
    assert delivered(eventbridge_body(debit)) == {"batchItemFailures": []}
    [letter] = memos(notices)
    assert (letter["channel"], letter["status"]) == ("email", "sent")


def test_a_memo_for_an_account_without_an_address_on_file_is_rejected_not_retried(notices: Stack) -> None:
    assert delivered(fixture_text("BillAdjusted.json")) == {"batchItemFailures": []}
    [rejected] = rejections(notices)
    assert rejected["detail"]["error"] == "UnaddressableNotice"
    assert memos(notices) == []


def test_a_late_charge_reversed_by_a_backdated_payment_is_a_credit_memo_naming_the_charge(
    notices: Stack,
) -> None:
    assert delivered(eventbridge_body(issued(opted_in=False))) == {"batchItemFailures": []}
    reason = (
        "GR-LATE GR-1-2026-07-01-LATE_CHARGE-000 of 5.84 reduced to 0.00 (bill paid by 2026-10-21): payment "
        "LB-77 dated 2026-10-20 was posted after it was assessed (X-DUE; X-IMMUTABLE)"
    )
    reversal = parse_event(fixture_text("BillAdjusted.json"), BillAdjusted).model_copy(
        update={
            "reference": "REV-GR-1-2026-07-01-LATE_CHARGE-000-LB-77",
            "amount": Decimal("-5.84"),
            "lines": (AdjustedFund(fund="om", amount=Decimal("-5.84")),),
            "kind": "reversal",
            "from_volume_gal": None,
            "to_volume_gal": None,
            "reason": reason,
            "derivation": reason,
            "rule_ids": ("GR-LATE", "X-DUE", "X-IMMUTABLE"),
            "reverses_entry_id": "GR-1-2026-07-01-LATE_CHARGE-000",
        }
    )
    for _ in range(2):
        assert delivered(eventbridge_body(reversal)) == {"batchItemFailures": []}
    [letter] = memos(notices)
    pdf = notices.s3.get_object(Bucket=MAIL, Key=letter["reference"])["Body"].read()
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages).replace("\n", " ")
    for phrase in (
        "Credit memo on your bill GR-2027-000001: -$5.84",
        "late charge reduced: the late charge on bill GR-2027-000001",
        "GR-LATE the late charge on bill GR-2027-000001 of 5.84 reduced to 0.00",
        "payment LB-77 dated 2026-10-20",
        "rules: GR-LATE, X-DUE, X-IMMUTABLE",
    ):
        assert phrase in text, phrase


def test_gr_toxic_the_debit_memo_names_the_rule_and_its_basis(notices: Stack) -> None:
    assert delivered(eventbridge_body(issued(opted_in=False))) == {"batchItemFailures": []}
    charge = parse_event(fixture_text("BillAdjusted.json"), BillAdjusted).model_copy(
        update={
            "reference": "TOX-1",
            "amount": Decimal("1840.00"),
            "memo": "debit",
            "lines": (AdjustedFund(fund="om", amount=Decimal("1840.00")),),
            "kind": "correction",
            "from_volume_gal": None,
            "to_volume_gal": None,
            "reason": "added treatment after a cadmium discharge",
            "derivation": None,
            "rule_id": "GR-TOXIC",
            "rule_ids": ("GR-TOXIC",),
            "basis": {"pollutant": "cadmium", "added_cost": "1840.00", "document": "WWTP invoice 2026-114"},
        }
    )
    assert delivered(eventbridge_body(charge)) == {"batchItemFailures": []}
    [letter] = memos(notices)
    pdf = notices.s3.get_object(Bucket=MAIL, Key=letter["reference"])["Body"].read()
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages).replace("\n", " ")
    for phrase in (
        "Debit memo on your bill GR-2027-000001: $1,840.00",
        "charged under: GR-TOXIC",
        "basis: pollutant cadmium; added cost 1840.00; document WWTP invoice 2026-114",
    ):
        assert phrase in text, phrase
