"""Events published by stormwater (the contract other services import; additive changes only).

Consumers: billing keeps ERUs (``ERUDetermined``), credits (``CreditChanged``), one-time
fees (``FeeCharged``) and account credits (``RefundGranted``); notices mails the proposed
credit revocation (``CreditRevocationProposed``) and the decision letters
(``ReconsiderationDecided``, ``AppealDecided``); ``GisExtractTakenIn`` summarises an upload
and points at its rejection report in S3 (claim check).

Decimal fields travel as decimal strings ("1.25"), never JSON floats (X-MONEY). Dates are
``YYYY-MM-DD``; ``effective_from`` is the first day a value applies (half-open periods).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from common.events import Event
from common.reports import Report

SOURCE = "sewerbill.stormwater"

DeterminationCause = Literal[
    "gis_extract",  # a new parcel, or new values for it, in a GIS extract
    "manual_override",  # the Engineer entered data from other reliable sources (PP-CWU-DATA)
    "tariff_change",  # a new stormwater tariff version changed the settings
    "reconsideration",  # an approved reconsideration (PP-CWU-RECONSIDER)
    "appeal",  # the Board reversed a reconsideration decision (PP-CWU-APPEAL)
    "service_application",  # areas recorded at building permit / site plan review (PP-CWU-APPLICATION)
]


def _decimal_string(value: Decimal) -> str:
    return format(value, "f")


class EruBreakdown(BaseModel):
    """How an ERU was found (STYLE 9): the parcel's areas, composite CN, runoff depth and
    volume, the standard ERU's volume and the tariff version, so a clerk can explain it.

    ``composite_cn`` and ``runoff_in`` are null when nothing is counted (exempt parcels, or
    all of the area excluded). Figures are shown from the unrounded values: CN and volumes
    to 4 decimals, depth to 6, ``eru_unrounded`` to 6; only ``ERUDetermined.eru`` is rounded.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    use: str
    area_sqft: Decimal
    impervious_sqft: Decimal
    woods_sqft: Decimal
    excluded_sqft: Decimal
    farmstead: bool = False
    counted_area_sqft: Decimal
    impervious_counted_sqft: Decimal
    composite_cn: Decimal | None
    runoff_in: Decimal | None
    runoff_cuft: Decimal
    standard_runoff_cuft: Decimal
    eru_unrounded: Decimal
    eru_places: int
    tariff_version: str
    rule_ids: tuple[str, ...]
    data_source: Literal["gis", "override", "application", "reconsideration", "appeal"] = "gis"

    @field_serializer(
        "area_sqft",
        "impervious_sqft",
        "woods_sqft",
        "excluded_sqft",
        "counted_area_sqft",
        "impervious_counted_sqft",
        "runoff_cuft",
        "standard_runoff_cuft",
        "eru_unrounded",
    )
    def _plain(self, value: Decimal) -> str:
        return _decimal_string(value)

    @field_serializer("composite_cn", "runoff_in")
    def _optional(self, value: Decimal | None) -> str | None:
        return None if value is None else _decimal_string(value)


class ERUDetermined(Event):
    """A parcel's ERU from ``effective_from`` on (PP-CWU-ERU), published only when it changed.

    ``sequence`` counts the parcel's determinations (1, 2, ...): a consumer keeps, per
    parcel and date, the determination with the highest sequence whose ``effective_from``
    is on or before that date. ``previous_eru`` is null for a parcel's first determination.
    ``cause`` says why it was (re)determined and ``cause_ref`` points at what caused it (the
    GIS file key, override id, tariff version, reconsideration or appeal id).
    """

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "parcel_id", "sequence")

    tenant: str
    parcel_id: str
    sequence: int = Field(ge=1)
    effective_from: date
    eru: Decimal
    previous_eru: Decimal | None = None
    exempt: bool
    owner_name: str
    breakdown: EruBreakdown
    cause: DeterminationCause
    cause_ref: str

    @field_serializer("eru")
    def _eru(self, value: Decimal) -> str:
        return _decimal_string(value)

    @field_serializer("previous_eru")
    def _previous(self, value: Decimal | None) -> str | None:
        return None if value is None else _decimal_string(value)


DETERMINATIONS_PER_EVENT = 50
"""At most this many determinations in one ``ERUsDetermined`` (each is at most about 3 KB,
so an event stays well under EventBridge's 256 KB)."""


class ERUsDetermined(Event):
    """A chunk of a GIS extract's new determinations (at most ``DETERMINATIONS_PER_EVENT``):
    one event per chunk, not per parcel (issue 11). Each determination is an
    ``ERUDetermined`` as above, kept by the consumer by its own business key (tenant,
    parcel, sequence), exactly as if it had come alone. The business key of the chunk is
    the extract (content digest) and the chunk's index in it.
    """

    SOURCE = SOURCE
    BUSINESS_KEY = ("file_id", "chunk")

    file_id: str = Field(max_length=64)
    chunk: int = Field(ge=0)
    determinations: tuple[ERUDetermined, ...] = Field(min_length=1, max_length=DETERMINATIONS_PER_EVENT)


CreditStatus = Literal["submitted", "under_review", "approved", "denied", "revoked"]


class CreditChanged(Event):
    """A stormwater credit changed state (PP-CWU-CREDIT, PP-CWU-CREDIT-REVOKE).

    Billing applies ``credit_percent`` to the ERU charge (never the base charge) from
    ``effective_from`` on: the approval date for ``approved`` (never retroactive), the
    revocation date for ``revoked`` (``credit_percent`` 0). Other states carry
    ``credit_percent`` 0 and change nothing on a bill.
    """

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "parcel_id", "credit_id", "status")

    tenant: str
    parcel_id: str
    credit_id: str
    status: CreditStatus
    effective_from: date
    credit_percent: Decimal = Field(ge=0, le=100)
    tss_removal_percent: Decimal | None = None
    engineer_limit_percent: Decimal | None = None
    cap_percent: Decimal | None = None
    reason: str = ""
    rule_id: str = "PP-CWU-CREDIT"

    @field_serializer("credit_percent")
    def _percent(self, value: Decimal) -> str:
        return _decimal_string(value)

    @field_serializer("tss_removal_percent", "engineer_limit_percent", "cap_percent")
    def _optional(self, value: Decimal | None) -> str | None:
        return None if value is None else _decimal_string(value)


FeeKind = Literal["project_evaluation", "credit_review", "appeal"]


class FeeCharged(Event):
    """A one-time fee for billing to charge on the parcel's account: the project evaluation
    fee (PP-CWU-PEF), a credit application's review fee (PP-CWU-CREDIT) or an appeal fee
    (PP-CWU-APPEAL). ``fee_id`` is the business key; ``details`` is the derivation.
    """

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "fee_id")

    tenant: str
    fee_id: str
    parcel_id: str
    account_id: str | None = None
    kind: FeeKind
    rule_id: str
    amount: Decimal = Field(gt=0)
    charged_on: date
    tariff_version: str
    description: str
    details: dict[str, str] = Field(default_factory=dict)

    @field_serializer("amount")
    def _amount(self, value: Decimal) -> str:
        return _decimal_string(value)


class RefundGranted(Event):
    """An approved reconsideration's refund, for billing to post as a credit on the account
    (PP-CWU-RECONSIDER; ledger kind ``credit``). ``amount`` is positive: what is owed back.

    No longer published (issue 28): a change corrects the value from the reconsidered
    bill's period start and billing's re-rating of that bill is the correction. Billing
    still keeps one (an event already on its way) by its business key.
    """

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "reconsideration_id")

    tenant: str
    reconsideration_id: str
    account_id: str
    parcel_id: str
    bill_id: str
    amount: Decimal = Field(gt=0)
    granted_on: date
    rule_id: str = "PP-CWU-RECONSIDER"
    details: dict[str, str] = Field(default_factory=dict)

    @field_serializer("amount")
    def _amount(self, value: Decimal) -> str:
        return _decimal_string(value)


class CreditRevocationProposed(Event):
    """The written notice of a proposed credit revocation (PP-CWU-CREDIT-REVOKE), for the
    notices service to mail: at least 30 days before ``revocation_date``."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "parcel_id", "credit_id", "revocation_date")

    tenant: str
    parcel_id: str
    credit_id: str
    owner_name: str
    account_id: str | None = None
    notice_date: date
    revocation_date: date
    reason: str
    rule_id: str = "PP-CWU-CREDIT-REVOKE"


ReconsiderationOutcome = Literal["denied", "no_change", "changed"]


class ReconsiderationDecided(Event):
    """The Engineer's decision on a reconsideration request (PP-CWU-RECONSIDER), for the
    decision letter. ``no_change``: the difference found was 10% or less. ``appeal_by`` is
    the last day an appeal may be filed (PP-CWU-APPEAL)."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "reconsideration_id")

    tenant: str
    reconsideration_id: str
    parcel_id: str
    account_id: str
    bill_id: str
    owner_name: str
    decided_on: date
    outcome: ReconsiderationOutcome
    reason: str
    eru_before: Decimal
    eru_found: Decimal
    refund_amount: Decimal = Decimal(0)
    appeal_by: date
    rule_id: str = "PP-CWU-RECONSIDER"

    @field_serializer("eru_before", "eru_found", "refund_amount")
    def _decimal(self, value: Decimal) -> str:
        return _decimal_string(value)


class AppealDecided(Event):
    """The Village Board's outcome on an appeal of a reconsideration decision (PP-CWU-APPEAL):
    ``reversed`` needs a majority of the members voting. A reversal carries the ERU the Board
    set (``eru_set``, determined from the parcel data it found) and the day it applies from
    (``effective_from``, the hearing date); the parcel's new ``ERUDetermined`` (cause
    ``appeal``, ``cause_ref`` the appeal id) follows when that ERU differs from the current
    one. Both are null when the decision is upheld."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "appeal_id")

    tenant: str
    appeal_id: str
    reconsideration_id: str
    parcel_id: str
    owner_name: str
    hearing_date: date
    votes_to_reverse: int = Field(ge=0)
    votes_to_uphold: int = Field(ge=0)
    outcome: Literal["reversed", "upheld"]
    eru_set: Decimal | None = None
    effective_from: date | None = None
    rule_id: str = "PP-CWU-APPEAL"

    @field_serializer("eru_set")
    def _eru_set(self, value: Decimal | None) -> str | None:
        return None if value is None else _decimal_string(value)


class LineRejection(BaseModel):
    """One row of a GIS extract that was not accepted: ``line`` is the CSV line (the header is
    line 1) or the GeoJSON feature index (from 0); ``field`` the column/property."""

    model_config = ConfigDict(frozen=True)

    line: int = Field(ge=0)
    field: str
    reason: str


class GisExtractTakenIn(Event):
    """A GIS extract under ``gis/`` was taken in. The full rejection report (JSON lines:
    file_key, line, field, reason) is in S3 at ``report_key`` (claim check; ``report`` says
    how many rows and counts them by field); ``first_rejections`` holds at most the first 20."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("file_id",)

    file_key: str
    file_id: str
    format: Literal["csv", "geojson"]
    # common.imports.ImportCounts (issue 26): accepted (new parcels) + changed (a new
    # version of a kept parcel, the old one kept as history) + repeated (identical to the
    # version kept, or to an earlier line of the file) + rejected = lines. ``unchanged`` is
    # ``repeated`` under its earlier name, kept for consumers that read it.
    lines: int = Field(ge=0, default=0)
    accepted: int = Field(ge=0)
    changed: int = Field(ge=0)
    repeated: int = Field(ge=0, default=0)
    unchanged: int = Field(ge=0)
    rejected: int = Field(ge=0)
    report_bucket: str | None = None
    report_key: str | None = None
    report: Report | None = None
    first_rejections: tuple[LineRejection, ...] = ()
