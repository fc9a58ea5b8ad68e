"""Stormwater's composition root: builds the real adapters once per container (STYLE 3)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import boto3

from common.config import RuntimeClock, cold_start, load
from common.handling import RejectionSink, rejections_for
from common.outbox import OutboxPublisher
from common.tariff_files import load_tariff_book
from stormwater.adapters.dynamodb import DynamoParcelRepository, DynamoRecords, DynamoTariffChanges
from stormwater.adapters.s3 import S3Extracts, S3Reports
from stormwater.app.service import StormwaterService
from stormwater.config import ExtractUploadedConfig, PublishOutboxConfig, TableConfig
from stormwater.domain.extracts import IngestResult, UploadedExtract, ingest_extract
from stormwater.domain.tariff_changes import TariffChangeResult
from stormwater.domain.tariff_changes import apply_tariff_versions as _apply_versions
from stormwater.tariffs import StormwaterTariffs


@cold_start
def table_config() -> TableConfig:
    return load(TableConfig)


@cold_start
def extract_config() -> ExtractUploadedConfig:
    return load(ExtractUploadedConfig)


@cold_start
def tariffs() -> StormwaterTariffs:
    return StormwaterTariffs(load_tariff_book(table_config().tariffs_dir))


@cold_start
def repository() -> DynamoParcelRepository:
    return DynamoParcelRepository(boto3.client("dynamodb"), table_config().table_name, RuntimeClock())


@cold_start
def service() -> StormwaterService:
    clock = RuntimeClock()
    client = boto3.client("dynamodb")
    table = table_config().table_name
    return StormwaterService(repository(), DynamoRecords(client, table, clock), tariffs(), clock)


@cold_start
def ingest() -> Callable[[UploadedExtract], IngestResult]:
    config = extract_config()
    s3 = boto3.client("s3")
    book = tariffs()
    return partial(
        ingest_extract,
        store=S3Extracts(s3),
        repo=repository(),
        reports=S3Reports(s3, config.uploads_bucket),
        tariff_for=book,
        tenants=book.tenants,
        clock=RuntimeClock(),
    )


@cold_start
def apply_tariff_versions() -> Callable[[], list[TariffChangeResult]]:
    clock = RuntimeClock()
    book = tariffs()
    repo = DynamoTariffChanges(boto3.client("dynamodb"), table_config().table_name, clock)
    return partial(_apply_versions, tenants=book.tenants, tariff_for=book, repo=repo, clock=clock)


@cold_start
def outbox_publisher() -> OutboxPublisher:
    config = load(PublishOutboxConfig)
    return OutboxPublisher(boto3.client("events"), config.event_bus_name)


@cold_start
def rejections() -> RejectionSink:
    return rejections_for("stormwater")
