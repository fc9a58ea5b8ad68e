"""A meters file (``meters/``) or a register read file (``reads/``, not ``reads/interval/``)
was uploaded to the uploads bucket.

Trigger: S3 ``Object Created`` (EventBridge, default bus) -> rule -> SQS queue -> here.
Bad rows are reported (``ReadsRejected`` with a report in ``reports/``), never retried.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from common.handling import consume_sqs
from common.messages import MalformedMessage, parse_object_created
from common.observability import Counts, count, logger, observed
from metering import composition

KINDS = {"meters/": "meters", "reads/": "reads"}


def record_handler(record: SQSRecord) -> None:
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


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
