"""Billing's composition root: builds the real adapters once per container (STYLE 3)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import boto3

from billing.config import (
    ApiConfig,
    BillingCycleConfig,
    CycleFanOutConfig,
    FileUploadedConfig,
    PublishOutboxConfig,
    TableConfig,
)
from common.config import RuntimeClock, cold_start, load
from common.dynamo import BULK_CLIENT, bulk_client, plain_answers_client

# Each builder imports what its use case needs when it is first built (each function's cold
# start pays for its own use case only, not for billing's whole graph: the outbox publisher
# needs no rating, the chunks no producer events); this module still wires all of them.
if TYPE_CHECKING:
    from billing.adapters.audit import AuditLog
    from billing.adapters.bill_outbox import BillOutboxPublisher
    from billing.adapters.dynamodb import DynamoBillingRepository
    from billing.adapters.projections import Projections
    from billing.adapters.queue import SqsQueue
    from billing.adapters.repository import BillingRepo
    from billing.adapters.search_index import SearchIndex
    from billing.app.cycles import ChunkRequest
    from billing.domain.cycles import AssessmentScheduled, CycleScheduled
    from billing.domain.issuing import ChunkResult
    from billing.domain.rating import RatingEngine
    from common.handling import RejectionSink
    from common.outbox import OutboxPublisher
    from common.tariffs import TariffBook
    from metering.events import ConsumptionDetermined


def _repository(table_name: str) -> DynamoBillingRepository:
    from billing.adapters.dynamodb import DynamoBillingRepository

    return DynamoBillingRepository(boto3.client("dynamodb"), table_name, RuntimeClock())


@cold_start
def keep_consumption_use_case() -> Callable[[Sequence[ConsumptionDetermined]], int]:
    """Keep the consumptions; a re-determination of a billed period is re-rated and the
    difference booked on the bill (X-IMMUTABLE) before the new consumption is kept.

    The re-rating's graph (billing's use cases, the tariff book, the rating engine) is built
    when a chunk first holds a re-determination, not for every chunk of new consumptions: a
    read file's consumptions are new (issue 7: its cold start was a fifth of the consumer's
    CPU)."""
    kept = projections()
    clock = RuntimeClock()

    def keep(events: Sequence[ConsumptionDetermined]) -> int:
        now = clock.now()

        def rerate(replaced: Sequence[Any]) -> object:
            from billing.app.rerating import rerate_billed

            return rerate_billed(replaced, repo=repo(), engine=engine(), book=book(), now=now)

        return kept.keep_consumptions(events, now, redetermined=rerate)

    return keep


@cold_start
def keep_producer_event_use_case() -> Callable[[Any], None]:
    """Keep a producer's event; an ERU or credit for a period already billed re-rates it."""
    from billing.app.producer_events import keep_producer_event
    from billing.app.rerating import rerate_parcels

    return partial(
        keep_producer_event,
        projections=projections(),
        clock=RuntimeClock(),
        rerate=lambda changes, now: rerate_parcels(
            changes, repo=repo(), engine=engine(), book=book(), now=now
        ),
        accounts=lambda tenant: repo().accounts(tenant),
    )


@cold_start
def run_cycle_use_case() -> Callable[[CycleScheduled], int]:
    from billing.adapters.tariffs import BookCalendar
    from billing.app.cycles import run_cycle
    from billing.domain.cycles import start_billing_cycle

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
    from billing.app.cycles import issue_chunk

    clock = RuntimeClock()
    return lambda request: issue_chunk(
        request, repo=cycle_repo(), engine=engine(), book=book(), now=clock.now()
    )


@cold_start
def cycle_repo() -> BillingRepo:
    """The chunks' repository: their range reads and bulk writes (a bill an account, built and
    bounded by billing itself) skip botocore's client-side parameter validation
    (``common.dynamo.bulk_client``)."""
    from billing.adapters.repository import BillingRepo

    return BillingRepo(bulk_client(), load(TableConfig).table_name)


@cold_start
def daily_assessment_use_case() -> Callable[[AssessmentScheduled], dict[str, int]]:
    from billing.app.assessment import run_assessment
    from billing.domain.cycles import local_date, run_daily_assessment

    clock = RuntimeClock()
    recorder = _repository(load(TableConfig).table_name)

    def assess(request: AssessmentScheduled) -> dict[str, int]:
        # the day it ran in full, for the record (a day with nothing due writes nothing)
        return run_assessment(
            local_date(request.scheduled_time),
            repo=repo(),
            book=book(),
            now=clock.now(),
            record_day=lambda: run_daily_assessment(request, repo=recorder),
        )

    return assess


@cold_start
def repo() -> BillingRepo:
    from billing.adapters.repository import BillingRepo

    return BillingRepo(plain_answers_client(), load(TableConfig).table_name)


@cold_start
def search_index() -> SearchIndex:
    """The account search index's reads (issue 33)."""
    from billing.adapters.search_index import SearchIndex

    return SearchIndex(plain_answers_client(), load(TableConfig).table_name)


@cold_start
def projections() -> Projections:
    from billing.adapters.projections import Projections

    return Projections(bulk_client(), load(TableConfig).table_name)


@cold_start
def uploads_bucket() -> str:
    return load(FileUploadedConfig).uploads_bucket


@cold_start
def book() -> TariffBook:
    from common.tariff_files import load_tariff_book

    return load_tariff_book(load(BillingCycleConfig).tariffs_dir)


@cold_start
def engine() -> RatingEngine:
    from billing.domain.rating import RatingEngine

    return RatingEngine(book())


@cold_start
def issue_bills_queue() -> SqsQueue:
    from billing.adapters.queue import SqsQueue

    return SqsQueue(boto3.client("sqs"), load(CycleFanOutConfig).issue_bills_queue_url)


@cold_start
def s3() -> Any:
    return boto3.client("s3")


@cold_start
def outbox_publisher() -> OutboxPublisher:
    from common.outbox import OutboxPublisher

    config = load(PublishOutboxConfig)
    return OutboxPublisher(boto3.client("events"), config.event_bus_name)


@cold_start
def bill_outbox_publisher() -> BillOutboxPublisher:
    from billing.adapters.bill_outbox import BillOutboxPublisher

    config = load(PublishOutboxConfig)
    # Each entry is bounded (common.events.entry) before the call: no client-side validation.
    return BillOutboxPublisher(boto3.client("events", config=BULK_CLIENT), config.event_bus_name)


@cold_start
def tariff_book() -> TariffBook:
    from common.tariff_files import load_tariff_book

    return load_tariff_book(load(ApiConfig).tariffs_dir)


@cold_start
def rejections() -> RejectionSink:
    from common.handling import rejections_for

    return rejections_for("billing")


@cold_start
def audit_log() -> AuditLog:
    """The audit store (X-AUDIT): AUDIT items of billing's table and their two indexes."""
    from billing.adapters.audit import AuditLog

    return AuditLog(plain_answers_client(), load(TableConfig).table_name)
