"""An accounts/ or payments/ file was uploaded (CONTRACTS.md "Import files").

Trigger: S3 ``Object Created`` (EventBridge, default bus) -> rule -> SQS -> here. Accounts
are kept as history; payments are posted idempotently by reference (a file posted twice
posts once), unknown accounts to suspense. Bad lines are logged with their line numbers.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from billing import composition
from billing.app.accounts import bills_from_rules, take_in_account_file
from billing.app.payments import take_in_lockbox_file
from common.clock import RuntimeClock
from common.handling import consume_sqs
from common.messages import MalformedMessage, parse_object_created
from common.observability import observed
from common.reports import write_report
from common.tariffs import TENANTS

logger = Logger()


def record_handler(record: SQSRecord) -> None:
    upload = parse_object_created(record.body)
    if upload.bucket != composition.uploads_bucket():
        raise MalformedMessage(f"upload from unexpected bucket {upload.bucket!r}")
    data = composition.s3().get_object(Bucket=upload.bucket, Key=upload.key)["Body"].read()
    now = RuntimeClock().now()
    if upload.key.startswith("accounts/"):
        result = take_in_account_file(
            data,
            source=upload.key,
            repo=composition.repo(),
            tenants=TENANTS,
            now=now,
            rules=bills_from_rules(composition.tariff_book(), now.date()),
        )
    elif upload.key.startswith("payments/"):
        result = take_in_lockbox_file(
            data, repo=composition.repo(), tenants=TENANTS, now=now, book=composition.tariff_book()
        )
    else:
        raise MalformedMessage(f"no billing import under {upload.key!r}")
    # Every rejected line, with its number, column and reason, in a report beside the file
    # (reports/billing/<key>/<etag>-rejections.jsonl): the clerk's list of what to fix.
    report = (
        write_report(
            composition.s3(),
            bucket=upload.bucket,
            service="billing",
            parts=(upload.key[:800], f"{upload.etag[-16:]}-rejections"),
            rows=({"line": r.line, "column": r.column, "reason": r.reason} for r in result.rejected),
            count_by="column",
        )
        if result.rejected
        else None
    )
    logger.info(
        "file taken in",
        extra={
            "key": upload.key,
            "accepted": result.accepted,
            "unchanged": result.unchanged,
            "suspense": result.suspense,
            "rejected": [f"line {r.line}, {r.column}: {r.reason}" for r in result.rejected[:100]],
            "report_key": report.key if report else None,
        },
    )


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
