"""Events published by metering (the contract other services import; additive changes only).

Sizes are bounded by construction (STYLE 18): every string has a maximum length, every
list a maximum count, so the largest possible event is known and tested against
EventBridge's 256 KB (tests/metering/test_event_limits.py). Anything that grows with a
file (a rejection report) goes to S3 and the event carries its key (claim check).

Write pattern (issue 7, for the services that follow): a file's consumptions are written
in batches, and published as ONE ``ConsumptionsDetermined`` per chunk of at most
``CHUNK_MAX`` consumptions, never one event per row. Consumers keep each consumption by
its business key, so a chunk delivered twice changes nothing.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainSerializer, model_validator

from common.events import Event

SOURCE = "sewerbill.metering"

# Bounds of every field (DynamoDB keys 2 KB and numbers 38 digits, events 256 KB).
ID_MAX = 64
KEY_MAX = 1024
REASON_MAX = 300
DIGITS_MAX = 38
CHUNK_MAX = 50
READS_USED_MAX = 8
METERS_MAX = 4
FLAGS_MAX = 6
REJECTIONS_IN_EVENT_MAX = 100


def _bounded_volume(value: Decimal) -> Decimal:
    if not value.is_finite():
        raise ValueError("must be a finite decimal")
    if len(value.as_tuple().digits) > DIGITS_MAX:
        raise ValueError(f"more than {DIGITS_MAX} significant digits")
    return value


# A volume in gallons: exact decimal (X-READS: volumes are never rounded), sent as a string.
Gallons = Annotated[
    Decimal,
    AfterValidator(_bounded_volume),
    PlainSerializer(lambda d: format(d.normalize(), "f"), return_type=str, when_used="json"),
]
Id = Annotated[str, Field(min_length=1, max_length=ID_MAX)]

# actual: both ends from reads on the boundaries; prorated: an end interpolated by days
# between two reads; estimated: no usable read (X-PERIOD), estimated from history;
# unmetered: GR-UNMETERED, no meter.
Quality = Literal["actual", "prorated", "estimated", "unmetered"]
MeterKind = Literal["water", "waste", "flow-monitor"]
# prorated: a register value interpolated by days at a boundary between two reads.
ReadType = Literal["actual", "customer", "estimated", "initial", "final", "prorated"]
# zero_use: no use on an occupied account; high_use/low_use: outside the tenant's factor
# of the account's own history; rollover: a register wrapped in the period;
# exchange: a meter was exchanged in the period; waste_meter: PP-SEW-FLOW volume;
# estimate_replaced: a corrected determination: the period had been estimated (X-PERIOD) and
# a later actual read replaced the estimate by proration; it supersedes the earlier
# determination of the same business key (X-IMMUTABLE: billing books the difference).
# At most five flags at once (zero/high/low use exclude each other).
Flag = Literal["zero_use", "high_use", "low_use", "rollover", "exchange", "waste_meter", "estimate_replaced"]


class ReadUsed(BaseModel):
    """A register reading that bounds the period (interpolated ones name the reads around)."""

    model_config = ConfigDict(frozen=True)

    meter_id: Id
    read_on: date
    reading: Gallons = Field(description="register value in the meter's own units")
    read_type: ReadType


class MeterUse(BaseModel):
    """One meter's share of the period's volume (two meters across an exchange)."""

    model_config = ConfigDict(frozen=True)

    meter_id: Id
    kind: MeterKind
    volume_gal: Gallons = Field(ge=0)
    quality: Quality


class ConsumptionDetermined(Event):
    """An account's water use for the half-open period [period_start, period_end).

    schema_version 2 (issue 9): ``volume_gal`` is an exact decimal sent as a string (it was
    a whole number); ``quality``, ``estimated``, ``meters``, ``reads_used``, ``flags`` and
    ``winter_average_gal`` are new. A version 1 detail still parses (its volume as a whole number, quality actual).

    The same business key may come again, flagged ``estimate_replaced``: the later
    determination (by ``occurred_at``) is the period's consumption.
    """

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "account_id", "period_start", "period_end")

    schema_version: int = 2
    tenant: Id
    account_id: Id
    period_start: date
    period_end: date
    volume_gal: Gallons = Field(ge=0)
    quality: Quality = "actual"
    estimated: bool = False
    meters: tuple[MeterUse, ...] = Field(default=(), max_length=METERS_MAX)
    reads_used: tuple[ReadUsed, ...] = Field(default=(), max_length=READS_USED_MAX)
    flags: tuple[Flag, ...] = Field(default=(), max_length=FLAGS_MAX)
    winter_average_gal: Gallons | None = Field(
        default=None,
        ge=0,
        description="PP-SEW-WINTER: average monthly use of the most recent January-March "
        "before the period (pleasant-prairie-sewer; rating applies it to residential accounts)",
    )
    source_file: str = Field(max_length=KEY_MAX)

    @model_validator(mode="after")
    def _period_in_order(self) -> ConsumptionDetermined:
        if self.period_end <= self.period_start:
            raise ValueError("period_end must be after period_start")
        if self.estimated != (self.quality == "estimated"):
            raise ValueError("estimated must be true exactly when quality is 'estimated'")
        return self


class ConsumptionsDetermined(Event):
    """A chunk of a file's consumptions (at most ``CHUNK_MAX``): one event per chunk.

    Business key: the file (content digest) and the chunk's index, so a redelivery is
    recognisable; each consumption also carries its own business key for the consumer.
    """

    SOURCE = SOURCE
    BUSINESS_KEY = ("file_id", "chunk")

    schema_version: int = 2
    file_id: str = Field(max_length=ID_MAX)
    chunk: int = Field(ge=0)
    consumptions: tuple[ConsumptionDetermined, ...] = Field(min_length=1, max_length=CHUNK_MAX)


class LineRejection(BaseModel):
    """One line of an uploaded file that was not accepted; ``line`` 1 is the header."""

    model_config = ConfigDict(frozen=True)

    line: int = Field(ge=0)
    column: str = Field(max_length=ID_MAX)
    reason: str = Field(max_length=REASON_MAX)


class ReadsRejected(Event):
    """Lines of an uploaded file that were not accepted, and why.

    schema_version 2: the full report is in the uploads bucket at ``report_key`` (JSON
    lines, one rejection each); ``rejections`` holds only the first
    ``REJECTIONS_IN_EVENT_MAX`` (claim check), ``rejected_count`` the total.
    """

    SOURCE = SOURCE
    BUSINESS_KEY = ("file_key", "file_id")
    REPORT_PREFIX: ClassVar[str] = "reports/metering/"

    schema_version: int = 2
    file_key: str = Field(max_length=KEY_MAX)
    etag: str = Field(max_length=ID_MAX * 2)
    file_id: str = Field(max_length=ID_MAX * 2)
    rejections: tuple[LineRejection, ...] = Field(max_length=REJECTIONS_IN_EVENT_MAX)
    rejected_count: int = Field(default=0, ge=0)
    accepted_count: int = Field(default=0, ge=0)
    report_key: str | None = Field(default=None, max_length=KEY_MAX)
    # issue 26 (additive): the rest of ``common.imports.ImportCounts``; with accepted and
    # rejected they add up to ``lines_count``, the file's data lines (0: a publisher before them)
    repeated_count: int = Field(default=0, ge=0)
    changed_count: int = Field(default=0, ge=0)
    lines_count: int = Field(default=0, ge=0)

    @property
    def line_numbers(self) -> list[int]:
        return sorted({r.line for r in self.rejections})


class SlugDetected(Event):
    """X-SLUG: flow above five times the trailing 24-hour mean for more than 15 minutes."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "meter_id", "interval_start")

    tenant: Id
    meter_id: Id
    account_id: Id | None = None
    interval_start: str = Field(max_length=40, description="ISO 8601 start of the first interval over")
    interval_end: str = Field(max_length=40, description="ISO 8601 end of the last interval over")
    intervals: int = Field(gt=3)
    volume_gal: Gallons = Field(ge=0, description="volume over the slug's intervals")
    threshold_gal: Gallons = Field(ge=0, description="5x the trailing 24-hour mean per interval")


class SatelliteFlowReady(Event):
    """PP-SEW-SAT-FLOW: a satellite system's monthly flow, to be provided within 18 days."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "meter_id", "month")

    tenant: Id
    meter_id: Id
    account_id: Id | None = None
    month: str = Field(pattern=r"^\d{4}-\d{2}$")
    volume_gal: Gallons = Field(ge=0)
    days_with_data: int = Field(ge=0, le=31)
    downloaded_on: date
    provide_by: date
