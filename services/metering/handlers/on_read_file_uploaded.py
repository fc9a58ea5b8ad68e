"""A read file was uploaded under ``reads/`` in the uploads bucket.

Trigger: S3 ``Object Created`` (EventBridge, default bus) -> rule -> SQS queue -> here.
Each message is taken in on its own; a failed one is reported and redelivered alone.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from common.handling import consume_sqs
from common.messages import MalformedMessage, parse_object_created
from common.observability import Counts, count, logger, observed
from metering import composition
from metering.domain.read_files import ReadFile


def record_handler(record: SQSRecord) -> None:
    upload = parse_object_created(record.body)
    if upload.bucket != composition.read_file_config().uploads_bucket:
        raise MalformedMessage(f"upload from unexpected bucket {upload.bucket!r}")
    result = composition.ingest()(ReadFile(bucket=upload.bucket, key=upload.key, etag=upload.etag))
    count(Counts.READS_ACCEPTED, result.accepted)
    count(Counts.READS_REJECTED, len(result.rejected_lines))
    logger.info("read file taken in", extra={"key": upload.key, "result": result.__dict__})


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
