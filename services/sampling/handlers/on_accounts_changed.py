"""Billing's accounts kept by sampling, and the lab lines waiting for them taken in (issue 26).

Trigger: sewerbill.billing ``AccountsChanged`` (the sewer tenants) on EventBus -> rule ->
SQS queue -> here. Each version is validated on its own: a malformed one is rejected alone
(``MessageRejected``), the others kept.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import ValidationError

from billing.events import AccountVersion, chunk_accounts
from common.handling import consume_sqs
from common.messages import MalformedMessage, first_error, parse_envelope
from common.observability import logger, observed
from sampling import composition
from sampling.domain.accounts import BilledAccount

BILLING = "sewerbill.billing"


def record_handler(record: SQSRecord) -> None:
    envelope = parse_envelope(record.body)
    if envelope.source != BILLING or envelope.detail_type != "AccountsChanged":
        raise MalformedMessage(f"unexpected {envelope.source}/{envelope.detail_type}")
    detail = envelope.detail
    tenant = detail.get("tenant") if isinstance(detail, dict) else None
    if not isinstance(tenant, str) or not tenant:
        raise MalformedMessage("AccountsChanged: tenant is required")
    try:
        keyed = chunk_accounts(detail)
    except ValueError as exc:
        raise MalformedMessage(f"AccountsChanged: {exc}") from None
    accounts = []
    refused: list[str] = []
    for key, raw in keyed:
        try:
            v = AccountVersion.model_validate(raw)
        except ValidationError as exc:
            refused.append(f"{key}: {first_error(exc)}")
            continue
        accounts.append(
            BilledAccount(
                tenant=tenant,
                account_id=v.account_id,
                version=v.version,
                opened_on=v.opened_on,
                closed_on=v.closed_on,
                nonresidential=v.account_class == "nonresidential",
                service_address=v.service_address,
                satellite=v.satellite,
            )
        )
    kept = composition.keep_accounts()(accounts)
    logger.info("billing accounts kept", extra={"tenant": tenant, "kept": kept.__dict__})
    if refused:  # the others are kept: only these are recorded as rejected
        raise MalformedMessage(f"AccountsChanged: {'; '.join(refused)[:2000]}")


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
