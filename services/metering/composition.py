"""Metering's composition root: builds the real adapters once per container (STYLE 3)."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import boto3

from common.clock import Clock
from common.config import RuntimeClock, cold_start, load
from common.dates import add_months
from common.due import next_due
from common.dynamo import bulk_client
from metering.config import MeteringConfig, PublishOutboxConfig

# Each builder imports what its use case needs when it is first called: the outbox publisher
# (a function of its own, fed by the table's stream) needs neither the tariff files nor the
# ingest graph, and its cold start paid for both (issue 7). This module still wires all of them.
if TYPE_CHECKING:
    from common.handling import RejectionSink
    from common.messages import UploadedObject
    from common.outbox import OutboxPublisher
    from common.tariffs import TariffBook
    from metering.adapters.dynamodb import DynamoMeteringRepository
    from metering.app import ingest
    from metering.app.accounts import AccountsKept
    from metering.domain.accounts import BilledAccount
    from metering.domain.determination import TenantSettings
    from metering.domain.readings import Reading


@cold_start
def config() -> MeteringConfig:
    return load(MeteringConfig)


@cold_start
def tariff_book() -> TariffBook:
    from common.tariff_files import load_tariff_book

    return load_tariff_book(config().tariffs_dir)


@cold_start
def clients() -> dict[str, Any]:
    return {"s3": boto3.client("s3"), "dynamodb": bulk_client()}


@cold_start
def repository() -> DynamoMeteringRepository:
    from metering.adapters.dynamodb import DynamoMeteringRepository

    return DynamoMeteringRepository(clients()["dynamodb"], config().table_name)


@functools.cache  # once per process (not reset with the cold starts: see the last sentence)
def long_lived() -> None:
    """Move what the cold start built (modules, botocore's service models, clients, the
    tariff book) out of the garbage collector's generations (``gc.freeze``), once per
    container. A file's batches make many objects (account states, events), and each time
    the collector's oldest generation ran it walked all of those too: about a tenth of the
    function's CPU for a 10,000-row read file (issue 7; py-spy put it on the line of
    ``determination._measure`` where the collections happened to start). Frozen objects are
    still freed when unreferenced, but never collected as cycles, so the garbage there is
    collected first; what is frozen lives as long as the container anyway (a test process
    that resets the cold starts freezes only the first time)."""
    gc.collect()
    gc.freeze()


YOUNG_COLLECTION_EVERY = 50_000  # a file's batch (1,000 rows) allocates about 40,000 objects


@contextmanager
def few_collections() -> Iterator[None]:
    """The young generation collected every ``YOUNG_COLLECTION_EVERY`` allocations instead of
    Python's 700 while a file is taken in, restored after it. A batch's objects (its rows,
    account states, points and events, about 40 a row) live until the batch is written, so
    each collection of the young generation found them alive and passed them on, and the
    middle and oldest generations walked them again: about a tenth of the function's CPU for
    a 10,000-row read file (issue 7, measured with ``gc.callbacks``: 0.56 s in 589
    collections). Garbage cycles still go at the next collection, at most that many
    allocations later: the memory stays bounded by a batch, flat in the file."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], YOUNG_COLLECTION_EVERY), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def clock() -> Clock:
    return RuntimeClock()


def today() -> date:
    from metering.domain.interval import UTILITY_TZ

    return clock().now().astimezone(UTILITY_TZ).date()


def metered_tenants(on: date) -> tuple[str, ...]:
    book = tariff_book()
    return tuple(t for t in book.tenants if book.in_force(t, on).metering is not None)


def settings_on(on: date) -> Callable[[str], TenantSettings]:
    """A tenant's settings on ``on``, looked up once per tenant: a file asks for them for
    every row (a tariff version lookup each: a twentieth of a read file's CPU, issue 7)."""
    from metering.domain.determination import TenantSettings

    book = tariff_book()

    @functools.cache
    def settings(tenant: str) -> TenantSettings:
        tariff = book.in_force(tenant, on)
        metering = tariff.metering
        return TenantSettings(
            period_months=tariff.billing_period_months,
            read_window_days=metering.read_window_days.value if metering else 5,
            high_low_factor=metering.high_low_factor.value if metering else Decimal(3),
            winter_average=hasattr(tariff, "winter_months"),
        )

    return settings


def tariff_sizes(tariff: Any) -> frozenset[str]:
    """The meter sizes a tariff version lists (its service charges' sizes, in every zone, and
    its aliases); a tariff whose charges do not go by meter size takes every standard size."""
    from common.tariffs import METER_SIZES

    charge = getattr(tariff, "service_charge", None)
    if charge is None:
        return frozenset(METER_SIZES)
    value = charge.value
    sizes: set[str] = set()
    for k, v in value.items():
        sizes.update(v) if isinstance(v, dict) else sizes.add(k)
    sizes.update(getattr(tariff, "meter_size_aliases", {}) or {})
    return frozenset(sizes)


def field_rules(on: date) -> ingest.FieldRules:
    """The world of a tenant's fields on ``on`` (issue 27): facts from the tenant's first
    tariff version to ``on``, the meter sizes of the tariff in force."""
    from metering.app import ingest

    book = tariff_book()

    @functools.cache
    def sizes(tenant: str) -> frozenset[str]:
        return tariff_sizes(book.in_force(tenant, on))

    return ingest.FieldRules(first=functools.cache(book.first_effective), today=on, sizes=sizes)


def take_in_upload(upload: UploadedObject, kind: str) -> ingest.IngestResult:
    """A ``meters/`` or ``reads/`` file, streamed from the bucket."""
    from metering.adapters.s3 import S3ObjectStore, S3RejectionReport, report_key
    from metering.app import ingest

    s3 = clients()["s3"]
    file = ingest.UploadedFile(bucket=upload.bucket, key=upload.key, etag=upload.etag, size=upload.size)
    day = today()
    repo, settings, tenants = repository(), settings_on(day), metered_tenants(day)
    long_lived()  # after the cold start's objects are built
    with few_collections():
        return ingest.take_in_file(
            file,
            kind=kind,
            chunks=S3ObjectStore(s3).stream(upload.bucket, upload.key),
            repo=repo,
            report=S3RejectionReport(s3, upload.bucket, report_key(upload.key, file.file_id)),
            settings=settings,
            tenants=tenants,
            now=clock().now(),
            today=day,
            rules=field_rules(day),
            directory=repo,
        )


def keep_accounts(accounts: list[BilledAccount]) -> AccountsKept:
    """Billing's accounts (``AccountsChanged``), and the meters waiting for them taken in."""
    from metering.app.accounts import keep_accounts as keep

    day = today()
    repo = repository()
    return keep(
        accounts,
        repo=repo,
        directory=repo,
        settings=settings_on(day),
        tenants=metered_tenants(day),
        now=clock().now(),
        today=day,
        rules=field_rules(day),
    )


def take_in_interval_upload(upload: UploadedObject) -> ingest.IngestResult:
    from metering.adapters.s3 import S3ObjectStore, S3RejectionReport, report_key
    from metering.app import ingest

    s3 = clients()["s3"]
    file = ingest.UploadedFile(bucket=upload.bucket, key=upload.key, etag=upload.etag, size=upload.size)
    return ingest.take_in_interval_file(
        file,
        chunks=S3ObjectStore(s3).stream(upload.bucket, upload.key),
        repo=repository(),
        report=S3RejectionReport(s3, upload.bucket, report_key(upload.key, file.file_id)),
        tenants=metered_tenants(today()),
        now=clock().now(),
        rules=field_rules(today()),
    )


def take_in_read(read: Reading, source: str) -> tuple[str, ingest.IngestResult]:
    from metering.app import ingest

    day = today()
    return ingest.take_in_read(
        read, source=source, repo=repository(), settings=settings_on(day), now=clock().now(), today=day
    )


def run_daily(run_id: str) -> tuple[int, int]:
    """The daily run: missing reads estimated, then last month's satellite flow published,
    the accounts and flow monitors from their indexes (Queries: no Scan, issue 31). Returns
    (estimated, satellite months).

    A day with nothing due reads the daily mark only (``common.due``): a full run records the
    next day an account's read window passes (``next_estimate_on``) or a month ends with a
    flow monitor registered; a write of an account, a meter or an interval day adds its day."""
    from metering.adapters.dynamodb import DailyRunRepository
    from metering.app import ingest

    day = today()
    repo = DailyRunRepository(clients()["dynamodb"], config().table_name)
    mark = repo.due.read()
    if mark is not None and not mark.due(day):
        return 0, 0
    candidates: list[date | None] = []
    estimated = ingest.estimate_missing(
        repo=repo, settings=settings_on(day), now=clock().now(), today=day, run_id=run_id, next_on=candidates
    )
    satellites = ingest.publish_satellite_flow(repo=repo, now=clock().now())
    if next(iter(repo.flow_monitors()), None) is not None:
        candidates.append(add_months(date(day.year, day.month, 1), 1))
    book = tariff_book()
    candidates += [v.effective_from for t in book.tenants for v in book.versions(t) if v.effective_from > day]
    repo.due.record(next_due(day, candidates), mark)
    return estimated, satellites


@cold_start
def outbox_publisher() -> OutboxPublisher:
    from common.outbox import OutboxPublisher

    cfg = load(PublishOutboxConfig)
    return OutboxPublisher(boto3.client("events"), cfg.event_bus_name)


@cold_start
def rejections() -> RejectionSink:
    from common.handling import rejections_for

    return rejections_for("metering")
