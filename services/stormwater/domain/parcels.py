"""A parcel's state in the stormwater service and how one change to it is decided.

``ParcelState`` is what the service keeps per parcel: the latest GIS values, the Engineer's
override (if any), and the current determination (sequence, ERU, breakdown). Each change
(an extract row, an override, a tariff version, a reconsideration) goes through
:func:`redetermine`, which says whether a new ``ERUDetermined`` is due.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from stormwater.domain.determinations import (
    DataSource,
    Determination,
    ParcelData,
    changed,
    determine,
    effective_data,
    pef_fee_id,
    project_evaluation_reason,
)
from stormwater.domain.eru import StormwaterSettings
from stormwater.domain.gis import ParcelRecord
from stormwater.events import DeterminationCause, EruBreakdown, ERUDetermined, FeeCharged


@dataclass(frozen=True)
class TariffView:
    """What stormwater needs from the tariff version in force (built outside the domain)."""

    version_id: str
    effective_from: date
    settings: StormwaterSettings
    eru_rate: Decimal
    project_evaluation_fee: Decimal
    credit_engineer_limit_percent: Decimal
    credit_cap_percent: Decimal
    credit_review_fee: Decimal
    appeal_fee: Decimal


@dataclass(frozen=True)
class Current:
    """The parcel's current determination (what the last ERUDetermined said)."""

    sequence: int
    eru: Decimal
    exempt: bool
    effective_from: date
    tariff_version: str
    breakdown: EruBreakdown
    cause: str


@dataclass(frozen=True)
class ParcelState:
    tenant: str
    parcel_id: str
    owner_name: str
    gis: ParcelData
    gis_digest: str
    parent_parcel_id: str | None = None
    override: dict[str, Any] | None = None
    override_id: str | None = None
    override_source: DataSource = "override"
    current: Current | None = None
    version: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def data(self) -> ParcelData:
        return effective_data(self.gis, self.override, self.override_source)


def gis_data(record: ParcelRecord) -> ParcelData:
    return ParcelData(
        use=record.use,
        area_sqft=record.area_sqft,
        impervious_sqft=record.impervious_sqft,
        woods_sqft=record.woods_sqft,
        excluded_sqft=record.excluded_sqft,
        farmstead=record.farmstead,
    )


@dataclass(frozen=True)
class Redetermined:
    """A parcel's new state and, when its result changed, the event that says so."""

    state: ParcelState
    determination: Determination
    event: ERUDetermined | None


def redetermine(
    state: ParcelState,
    *,
    tariff: TariffView,
    effective_from: date,
    cause: DeterminationCause,
    cause_ref: str,
    now: datetime,
) -> Redetermined:
    """Determine the parcel's ERU from its data under ``tariff``; a new sequence and an
    ``ERUDetermined`` only when the result differs from the current one."""
    found = determine(state.data, tariff.settings, tariff.version_id)
    current = state.current
    if not changed(None if current is None else (current.eru, current.exempt), found):
        assert current is not None
        # Same ERU: keep the breakdown current (new areas, new version) but publish nothing.
        kept = replace(current, breakdown=found.breakdown, tariff_version=tariff.version_id)
        return Redetermined(state=replace(state, current=kept), determination=found, event=None)
    sequence = 1 if current is None else current.sequence + 1
    event = ERUDetermined(
        occurred_at=now,
        tenant=state.tenant,
        parcel_id=state.parcel_id,
        sequence=sequence,
        effective_from=effective_from,
        eru=found.eru,
        previous_eru=None if current is None else current.eru,
        exempt=found.exempt,
        owner_name=state.owner_name,
        breakdown=found.breakdown,
        cause=cause,
        cause_ref=cause_ref,
    )
    new_current = Current(
        sequence=sequence,
        eru=found.eru,
        exempt=found.exempt,
        effective_from=effective_from,
        tariff_version=tariff.version_id,
        breakdown=found.breakdown,
        cause=cause,
    )
    return Redetermined(state=replace(state, current=new_current), determination=found, event=event)


@dataclass(frozen=True)
class ExtractChange:
    """What one accepted extract row changes: the new state, its event, a fee."""

    previous: ParcelState | None
    state: ParcelState
    record: ParcelRecord
    determined: ERUDetermined | None
    fee: FeeCharged | None


def apply_record(
    previous: ParcelState | None,
    record: ParcelRecord,
    *,
    tariff: TariffView,
    today: date,
    file_key: str,
    now: datetime,
) -> ExtractChange | None:
    """One extract row against the parcel as kept: ``None`` when it repeats the GIS values
    already kept (nothing to record, nothing to publish)."""
    if previous is not None and previous.gis_digest == record.digest:
        return None
    new_gis = gis_data(record)
    if previous is None:
        state = ParcelState(
            tenant=record.tenant,
            parcel_id=record.parcel_id,
            owner_name=record.owner_name,
            gis=new_gis,
            gis_digest=record.digest,
            parent_parcel_id=record.parent_parcel_id,
        )
    else:
        state = replace(
            previous,
            owner_name=record.owner_name,
            gis=new_gis,
            gis_digest=record.digest,
            parent_parcel_id=record.parent_parcel_id,
        )
    done = redetermine(
        state, tariff=tariff, effective_from=today, cause="gis_extract", cause_ref=file_key, now=now
    )
    reason = project_evaluation_reason(
        None if previous is None else previous.gis, new_gis, parent_parcel_id=record.parent_parcel_id
    )
    fee = None
    if reason is not None:
        before = "none" if previous is None else format(previous.gis.impervious_sqft, "f")
        fee = FeeCharged(
            occurred_at=now,
            tenant=record.tenant,
            fee_id=pef_fee_id(record.tenant, record.parcel_id, reason),
            parcel_id=record.parcel_id,
            kind="project_evaluation",
            rule_id="PP-CWU-PEF",
            amount=tariff.project_evaluation_fee,
            charged_on=today,
            tariff_version=tariff.version_id,
            description=(
                "Project evaluation fee: undeveloped lot developed"
                if reason == "developed"
                else f"Project evaluation fee: lot split from {record.parent_parcel_id}"
            ),
            details={
                "reason": reason,
                "use": record.use,
                "impervious_sqft_before": before,
                "impervious_sqft_after": format(record.impervious_sqft, "f"),
                "parent_parcel_id": record.parent_parcel_id or "",
                "file_key": file_key,
            },
        )
    return ExtractChange(previous=previous, state=done.state, record=record, determined=done.event, fee=fee)
