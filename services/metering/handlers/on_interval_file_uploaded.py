"""An interval file (AMI meters, satellite flow monitors) was uploaded under ``reads/interval/``.

Trigger: S3 ``Object Created`` (EventBridge, default bus) -> its own rule -> SQS -> here.
The file is streamed into one item per meter per local day; slugs raise ``SlugDetected``.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from common.handling import consume_sqs
from common.messages import MalformedMessage, parse_object_created
from common.observability import Counts, count, logger, observed
from metering import composition


def record_handler(record: SQSRecord) -> None:
    upload = parse_object_created(record.body)
    if upload.bucket != composition.config().uploads_bucket or not upload.key.startswith("reads/interval/"):
        raise MalformedMessage(f"not an interval file: s3://{upload.bucket}/{upload.key}")
    result = composition.take_in_interval_upload(upload)
    count(Counts.READS_ACCEPTED, result.accepted)
    count(Counts.READS_REJECTED, result.rejected)
    logger.info(
        "interval file taken in",
        extra={
            "key": upload.key,
            "duplicate_file": result.duplicate_file,
            "counts": result.counts.as_dict(),
            "report_key": result.report_key,
        },
    )


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
