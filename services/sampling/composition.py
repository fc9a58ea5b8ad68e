"""Sampling's composition root: builds the real adapters once per container (STYLE 3)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import boto3

from common.clock import Clock
from common.config import RuntimeClock, cold_start, load
from common.dynamo import plain_answers_client
from common.handling import MessageRejected, RejectionSink
from common.outbox import OutboxPublisher
from common.tariff_files import load_tariff_book
from sampling.adapters.dynamodb import DynamoSamplingRepository
from sampling.adapters.s3 import S3Objects
from sampling.app.accounts import AccountsKept
from sampling.app.accounts import keep_accounts as keep_accounts_use_case
from sampling.app.service import SamplingService
from sampling.config import PublishOutboxConfig, SamplingConfig
from sampling.domain.accounts import BilledAccount
from sampling.domain.intake import IntakeResult, LabFile, ingest_lab_file
from sampling.domain.strength import CLASSIFIED_TENANTS
from sampling.tariffs import BookPolicies


@cold_start
def config() -> SamplingConfig:
    return load(SamplingConfig)


@cold_start
def repository() -> DynamoSamplingRepository:
    return DynamoSamplingRepository(plain_answers_client(), config().table_name, RuntimeClock())


@cold_start
def policies() -> BookPolicies:
    return BookPolicies(load_tariff_book(config().tariffs_dir))


@cold_start
def objects() -> S3Objects:
    return S3Objects(boto3.client("s3"), config().uploads_bucket)


@cold_start
def ingest() -> Callable[[LabFile], IntakeResult]:
    return partial(
        ingest_lab_file,
        store=objects(),
        reports=objects(),
        repo=repository(),
        clock=RuntimeClock(),
        policies=policies(),
    )


@cold_start
def keep_accounts() -> Callable[[list[BilledAccount]], AccountsKept]:
    return partial(
        keep_accounts_use_case,
        tenants=CLASSIFIED_TENANTS,
        repo=repository(),
        policies=policies(),
        clock=RuntimeClock(),
    )


@cold_start
def service() -> SamplingService:
    return SamplingService(repo=repository(), reports=objects(), clock=RuntimeClock(), policies=policies())


@cold_start
def outbox_publisher() -> OutboxPublisher:
    return OutboxPublisher(boto3.client("events"), load(PublishOutboxConfig).event_bus_name)


class RetainedRejections:
    """``common.handling``'s rejection sink on sampling's table, with X-RETENTION's 7 years.

    (``common.handling.OutboxRejections`` gives outbox items the 7-day TTL of other
    services; no sampling item may expire sooner than 7 years.)
    """

    service = "sampling"

    def __init__(self, repo: DynamoSamplingRepository, max_receive_count: int | None) -> None:
        self.clock: Clock = RuntimeClock()
        self.max_receive_count = max_receive_count
        self._repo = repo

    def reject(self, rejection: MessageRejected) -> None:
        self._repo.record_rejection(rejection)


@cold_start
def rejections() -> RejectionSink:
    return RetainedRejections(repository(), config().max_receive_count)
