"""Billing's composition root: builds the real adapters once per container (STYLE 3)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import boto3

from billing.adapters.bill_outbox import BillOutboxPublisher
from billing.adapters.dynamodb import DynamoBillingRepository
from billing.adapters.projections import Projections
from billing.adapters.queue import SqsQueue
from billing.adapters.repository import BillingRepo
from billing.adapters.tariffs import BookCalendar
from billing.config import (
    ApiConfig,
    BillingCycleConfig,
    CycleFanOutConfig,
    FileUploadedConfig,
    PublishOutboxConfig,
    TableConfig,
)
from billing.domain.cycles import (
    AssessmentScheduled,
    CycleScheduled,
    local_date,
    run_daily_assessment,
    start_billing_cycle,
)
from billing.domain.issuing import ChunkResult
from billing.domain.rating import RatingEngine
from billing.usecases import (
    ChunkRequest,
    issue_chunk,
    keep_producer_event,
    rerate_billed,
    rerate_parcels,
    run_assessment,
    run_cycle,
)
from common.config import RuntimeClock, cold_start, load
from common.dynamo import BULK_CLIENT
from common.handling import RejectionSink, rejections_for
from common.outbox import OutboxPublisher
from common.tariff_files import load_tariff_book
from common.tariffs import TariffBook
from metering.events import ConsumptionDetermined


def _repository(table_name: str) -> DynamoBillingRepository:
    return DynamoBillingRepository(boto3.client("dynamodb"), table_name, RuntimeClock())


@cold_start
def keep_consumption_use_case() -> Callable[[Sequence[ConsumptionDetermined]], int]:
    """Keep the consumptions; a re-determination of a billed period is re-rated and the
    difference booked on the bill (X-IMMUTABLE) before the new consumption is kept."""
    kept = projections()
    clock = RuntimeClock()

    def keep(events: Sequence[ConsumptionDetermined]) -> int:
        now = clock.now()
        return kept.keep_consumptions(
            events,
            now,
            redetermined=partial(rerate_billed, repo=repo(), engine=engine(), book=book(), now=now),
        )

    return keep


@cold_start
def keep_producer_event_use_case() -> Callable[[Any], None]:
    """Keep a producer's event; an ERU or credit for a period already billed re-rates it."""
    return partial(
        keep_producer_event,
        projections=projections(),
        clock=RuntimeClock(),
        rerate=lambda changes, now: rerate_parcels(
            changes, repo=repo(), engine=engine(), book=book(), now=now
        ),
    )


@cold_start
def run_cycle_use_case() -> Callable[[CycleScheduled], int]:
    config = load(CycleFanOutConfig)
    calendar = BookCalendar(book())
    return partial(
        run_cycle,
        start=partial(
            start_billing_cycle, calendar=calendar, repo=_repository(config.table_name), clock=RuntimeClock()
        ),
        calendar_months=calendar.billing_period_months,
        repo=repo(),
        book=book(),
        queue=issue_bills_queue(),
    )


@cold_start
def issue_chunk_use_case() -> Callable[[ChunkRequest], ChunkResult]:
    clock = RuntimeClock()
    return lambda request: issue_chunk(
        request, repo=cycle_repo(), engine=engine(), book=book(), now=clock.now()
    )


@cold_start
def cycle_repo() -> BillingRepo:
    """The chunks' repository: their range reads and bulk writes (a bill an account, built and
    bounded by billing itself) skip botocore's client-side parameter validation (BULK_CLIENT)."""
    return BillingRepo(boto3.client("dynamodb", config=BULK_CLIENT), load(TableConfig).table_name)


@cold_start
def daily_assessment_use_case() -> Callable[[AssessmentScheduled], dict[str, int]]:
    clock = RuntimeClock()
    recorder = _repository(load(TableConfig).table_name)

    def assess(request: AssessmentScheduled) -> dict[str, int]:
        run_daily_assessment(request, repo=recorder)  # the day it ran, for the record
        return run_assessment(local_date(request.scheduled_time), repo=repo(), book=book(), now=clock.now())

    return assess


@cold_start
def repo() -> BillingRepo:
    return BillingRepo(boto3.client("dynamodb"), load(TableConfig).table_name)


@cold_start
def projections() -> Projections:
    return Projections(boto3.client("dynamodb", config=BULK_CLIENT), load(TableConfig).table_name)


@cold_start
def uploads_bucket() -> str:
    return load(FileUploadedConfig).uploads_bucket


@cold_start
def book() -> TariffBook:
    return load_tariff_book(load(BillingCycleConfig).tariffs_dir)


@cold_start
def engine() -> RatingEngine:
    return RatingEngine(book())


@cold_start
def issue_bills_queue() -> SqsQueue:
    return SqsQueue(boto3.client("sqs"), load(CycleFanOutConfig).issue_bills_queue_url)


@cold_start
def s3() -> Any:
    return boto3.client("s3")


@cold_start
def outbox_publisher() -> OutboxPublisher:
    config = load(PublishOutboxConfig)
    return OutboxPublisher(boto3.client("events"), config.event_bus_name)


@cold_start
def bill_outbox_publisher() -> BillOutboxPublisher:
    config = load(PublishOutboxConfig)
    return BillOutboxPublisher(boto3.client("events"), config.event_bus_name)


@cold_start
def tariff_book() -> TariffBook:
    return load_tariff_book(load(ApiConfig).tariffs_dir)


@cold_start
def rejections() -> RejectionSink:
    return rejections_for("billing")
