"""An accounts/ or payments/ file was uploaded (CONTRACTS.md "Import files").

Trigger: S3 ``Object Created`` (EventBridge, default bus) -> rule -> SQS -> here. The file
is streamed from S3 (never read whole). Accounts are kept as history; payments are posted
idempotently by reference (a file posted twice posts once); a payment for an account not
known yet waits in suspense and is taken in when the account arrives (an accounts file
here, or the staff account route). Every line is counted (``common.imports.ImportCounts``)
and every rejected or waiting line is in the file's report.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from billing import composition
from billing.app.accounts import bills_from_rules, take_in_account_file
from billing.app.imports import record_import
from billing.app.payments import release_waiting, take_in_lockbox_file
from billing.domain.csvfiles import CHUNK_BYTES
from common.clock import RuntimeClock
from common.handling import consume_sqs
from common.messages import MalformedMessage, parse_envelope, parse_object_created
from common.observability import observed
from common.reports import ReportStream
from common.tariffs import TENANTS

logger = Logger()


def record_handler(record: SQSRecord) -> None:
    upload = parse_object_created(record.body)
    if upload.bucket != composition.uploads_bucket():
        raise MalformedMessage(f"upload from unexpected bucket {upload.bucket!r}")
    # One delivery of one upload: the event's id, the same on every redelivery of it.
    run = f"{parse_envelope(record.body).id}:{upload.etag[-16:]}"
    now = RuntimeClock().now()
    repo, book = composition.repo(), composition.tariff_book()
    # Every rejected or waiting line, with its number, column and reason, in a report beside
    # the file (reports/billing/<key>/<etag>-rejections.jsonl), written as the lines come.
    report = ReportStream(
        composition.s3(),
        bucket=upload.bucket,
        service="billing",
        parts=(upload.key[:800], f"{upload.etag[-16:]}-rejections"),
        count_by="column",
    )
    body = composition.s3().get_object(Bucket=upload.bucket, Key=upload.key)["Body"]
    chunks = body.iter_chunks(chunk_size=CHUNK_BYTES)  # streamed: memory bounded, not the file's size
    if upload.key.startswith("accounts/"):
        result = take_in_account_file(
            chunks,
            source=upload.key,
            run=run,
            repo=repo,
            tenants=TENANTS,
            now=now,
            rules=bills_from_rules(book, now.date()),
            report=report,
            redelivered=int(record.attributes.approximate_receive_count or 1) > 1,
            release=lambda tenant, ids: release_waiting(tenant, ids, repo=repo, now=now, book=book),
        )
    elif upload.key.startswith("payments/"):
        result = take_in_lockbox_file(
            chunks, run=run, source=upload.key, repo=repo, tenants=TENANTS, now=now, book=book, report=report
        )
    else:
        raise MalformedMessage(f"no billing import under {upload.key!r}")
    written = report.close()
    # The file's import log (issue 33: the clerk's review of what came in and what did not).
    record_import(
        result, key=upload.key, run=run, report_key=written.key if written else None, repo=repo, now=now
    )
    logger.info(
        "file taken in",
        extra={
            "key": upload.key,
            **result.counts.as_dict(),
            "rejected_lines": [f"line {r.line}, {r.column}: {r.reason}" for r in result.rejected],
            "report_key": written.key if written else None,
        },
    )


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
