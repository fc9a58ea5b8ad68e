"""Billing's composition root: builds the real adapters once per container (STYLE 3)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import boto3

from billing.adapters.dynamodb import DynamoBillingRepository
from billing.adapters.tariffs import BookCalendar
from billing.config import ApiConfig, BillingCycleConfig, PublishOutboxConfig, TableConfig
from billing.domain.cycles import (
    AssessmentScheduled,
    CycleScheduled,
    run_daily_assessment,
    start_billing_cycle,
)
from billing.domain.usage import keep_consumption
from billing.events import BillingCycleStarted
from common.config import RuntimeClock, cold_start, load
from common.handling import RejectionSink, rejections_for
from common.outbox import OutboxPublisher
from common.tariffs import TariffBook
from metering.events import ConsumptionDetermined


def _repository(table_name: str) -> DynamoBillingRepository:
    return DynamoBillingRepository(boto3.client("dynamodb"), table_name, RuntimeClock())


@cold_start
def keep_consumption_use_case() -> Callable[[ConsumptionDetermined], bool]:
    return partial(keep_consumption, repo=_repository(load(TableConfig).table_name))


@cold_start
def start_billing_cycle_use_case() -> Callable[[CycleScheduled], BillingCycleStarted | None]:
    config = load(BillingCycleConfig)
    return partial(
        start_billing_cycle,
        calendar=BookCalendar(TariffBook.load(config.tariffs_dir)),
        repo=_repository(config.table_name),
        clock=RuntimeClock(),
    )


@cold_start
def daily_assessment_use_case() -> Callable[[AssessmentScheduled], bool]:
    return partial(run_daily_assessment, repo=_repository(load(TableConfig).table_name))


@cold_start
def outbox_publisher() -> OutboxPublisher:
    config = load(PublishOutboxConfig)
    return OutboxPublisher(boto3.client("events"), config.event_bus_name)


@cold_start
def tariff_book() -> TariffBook:
    return TariffBook.load(load(ApiConfig).tariffs_dir)


@cold_start
def rejections() -> RejectionSink:
    return rejections_for("billing")
