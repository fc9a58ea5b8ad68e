"""A meters file (``meters/``) or a register read file (``reads/``, not ``reads/interval/``)
was uploaded to the uploads bucket; or billing published account versions.

Trigger: S3 ``Object Created`` (EventBridge, default bus) -> rule -> SQS queue -> here.
Bad rows are reported (``ReadsRejected`` with a report in ``reports/``), never retried.
sewerbill.billing ``AccountsChanged`` (EventBus) -> rule -> the same FIFO queue -> here:
the accounts kept and the meters waiting for them taken in (issue 26), one at a time with
the files (``metering.app.accounts``).
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import ValidationError

from billing.events import AccountVersion, chunk_accounts
from common.handling import consume_sqs
from common.messages import MalformedMessage, first_error, parse_envelope, parse_object_created
from common.observability import Counts, count, logger, observed
from metering import composition
from metering.domain.accounts import BilledAccount

KINDS = {"meters/": "meters", "reads/": "reads"}
BILLING = "sewerbill.billing"


def record_handler(record: SQSRecord) -> None:
    if parse_envelope(record.body).source == BILLING:
        return _accounts_changed(record.body)
    upload = parse_object_created(record.body)
    kind = next((k for prefix, k in KINDS.items() if upload.key.startswith(prefix)), None)
    if (
        upload.bucket != composition.config().uploads_bucket
        or kind is None
        or upload.key.startswith("reads/interval/")
    ):
        raise MalformedMessage(f"not a meters or read file: s3://{upload.bucket}/{upload.key}")
    result = composition.take_in_upload(upload, kind)
    count(Counts.READS_ACCEPTED, result.accepted)
    count(Counts.READS_REJECTED, result.rejected)
    logger.info(
        "file taken in",
        extra={
            "key": upload.key,
            "kind": kind,
            "duplicate_file": result.duplicate_file,
            "counts": result.counts.as_dict(),
            "report_key": result.report_key,
        },
    )


def _accounts_changed(body: str) -> None:
    envelope = parse_envelope(body)
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
    accounts: list[BilledAccount] = []
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
                version=v.version.astimezone(UTC).isoformat(timespec="microseconds"),
                opened_on=v.opened_on,
                closed_on=v.closed_on,
            )
        )
    kept = composition.keep_accounts(accounts)
    logger.info("billing accounts kept", extra={"tenant": tenant, "kept": kept.__dict__})
    if refused:  # the others are kept: only these are recorded as rejected
        raise MalformedMessage(f"AccountsChanged: {'; '.join(refused)[:2000]}")


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
