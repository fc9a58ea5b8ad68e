"""Events published by sampling (the contract other services import; additive changes only).

Billing keeps the strength events as a projection per account and uses them when it rates
a period (X-PERIOD: the category and concentrations in force at the end of the period):

- :class:`StrengthClassified` after every finalised result (a lab result taken in, a staff
  resample decision) and :class:`StrengthCategoryChanged` instead when the category moved
  (including the time-driven PP-SEW-CAT-B-EXIT return to A on the 24-month anniversary).
  ``effective_from`` is the date the event's category and ``basis`` apply from; for a
  period ``[start, end)`` billing uses the latest event with ``effective_from < end``.
  ``basis`` holds the concentrations (mg/l, Decimal strings) billed while the user is in
  the above-normal category (PP-SEW-SURCHARGE, GR-HIGH, SU-SURCHARGE), ``null`` in the
  normal category. ``violation_days`` counts SU-BOD900 days per billing period touched by
  the finalised result (never carried forward).
- :class:`SamplingCostCharged`: a PP-SEW-SAMPLE-COST charge billed as its own line (a lab
  invoice, or a sample recorded through the API); :class:`SamplingCostsCharged`: a lab
  file's per-sample charges, a chunk of them per event (not an event per sample).

Every concentration is a Decimal, serialised as a decimal string (X-MONEY's rule for
quantities: never a float).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from common.events import Event
from common.reports import Report

SOURCE = "sewerbill.sampling"


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class StrengthBasis(_Part):
    """The finalised result whose concentrations billing uses (mg/l; absent: not analysed).

    ``sample_ids`` is one sample, or two when staff averaged a resample (PP-SEW-RESAMPLE).
    """

    sampled_on: date
    sample_ids: tuple[str, ...] = ()
    bod: Decimal | None = None
    tss: Decimal | None = None
    phosphorus: Decimal | None = None
    tkn: Decimal | None = None
    fog: Decimal | None = None


class CategoryPeriod(_Part):
    """One entry of the category history: the category in force from ``from_date``."""

    from_date: date
    category: str
    rule_id: str
    basis_sampled_on: date


class ExitClock(_Part):
    """PP-SEW-CAT-B-EXIT: a Category B user's 24 compliant months, running since ``started_on``.

    The user is Category A from ``returns_on`` if every sample until then is compliant; an
    exceedance stops this clock (the next event carries no clock, or a new one).
    """

    rule_id: Literal["PP-SEW-CAT-B-EXIT"] = "PP-SEW-CAT-B-EXIT"
    started_on: date
    returns_on: date
    months: int = Field(ge=1)


class Reassignment(_Part):
    """GR-REASSIGN (and Sullivan by the same reading): a change of category and its basis."""

    rule_id: str
    from_category: str | None
    to_category: str
    effective_from: date
    basis_sampled_on: date
    reason: str


class ViolationDays(_Part):
    """SU-BOD900: days in the billing period ``[period_start, period_end)`` with BOD >= 900."""

    rule_id: Literal["SU-BOD900"] = "SU-BOD900"
    period_start: date
    period_end: date
    days: int = Field(ge=0)
    dates: tuple[date, ...] = ()


class IndustrialUser(_Part):
    """SU-INDUSTRIAL determination, with the reasons recorded."""

    rule_id: Literal["SU-INDUSTRIAL"] = "SU-INDUSTRIAL"
    is_industrial: bool
    reasons: tuple[str, ...]


class PrivateSewer(_Part):
    """PP-SEW-PRIVATE: the account is a private sewer (registered so at its sampling point),
    sampled and classified like any user; one that discharges above the thresholds is
    listed as Category B. ``reason`` says which result put it there, or that none did."""

    rule_id: Literal["PP-SEW-PRIVATE"] = "PP-SEW-PRIVATE"
    category: str
    reason: str


class StrengthClassified(Event):
    """An account's strength category after a finalised result (PP-SEW-CAT-*, GR-*, SU-*).

    Business key: tenant, account and ``trigger`` (the sample id of the finalised result,
    ``decision:<sample_id>`` for a staff resample decision, ``exit:<date>`` for the
    24-month return to Category A), so a redelivery is recognised.
    """

    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("tenant", "account_id", "trigger")

    tenant: str
    account_id: str
    trigger: str
    as_of: date
    category: str
    since: date | None
    effective_from: date
    limits_rule_id: str
    basis: StrengthBasis | None
    history: tuple[CategoryPeriod, ...] = ()
    exit_clock: ExitClock | None = None
    reassignment: Reassignment | None = None
    violation_days: tuple[ViolationDays, ...] = ()
    industrial_user: IndustrialUser | None = None
    private_sewer: PrivateSewer | None = None  # PP-SEW-PRIVATE, for a private sewer only


class StrengthCategoryChanged(StrengthClassified):
    """As :class:`StrengthClassified`, published instead of it when the category moved."""

    previous_category: str | None


class SamplingCostCharged(Event):
    """A billable sampling cost (PP-SEW-SAMPLE-COST), separate from the sewer service charge.

    ``kind`` ``sample`` is the tariff's per-sample cost (``quantity`` x ``rate``);
    ``lab_invoice`` passes the lab's invoice amount through (``lab_invoice_reference``).
    ``amount`` is rounded half-up to the cent once (X-MONEY).
    """

    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("tenant", "account_id", "charge_id")

    tenant: str
    account_id: str
    charge_id: str
    rule_id: Literal["PP-SEW-SAMPLE-COST"] = "PP-SEW-SAMPLE-COST"
    kind: Literal["sample", "lab_invoice"]
    charged_on: date
    description: str
    quantity: Decimal
    rate: Decimal
    amount: Decimal
    sample_ids: tuple[str, ...] = ()
    lab_invoice_reference: str | None = None
    tariff_version: str | None = None


class SamplingCostsCharged(Event):
    """A chunk of a lab file's sample costs (at most ``CHUNK_MAX``): one event per chunk.

    Business key: the file (content digest) and the chunk's index, so a redelivery that
    computes the same chunk again is recognised; each charge keeps its own business key
    (tenant, account, ``charge_id``) by which the consumer keeps it once. 100 charges of
    about 600 bytes each stay well within EventBridge's 256 KB.
    """

    CHUNK_MAX: ClassVar[int] = 100
    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("file_id", "chunk")

    file_id: str = Field(max_length=128)
    chunk: int = Field(ge=0)
    charges: tuple[SamplingCostCharged, ...] = Field(min_length=1, max_length=CHUNK_MAX)


# --- lab files, resamples, satellite systems, annual reports --------------------------------


class LabLineRejection(_Part):
    """One line of a lab file not taken in; ``line`` 1 is the header, 0 the whole file."""

    line: int = Field(ge=0)
    column: str
    reason: str


class LabFileTakenIn(Event):
    """A lab file under ``lab/`` was taken in: counts, and the rejected lines.

    At most ``MAX_INLINE`` rejections travel in the event; every one of them is in the
    report (``common.reports``: JSON lines at ``report_key`` in the uploads bucket, counts
    by column), written before this event (claim check).
    """

    MAX_INLINE: ClassVar[int] = 20
    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("file_id",)

    file_key: str
    file_id: str
    # common.imports.ImportCounts: accepted + repeated + rejected = lines (data lines; a
    # lab result is a fact, never ``changed``; issue 26).
    lines: int = Field(ge=0, default=0)
    accepted: int = Field(ge=0)
    repeated: int = Field(ge=0)
    rejected: int = Field(ge=0)
    # Lines naming an account not known yet, waiting in suspense for it (issue 26; additive:
    # 0 in earlier details); accepted + repeated + rejected + waiting = lines.
    waiting: int = Field(ge=0, default=0)
    rejections: tuple[LabLineRejection, ...] = ()
    report_key: str | None = None
    accounts_classified: int = Field(ge=0, default=0)
    report: Report | None = None


class ResampleFlagged(Event):
    """PP-SEW-RESAMPLE: a result far from the account's history or out of range; resample it."""

    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("tenant", "sample_id")

    tenant: str
    account_id: str
    sample_id: str
    sampled_on: date
    rule_id: Literal["PP-SEW-RESAMPLE"] = "PP-SEW-RESAMPLE"
    reasons: tuple[str, ...]


class ResampleDecided(Event):
    """PP-SEW-RESAMPLE: staff chose the original, the resample, or the average of the two."""

    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("tenant", "original_sample_id")

    tenant: str
    account_id: str
    original_sample_id: str
    resample_id: str
    decision: Literal["original", "resample", "average"]
    decided_by: str
    reason: str
    rule_id: Literal["PP-SEW-RESAMPLE"] = "PP-SEW-RESAMPLE"


class _SatelliteSampleDeadline(Event):
    """PP-SEW-SAT-SAMPLE: what every event about one satellite sample's 18-working-day
    deadline names (the sample, when it was taken and when its certified results are due);
    one event per sample and kind, so the sample is the business key."""

    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("tenant", "sample_id")

    tenant: str
    account_id: str
    sample_id: str
    sampled_on: date
    due_on: date
    rule_id: Literal["PP-SEW-SAT-SAMPLE"] = "PP-SEW-SAT-SAMPLE"


class SatelliteResultsDueSoon(_SatelliteSampleDeadline):
    """PP-SEW-SAT-SAMPLE: a satellite system's certified results are due soon (reminder);
    notices emails the satellite system the due date. ``reminded_on`` is the day of the
    daily run that found the reminder due (absent on events published before it was added)."""

    reminded_on: date | None = None


class SatelliteResultsOverdue(_SatelliteSampleDeadline):
    """PP-SEW-SAT-SAMPLE: the 18-working-day deadline passed without delivery (a breach)."""

    recorded_on: date


class CertifiedResult(_Part):
    """One parameter of a certified lab result (mg/l; pH in standard units)."""

    parameter: str
    value: Decimal
    reported: str = ""  # the value as the lab reported it (e.g. "<2")
    lab: str = ""
    analysed_on: date | None = None


class SatelliteResultsDelivered(_SatelliteSampleDeadline):
    """PP-SEW-SAT-SAMPLE: staff released a satellite system's certified results on
    ``delivered_on`` (due by ``due_on``, 18 working days after sampling); notices sends
    them to the satellite system (email)."""

    delivered_on: date
    on_time: bool
    results: tuple[CertifiedResult, ...] = Field(max_length=64)


class SatelliteResampleRequestDecided(Event):
    """PP-SEW-SAT-RESAMPLE: a resample request accepted (within 3 days) or refused, with dates."""

    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("tenant", "sample_id", "requested_on")

    tenant: str
    account_id: str
    sample_id: str
    accepted: bool
    delivered_on: date
    requested_on: date
    last_day: date
    reason: str
    rule_id: Literal["PP-SEW-SAT-RESAMPLE"] = "PP-SEW-SAT-RESAMPLE"


class SplitResampleRequestDecided(Event):
    """PP-SEW-SPLIT: a discharger's resample request after a split, accepted on a significant
    difference (the resample at the discharger's cost: its sample is charged when taken in,
    PP-SEW-SAMPLE-COST) or refused, with the figures."""

    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("tenant", "split_sample_id", "requested_on")

    tenant: str
    account_id: str
    split_sample_id: str
    original_sample_id: str
    accepted: bool
    requested_on: date
    requested_by: str
    differences_mg_l: dict[str, Decimal]
    significant: tuple[str, ...]
    difference_percent: Decimal
    at_discharger_cost: bool
    reason: str = Field(max_length=2000)
    rule_id: Literal["PP-SEW-SPLIT"] = "PP-SEW-SPLIT"


class AnnualReportReceived(Event):
    """PP-SEW-REPORT: a discharger's annual report for ``year`` was received."""

    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("tenant", "account_id", "year")

    tenant: str
    account_id: str
    year: int
    received_on: date
    due_on: date
    late: bool
    rule_id: Literal["PP-SEW-REPORT"] = "PP-SEW-REPORT"


class AnnualReportReminderDue(Event):
    """PP-SEW-REPORT: remind a discharger who has not filed the report due on ``due_on``."""

    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("tenant", "account_id", "year", "reminder_on")

    tenant: str
    account_id: str
    year: int
    due_on: date
    reminder_on: date
    rule_id: Literal["PP-SEW-REPORT"] = "PP-SEW-REPORT"
