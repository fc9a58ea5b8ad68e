"""Metering's composition root: builds the real adapters once per container (STYLE 3)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import boto3

from common.config import RuntimeClock, cold_start, load
from common.handling import RejectionSink, rejections_for
from common.outbox import OutboxPublisher
from common.tariffs import TENANTS
from metering.adapters.dynamodb import DynamoReadsRepository
from metering.adapters.s3 import S3ObjectStore
from metering.config import PublishOutboxConfig, ReadFileUploadedConfig
from metering.domain.read_files import IngestResult, ReadFile, ingest_read_file


@cold_start
def read_file_config() -> ReadFileUploadedConfig:
    return load(ReadFileUploadedConfig)


@cold_start
def ingest() -> Callable[[ReadFile], IngestResult]:
    config = read_file_config()
    clock = RuntimeClock()
    return partial(
        ingest_read_file,
        store=S3ObjectStore(boto3.client("s3")),
        repo=DynamoReadsRepository(boto3.client("dynamodb"), config.table_name, clock),
        clock=clock,
        tenants=TENANTS,
    )


@cold_start
def outbox_publisher() -> OutboxPublisher:
    config = load(PublishOutboxConfig)
    return OutboxPublisher(boto3.client("events"), config.event_bus_name)


@cold_start
def rejections() -> RejectionSink:
    return rejections_for("metering")
