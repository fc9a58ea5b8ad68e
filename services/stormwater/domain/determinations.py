"""ERU determinations of the stormwater service: which data counts, what the ERU is, and
whether it changed (PP-CWU-DATA, PP-CWU-ERU, PP-CWU-PEF).

- The data that counts is the GIS values with the Engineer's manual override on top
  (PP-CWU-DATA): an override replaces only the fields it gives and stays in force until
  the Engineer withdraws it, whatever later extracts say (they are kept as history beside
  it). A farmstead is its own residential parcel (PP-CWU-EXEMPT) and is charged.
- The determination applies the existing ERU function (``stormwater.domain.eru``) under
  one tariff version and keeps its breakdown (areas, composite CN, depth, volume, the
  standard ERU's volume, the tariff version).
- A determination is published only when its result (the ERU and whether the parcel is
  exempt) differs from the parcel's current one: new GIS values or a new tariff version
  that leave the ERU as it was change nothing on a bill.
- PP-CWU-PEF: a parcel that goes from undeveloped to developed between two extracts, or a
  new parcel split from another (``parent_parcel_id``), is charged the project evaluation
  fee once for that reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from stormwater.domain.eru import (
    EruDetermination,
    Parcel,
    StormwaterSettings,
    determine_eru,
)
from stormwater.events import EruBreakdown

DataSource = Literal["gis", "override", "application", "reconsideration", "appeal"]
OVERRIDABLE = ("use", "area_sqft", "impervious_sqft", "woods_sqft", "excluded_sqft")

CN_PLACES = 4
DEPTH_PLACES = 6
VOLUME_PLACES = 4
RATIO_PLACES = 6


@dataclass(frozen=True)
class ParcelData:
    """The values an ERU is determined from, and where they came from."""

    use: str
    area_sqft: Decimal
    impervious_sqft: Decimal
    woods_sqft: Decimal = Decimal(0)
    excluded_sqft: Decimal = Decimal(0)
    farmstead: bool = False
    data_source: DataSource = "gis"

    def parcel(self) -> Parcel:
        return Parcel(
            use=self.use,  # type: ignore[arg-type]
            area_sqft=self.area_sqft,
            impervious_sqft=self.impervious_sqft,
            woods_sqft=self.woods_sqft,
            excluded_sqft=self.excluded_sqft,
        )

    @property
    def developed(self) -> bool:
        """PP-CWU-IMPERV-RES: a residential parcel is developed; any other lot is developed
        once it has impervious area. Exempt uses are never "developed" for the fee."""
        if self.use == "residential":
            return True
        return self.use == "nonresidential" and self.impervious_sqft > 0


def effective_data(
    gis: ParcelData, override: Mapping[str, Decimal | str] | None, source: DataSource = "override"
) -> ParcelData:
    """PP-CWU-DATA: the GIS values with the override's fields on top (``source``: the
    Engineer's override, or the data found on reconsideration)."""
    if not override:
        return gis
    changes = {name: override[name] for name in OVERRIDABLE if name in override}
    if not changes:
        return gis
    return replace(gis, data_source=source, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Determination:
    eru: Decimal
    exempt: bool
    breakdown: EruBreakdown

    @property
    def result(self) -> tuple[Decimal, bool]:
        return (self.eru, self.exempt)


_EXPONENTS = {places: Decimal(1).scaleb(-places) for places in range(0, 9)}


def _shown(value: Decimal, places: int) -> Decimal:
    """Half-up to ``places`` (display of an unrounded figure; the inputs are never negative)."""
    return value.quantize(_EXPONENTS[places], ROUND_HALF_UP)


def breakdown_of(determination: EruDetermination, data: ParcelData, tariff_version: str) -> EruBreakdown:
    """The stored and published breakdown. Built with ``model_construct``: every value is
    already the right type (Decimals from the domain), and this runs once per parcel of an
    extract, so pydantic's validation would be a third of the determination's cost."""
    d = determination
    return EruBreakdown.model_construct(
        use=data.use,
        area_sqft=data.area_sqft,
        impervious_sqft=data.impervious_sqft,
        woods_sqft=data.woods_sqft,
        excluded_sqft=data.excluded_sqft,
        farmstead=data.farmstead,
        counted_area_sqft=d.counted_area_sqft,
        impervious_counted_sqft=d.impervious_counted_sqft,
        composite_cn=None if d.composite_cn is None else _shown(d.composite_cn, CN_PLACES),
        runoff_in=None if d.runoff_in is None else _shown(d.runoff_in, DEPTH_PLACES),
        runoff_cuft=_shown(d.runoff_cuft, VOLUME_PLACES),
        standard_runoff_cuft=_shown(d.standard_runoff_cuft, VOLUME_PLACES),
        eru_unrounded=_shown(d.eru_unrounded, RATIO_PLACES),
        eru_places=d.settings.eru_places,
        tariff_version=tariff_version,
        rule_ids=d.rule_ids,
        data_source=data.data_source,
    )


def determine(data: ParcelData, settings: StormwaterSettings, tariff_version: str) -> Determination:
    """The ERU of ``data`` under one tariff version, with its breakdown (PP-CWU-ERU)."""
    found = determine_eru(data.parcel(), settings)
    return Determination(
        eru=found.eru, exempt=found.exempt, breakdown=breakdown_of(found, data, tariff_version)
    )


def changed(current: tuple[Decimal, bool] | None, new: Determination) -> bool:
    """Publish only a different result: another ERU, or exemption gained or lost."""
    return current is None or current != new.result


PefReason = Literal["developed", "lot_split"]


def project_evaluation_reason(
    previous: ParcelData | None, new: ParcelData, *, parent_parcel_id: str | None
) -> PefReason | None:
    """PP-CWU-PEF, from successive extracts: undeveloped -> developed, or a new parcel that
    is part of a lot split. A parcel first seen already developed owes nothing (its
    development predates the records)."""
    if previous is None:
        return "lot_split" if parent_parcel_id else None
    if not previous.developed and new.developed:
        return "developed"
    return None


def pef_fee_id(tenant: str, parcel_id: str, reason: PefReason) -> str:
    """One fee per parcel and reason: the business key makes it once only."""
    return f"PEF-{tenant}-{parcel_id}-{reason}"
