"""An interval file (AMI meters, satellite flow monitors) was uploaded under ``reads/interval/``.

Trigger: S3 ``Object Created`` (EventBridge, default bus) -> its own rule -> SQS -> here.
The file is streamed into one item per meter per local day; slugs raise ``SlugDetected``.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from common.handling import consume_sqs
from common.messages import MalformedMessage, parse_object_created
from metering import composition

logger = Logger()


def record_handler(record: SQSRecord) -> None:
    upload = parse_object_created(record.body)
    if upload.bucket != composition.config().uploads_bucket or not upload.key.startswith("reads/interval/"):
        raise MalformedMessage(f"not an interval file: s3://{upload.bucket}/{upload.key}")
    result = composition.take_in_interval_upload(upload)
    logger.info(
        "interval file taken in",
        extra={"key": upload.key, "accepted": result.accepted, "rejected": result.rejected},
    )


def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
