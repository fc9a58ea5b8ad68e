"""Billing's bills and payments, kept for the reconsideration windows (PP-CWU-RECONSIDER).

Trigger: sewerbill.billing BillIssued / PaymentApplied (stormwater tenant) on EventBus ->
rule -> SQS queue -> here. A bill without a parcel is not a stormwater charge: skipped.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import ValidationError

from common.handling import consume_sqs
from common.messages import MalformedMessage, first_error, parse_envelope
from stormwater import composition
from stormwater.billing_inputs import BILLING_SOURCE, BillIssuedInput, PaymentAppliedInput

logger = Logger()


def record_handler(record: SQSRecord) -> None:
    envelope = parse_envelope(record.body)
    if envelope.source != BILLING_SOURCE or envelope.detail_type not in ("BillIssued", "PaymentApplied"):
        raise MalformedMessage(f"unexpected {envelope.source}/{envelope.detail_type}")
    try:
        if envelope.detail_type == "BillIssued":
            bill = BillIssuedInput.model_validate(envelope.detail)
            kept: int | bool = composition.service().keep_bill(bill)
        else:
            payment = PaymentAppliedInput.model_validate(envelope.detail)
            kept = composition.service().keep_payment(payment)
    except ValidationError as exc:
        raise MalformedMessage(f"{envelope.detail_type}: {first_error(exc)}") from None
    logger.info("billing event kept", extra={"detail_type": envelope.detail_type, "kept": kept})


def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
