"""Billing's bills and payments, kept for the reconsideration windows (PP-CWU-RECONSIDER).

Trigger: sewerbill.billing BillsIssued (a chunk of bills; a lone BillIssued too) /
PaymentApplied (stormwater tenant) on EventBus -> rule -> SQS queue -> here. A bill without
a parcel is not a stormwater charge: skipped.
"""

from __future__ import annotations

import functools
from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import ValidationError

from billing.events import chunk_bills
from common.handling import consume_sqs, each_member
from common.messages import MalformedMessage, first_error, parse_envelope
from common.observability import logger, observed
from stormwater import composition
from stormwater.app.billing_inputs import BILLING_SOURCE, BillIssuedInput, PaymentAppliedInput

CONSUMED = ("BillsIssued", "BillIssued", "PaymentApplied")


def record_handler(record: SQSRecord) -> None:
    envelope = parse_envelope(record.body)
    if envelope.source != BILLING_SOURCE or envelope.detail_type not in CONSUMED:
        raise MalformedMessage(f"unexpected {envelope.source}/{envelope.detail_type}")
    service = composition.service()
    try:
        if envelope.detail_type == "BillsIssued":
            # each bill validated and kept on its own: a malformed one costs only itself
            try:
                bills = chunk_bills(envelope.detail)
            except ValueError as exc:
                raise MalformedMessage(f"{envelope.detail_type}: {exc}") from None
            kept: int | bool = sum(
                each_member((key, functools.partial(_keep_bill, service, key, bill)) for key, bill in bills)
            )
        elif envelope.detail_type == "BillIssued":
            kept = service.keep_bill(BillIssuedInput.model_validate(envelope.detail))
        else:
            kept = service.keep_payment(PaymentAppliedInput.model_validate(envelope.detail))
    except ValidationError as exc:
        raise MalformedMessage(f"{envelope.detail_type}: {first_error(exc)}") from None
    logger.info("billing event kept", extra={"detail_type": envelope.detail_type, "kept": kept})


def _keep_bill(service: Any, key: str, detail: Any) -> bool:
    try:
        bill = BillIssuedInput.model_validate(detail)
    except ValidationError as exc:
        raise MalformedMessage(f"BillsIssued {key}: {first_error(exc)}") from None
    kept: bool = service.keep_bill(bill)
    return kept


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
