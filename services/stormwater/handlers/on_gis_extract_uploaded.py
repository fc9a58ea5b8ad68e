"""A GIS extract was uploaded under ``gis/`` in the uploads bucket (CSV or GeoJSON).

Trigger: S3 ``Object Created`` (EventBridge, default bus) -> rule -> SQS queue -> here.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from common.handling import consume_sqs
from common.messages import MalformedMessage, parse_object_created
from stormwater import composition
from stormwater.domain.extracts import UploadedExtract

logger = Logger()


def record_handler(record: SQSRecord) -> None:
    upload = parse_object_created(record.body)
    if upload.bucket != composition.extract_config().uploads_bucket:
        raise MalformedMessage(f"upload from unexpected bucket {upload.bucket!r}")
    result = composition.ingest()(UploadedExtract(bucket=upload.bucket, key=upload.key, etag=upload.etag))
    logger.info("GIS extract taken in", extra={"key": upload.key, "result": result.__dict__})


def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
