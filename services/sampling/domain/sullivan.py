"""Sullivan sewer utility rules on strength: SU-BOD900 penalty days and SU-INDUSTRIAL.

Pure domain code; quantities are Decimal, never float.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from types import MappingProxyType

from sampling.domain.errors import InvalidInput
from sampling.domain.strength import LabResult

# --- SU-BOD900 ---------------------------------------------------------------------------

BOD900_THRESHOLD_MG_L = Decimal("900")
"""SU-BOD900: a BOD concentration of 900 mg/l *or greater* is a violation."""


def bod900_violation_dates(
    daily_results: Iterable[LabResult],
    period_start: date | None = None,
    period_end: date | None = None,
) -> tuple[date, ...]:
    """Distinct sample dates with BOD >= 900 mg/l (SU-BOD900), oldest first.

    Each day is a separate violation, however many results that day reach 900. The
    optional half-open period ``[period_start, period_end)`` limits the days counted.
    """
    days = {
        result.sampled_on
        for result in daily_results
        if result.bod is not None
        and result.bod >= BOD900_THRESHOLD_MG_L
        and (period_start is None or result.sampled_on >= period_start)
        and (period_end is None or result.sampled_on < period_end)
    }
    return tuple(sorted(days))


def bod900_violation_days(
    daily_results: Iterable[LabResult],
    period_start: date | None = None,
    period_end: date | None = None,
) -> int:
    """Number of violation days (SU-BOD900): distinct dates with BOD >= 900 mg/l."""
    return len(bod900_violation_dates(daily_results, period_start, period_end))


def bod900_penalty(days: int, per_day: Decimal) -> Decimal:
    """Penalty for ``days`` violation days at ``per_day`` each (SU-BOD900; tariff: 1,000.00).

    Not rounded here: the bill line is rounded once (X-MONEY). The count of days drives the
    penalty; concentrations drive only the surcharge.
    """
    if isinstance(days, bool) or not isinstance(days, int) or days < 0:
        raise InvalidInput("bod900_violation_days", f"{days!r} must be a non-negative whole number")
    if not isinstance(per_day, Decimal) or not per_day.is_finite() or per_day < 0:
        raise InvalidInput("per_day", f"{per_day!r} must be a non-negative Decimal")
    return per_day * days


# --- SU-INDUSTRIAL -----------------------------------------------------------------------

INDUSTRIAL_EQUIVALENT_FLOW_GAL_PER_DAY = Decimal("2000")
"""SU-INDUSTRIAL: "more than the equivalent of 2,000 gallons per day (GPD) of sanitary wastes"."""

SANITARY_BOD_MG_L = Decimal("400")
SANITARY_SS_MG_L = Decimal("250")
"""Strength of sanitary waste for the equivalency: the ordinance's NORMAL SEWAGE (BOD not
more than 400, suspended solids not more than 250 ppm) and DOMESTIC WASTEWATER (SS at or
below 250, BOD at or below 400 mg/l) definitions (sullivan-sewer-utility.txt; SU-NORMAL)."""

POUNDS_FACTOR = Decimal("8.34")
"""lb per (mg/l x million gallons) for Sullivan (X-POUNDS, TARIFFS.md)."""

MILLION = Decimal("1000000")


def sanitary_equivalent_lb_per_day(
    concentration_mg_l: Decimal,
    flow_gal_per_day: Decimal = INDUSTRIAL_EQUIVALENT_FLOW_GAL_PER_DAY,
) -> Decimal:
    """Pounds per day of a pollutant in ``flow_gal_per_day`` of sanitary waste (X-POUNDS).

    2,000 GPD x 400 mg/l BOD x 8.34 / 1,000,000 = 6.672 lb/day of BOD;
    2,000 GPD x 250 mg/l SS x 8.34 / 1,000,000 = 4.17 lb/day of suspended solids.
    """
    return flow_gal_per_day * concentration_mg_l * POUNDS_FACTOR / MILLION


INDUSTRIAL_BOD_LB_PER_DAY = sanitary_equivalent_lb_per_day(SANITARY_BOD_MG_L).normalize()
"""6.672 lb/day of BOD: the weight found in 2,000 GPD of sanitary waste (SU-INDUSTRIAL)."""
INDUSTRIAL_SS_LB_PER_DAY = sanitary_equivalent_lb_per_day(SANITARY_SS_MG_L).normalize()
"""4.17 lb/day of suspended solids: the weight found in 2,000 GPD of sanitary waste."""

SIC_DIVISIONS = MappingProxyType(
    {
        "A": "Agriculture, Forestry and Fishing",
        "B": "Mining",
        "C": "Construction",
        "D": "Manufacturing",
        "E": "Transportation, Communications, Electric, Gas and Sanitary Services",
        "F": "Wholesale Trade",
        "G": "Retail Trade",
        "H": "Finance, Insurance and Real Estate",
        "I": "Services",
        "J": "Public Administration",
        "K": "Nonclassifiable Establishments",
    }
)
"""Divisions of the Standard Industrial Classification Manual, 1972."""

INDUSTRIAL_SIC_DIVISIONS = frozenset({"A", "B", "D", "E", "I"})
"""SU-INDUSTRIAL: the divisions the ordinance lists (A, B, D, E and I)."""


@dataclass(frozen=True)
class IndustrialUserDetermination:
    """Whether a user is an industrial user (SU-INDUSTRIAL) and why, for the record."""

    is_industrial: bool
    reasons: tuple[str, ...]
    rule_id: str = "SU-INDUSTRIAL"


def _non_negative(value: Decimal | None, field_path: str) -> None:
    if value is None:
        return
    if not isinstance(value, Decimal) or not value.is_finite() or value < 0:
        raise InvalidInput(field_path, f"{value!r} must be a non-negative Decimal")


def _load(lb_per_day: Decimal | None) -> str:
    return "not measured" if lb_per_day is None else f"{lb_per_day} lb/day"


def is_industrial_user(
    nongovernmental: bool,
    nonresidential: bool,
    sic_division: str | None,
    avg_daily_flow_gal: Decimal,
    bod_lb_per_day: Decimal | None,
    ss_lb_per_day: Decimal | None,
    discharges_toxic: bool,
) -> IndustrialUserDetermination:
    """Determine an industrial user under the Sullivan ordinance's definition (SU-INDUSTRIAL).

    Two routes, as the ordinance defines them:

    1. A nongovernmental, nonresidential user in SIC Division A, B, D, E or I whose
       discharge is more than 2,000 GPD, or whose BOD or suspended solids weight is more
       than that found in 2,000 GPD of sanitary waste: 6.672 lb/day of BOD, 4.17 lb/day of
       SS (see :func:`sanitary_equivalent_lb_per_day`). "More than" applies to the weights
       as to the volume: a load exactly equal to 2,000 GPD's is not industrial.
    2. Any nongovernmental user discharging toxic pollutants in harmful quantity
       (``discharges_toxic``, a finding made by the utility), whatever its volume, class
       or SIC division.

    ``avg_daily_flow_gal`` and the loads are after any sanitary-waste exclusion the utility
    applies ("the grantee may exclude domestic wastes"); an unmeasured load is ``None``.
    ``sic_division`` is the division letter (A-K, case-insensitive), or None if unknown.
    """
    if avg_daily_flow_gal is None:
        raise InvalidInput("avg_daily_flow_gal", "is required")
    _non_negative(avg_daily_flow_gal, "avg_daily_flow_gal")
    _non_negative(bod_lb_per_day, "bod_lb_per_day")
    _non_negative(ss_lb_per_day, "ss_lb_per_day")
    division: str | None = None
    if sic_division is not None:
        if not isinstance(sic_division, str) or sic_division.strip().upper() not in SIC_DIVISIONS:
            raise InvalidInput("sic_division", f"{sic_division!r} is not an SIC division letter (A-K)")
        division = sic_division.strip().upper()

    if not nongovernmental:
        return IndustrialUserDetermination(
            False, ("governmental user: the definition covers nongovernmental users only",)
        )

    reasons: list[str] = []
    if discharges_toxic:
        reasons.append("nongovernmental user discharging toxic pollutants in harmful quantity")

    volume_or_load: list[str] = []
    if avg_daily_flow_gal > INDUSTRIAL_EQUIVALENT_FLOW_GAL_PER_DAY:
        volume_or_load.append(
            f"average flow {avg_daily_flow_gal} gal/day > {INDUSTRIAL_EQUIVALENT_FLOW_GAL_PER_DAY}"
        )
    if bod_lb_per_day is not None and bod_lb_per_day > INDUSTRIAL_BOD_LB_PER_DAY:
        volume_or_load.append(
            f"BOD {bod_lb_per_day} lb/day > {INDUSTRIAL_BOD_LB_PER_DAY} (2,000 GPD at {SANITARY_BOD_MG_L} mg/l)"
        )
    if ss_lb_per_day is not None and ss_lb_per_day > INDUSTRIAL_SS_LB_PER_DAY:
        volume_or_load.append(
            f"SS {ss_lb_per_day} lb/day > {INDUSTRIAL_SS_LB_PER_DAY} (2,000 GPD at {SANITARY_SS_MG_L} mg/l)"
        )

    listed = division is not None and division in INDUSTRIAL_SIC_DIVISIONS
    if nonresidential and division is not None and listed and volume_or_load:
        reasons.append(
            f"nongovernmental, nonresidential, SIC Division {division} ({SIC_DIVISIONS[division]}); "
            + "; ".join(volume_or_load)
        )
    if reasons:
        return IndustrialUserDetermination(True, tuple(reasons))

    why_not: list[str] = []
    if not nonresidential:
        why_not.append("residential user")
    if division is None:
        why_not.append("no SIC division recorded")
    elif not listed:
        why_not.append(f"SIC Division {division} ({SIC_DIVISIONS[division]}) is not a listed division")
    if not volume_or_load:
        why_not.append(
            f"discharge not above the equivalent of {INDUSTRIAL_EQUIVALENT_FLOW_GAL_PER_DAY} GPD of sanitary "
            f"waste (flow {avg_daily_flow_gal} gal/day, BOD {_load(bod_lb_per_day)}, SS {_load(ss_lb_per_day)})"
        )
    why_not.append("no toxic discharge")
    return IndustrialUserDetermination(False, tuple(why_not))
