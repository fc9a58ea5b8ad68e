"""A lab file was uploaded under ``lab/`` in the uploads bucket.

Trigger: S3 ``Object Created`` (EventBridge, default bus) -> rule -> SQS queue -> here.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from common.handling import consume_sqs
from common.messages import MalformedMessage, parse_object_created
from common.observability import logger, observed
from sampling import composition
from sampling.domain.intake import LabFile


def record_handler(record: SQSRecord) -> None:
    upload = parse_object_created(record.body)
    if upload.bucket != composition.config().uploads_bucket:
        raise MalformedMessage(f"upload from unexpected bucket {upload.bucket!r}")
    result = composition.ingest()(LabFile(bucket=upload.bucket, key=upload.key, etag=upload.etag))
    logger.info("lab file taken in", extra={"key": upload.key, "result": result.counts()})


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
