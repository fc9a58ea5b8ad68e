"""Equivalent runoff units of a parcel (Pleasant Prairie Clean Water Utility).

Rules (RULES.md, ``pleasant-prairie-stormwater``):

- PP-CWU-EXEMPT: agricultural land and public right-of-way are exempt (0 ERU, no base
  charge). A farmstead is entered as its own ``residential`` parcel.
- PP-CWU-IMPERV-RES: residential impervious = structures + the 750 sq ft allowance, never
  more than the counted area.
- PP-CWU-IMPERV-NONRES: nonresidential impervious = all impervious surfaces.
- PP-CWU-CN: composite CN = area-weighted mean of 98 (impervious), the Village's pervious
  CN (other pervious) and 30 (woods, brush, meadow); ponds, lakes, agricultural land and
  wetlands (``excluded_sqft``) are removed from the area used for both CN and volume.
- PP-CWU-TR55: runoff depth by the TR-55 curve number method, P = 2.0 in; volume = Q x area.
- PP-CWU-ERU-STD: one ERU is the runoff of the standard parcel, 15,100 sq ft, 18.21%
  impervious.
- PP-CWU-ERU: ERU = parcel runoff volume / standard runoff volume, rounded (tariff
  setting: 2 decimals, half-up). The ERU is the only figure rounded (X-MONEY).

Decisions (documented here because the ordinance is silent):

- Residential allowance vs woods/excluded area. ``Parcel.impervious_sqft`` is the area of
  structures for a residential parcel (CONTRACTS.md). The counted impervious area is
  ``min(structures + allowance, counted area - woods)``: the allowance is cut down so
  impervious + woods never exceed the counted area (area - excluded) and the other
  pervious area is never negative. Input validation checks the structures, not the
  allowance: structures + woods + excluded must fit within ``area_sqft``.
- A non-exempt parcel whose counted area is 0 (all of it pond, lake, agricultural land or
  wetland) is valid and has 0 ERU: the ordinance removes that area from the runoff volume,
  so none is left to charge for. Its composite CN and runoff depth are undefined
  (``None``). It is still not exempt (the base charge applies, PP-CWU-BASE). A parcel
  whose ``area_sqft`` is 0 is invalid input.
- Exempt parcels are validated like any other but not measured: ``eru`` 0, counted area
  0, volumes 0, composite CN and runoff depth ``None``.
- Output formatting (``to_contract_dict``, CONTRACTS.md ``eru``): every figure is shown
  from its unrounded value, rounded half-up for display only: ``composite_cn`` and the
  volumes ``runoff_cuft``/``standard_runoff_cuft`` at 4 decimals, ``runoff_in`` at 6. The
  ERU is computed from the unrounded volumes, so a clerk who divides the two volumes shown
  and rounds half-up to 2 places gets the ERU. (Volumes computed from a rounded depth do
  not: 100,000 sq ft with 2,500 impervious once showed 3069.17 / 627.03 = 4.89 beside an
  ERU of 4.90.) The 4-place volumes bound the clerk's quotient to within about
  (1 + ERU) x 8e-8 of the ratio, so only a ratio that close to a half-cent boundary can
  still round apart (30,000 random parcels each: 2 up to 100,000 sq ft, 12 up to
  1,000,000, 99 up to 10,000,000 sq ft; the audit of issue 8 found about a third of
  large parcels before).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property
from typing import Any, Literal, get_args

from common.money import round_half_up
from common.values import NotADecimal, to_decimal
from stormwater.domain.errors import InvalidParcel, InvalidSettings, StormwaterError
from stormwater.domain.tr55 import (
    HUNDRED,
    HYDROLOGY,
    ZERO,
    composite_cn,
    runoff_depth_in,
    runoff_volume_cuft,
)

RULE_EXEMPT = "PP-CWU-EXEMPT"
RULE_ERU_STD = "PP-CWU-ERU-STD"
RULE_ERU = "PP-CWU-ERU"
RULE_IMPERV_RES = "PP-CWU-IMPERV-RES"
RULE_IMPERV_NONRES = "PP-CWU-IMPERV-NONRES"
RULE_CN = "PP-CWU-CN"
RULE_TR55 = "PP-CWU-TR55"

ParcelUse = Literal["residential", "nonresidential", "agricultural", "right_of_way"]
PARCEL_USES: tuple[str, ...] = get_args(ParcelUse)
EXEMPT_USES: frozenset[str] = frozenset({"agricultural", "right_of_way"})
"""PP-CWU-EXEMPT: agricultural land and public right-of-way."""

CN_PLACES = 4
RUNOFF_IN_PLACES = 6
RUNOFF_CUFT_PLACES = 4
UNROUNDED_PLACES = 6
"""Places shown for unrounded figures in ``derivation()`` (display only)."""


def _to_decimal(value: object, field: str, error: type[StormwaterError]) -> Decimal:
    """Accept a Decimal, an int or a decimal string; refuse floats (X-MONEY) and non-finite values."""
    try:
        return to_decimal(value)
    except NotADecimal as exc:
        raise error(field, str(exc)) from None


@dataclass(frozen=True)
class StormwaterSettings:
    """The tariff's ERU settings (``pleasant-prairie-stormwater``, TARIFFS.md).

    Built by the tariff layer from the effective tariff version; ``tariff_defaults()``
    gives the 2023-01-01 values. Decimal fields also accept ints and decimal strings;
    floats are refused. ``eru_places`` is the ERU rounding of PP-CWU-ERU (an int).
    """

    impervious_cn: Decimal
    pervious_cn: Decimal
    woods_cn: Decimal
    design_storm_in: Decimal
    standard_area_sqft: Decimal
    standard_impervious_fraction: Decimal
    residential_allowance_sqft: Decimal
    eru_places: int

    def __post_init__(self) -> None:
        for name in (
            "impervious_cn",
            "pervious_cn",
            "woods_cn",
            "design_storm_in",
            "standard_area_sqft",
            "standard_impervious_fraction",
            "residential_allowance_sqft",
        ):
            field = f"settings.{name}"
            object.__setattr__(self, name, _to_decimal(getattr(self, name), field, InvalidSettings))
        for name in ("impervious_cn", "pervious_cn", "woods_cn"):
            cn: Decimal = getattr(self, name)
            if cn <= 0 or cn > HUNDRED:
                raise InvalidSettings(
                    f"settings.{name}", f"a curve number must be above 0 and at most 100, got {cn}"
                )
        if self.design_storm_in <= 0:
            raise InvalidSettings(
                "settings.design_storm_in", f"must be above 0 in, got {self.design_storm_in}"
            )
        if self.standard_area_sqft <= 0:
            raise InvalidSettings(
                "settings.standard_area_sqft", f"must be above 0, got {self.standard_area_sqft}"
            )
        if not ZERO <= self.standard_impervious_fraction <= 1:
            raise InvalidSettings(
                "settings.standard_impervious_fraction",
                f"must be between 0 and 1, got {self.standard_impervious_fraction}",
            )
        if self.residential_allowance_sqft < 0:
            raise InvalidSettings(
                "settings.residential_allowance_sqft",
                f"must not be negative, got {self.residential_allowance_sqft}",
            )
        if isinstance(self.eru_places, bool) or not isinstance(self.eru_places, int) or self.eru_places < 0:
            raise InvalidSettings(
                "settings.eru_places", f"must be a non-negative integer, got {self.eru_places!r}"
            )
        if self.standard.runoff_cuft <= 0:
            raise InvalidSettings(
                "settings.design_storm_in",
                f"the standard parcel (CN {self.standard.composite_cn:.4f}) has no runoff from a "
                f"{self.design_storm_in} in storm, so an ERU cannot be computed",
            )

    @classmethod
    def tariff_defaults(cls) -> StormwaterSettings:
        """TARIFFS.md ``pleasant-prairie-stormwater`` version 2023-01-01 (pervious CN 74 and
        the 2-decimal rounding are **example** values)."""
        return cls(
            impervious_cn=Decimal(98),
            pervious_cn=Decimal(74),
            woods_cn=Decimal(30),
            design_storm_in=Decimal("2.0"),
            standard_area_sqft=Decimal(15100),
            standard_impervious_fraction=Decimal("0.1821"),
            residential_allowance_sqft=Decimal(750),
            eru_places=2,
        )

    @property
    def standard_impervious_sqft(self) -> Decimal:
        """Impervious area of the standard parcel (PP-CWU-ERU-STD): 15,100 x 0.1821 = 2,749.71."""
        return HYDROLOGY.multiply(self.standard_area_sqft, self.standard_impervious_fraction)

    @cached_property
    def standard(self) -> Hydrology:
        """Hydrology of the standard ERU parcel (PP-CWU-ERU-STD), unrounded.

        Computed by the same code path as any parcel, so the standard parcel's ERU is
        exactly 1.
        """
        return _hydrology(self.standard_area_sqft, self.standard_impervious_sqft, ZERO, self)


@dataclass(frozen=True)
class Hydrology:
    """Composite CN, runoff depth and runoff volume of a counted area (all unrounded).

    ``composite_cn`` and ``runoff_in`` are ``None`` when the counted area is 0.
    """

    composite_cn: Decimal | None
    runoff_in: Decimal | None
    runoff_cuft: Decimal


def _hydrology(
    counted_area_sqft: Decimal, impervious_sqft: Decimal, woods_sqft: Decimal, settings: StormwaterSettings
) -> Hydrology:
    """PP-CWU-CN then PP-CWU-TR55 on a counted area."""
    if counted_area_sqft == 0:
        return Hydrology(composite_cn=None, runoff_in=None, runoff_cuft=ZERO)
    cn = composite_cn(
        counted_area_sqft,
        impervious_sqft,
        woods_sqft,
        impervious_cn=settings.impervious_cn,
        pervious_cn=settings.pervious_cn,
        woods_cn=settings.woods_cn,
    )
    q_in = runoff_depth_in(cn, settings.design_storm_in)
    return Hydrology(composite_cn=cn, runoff_in=q_in, runoff_cuft=runoff_volume_cuft(q_in, counted_area_sqft))


@dataclass(frozen=True)
class Parcel:
    """A parcel as the ERU rules see it (CONTRACTS.md ``parcel``; ``credit_percent`` is not
    an ERU input and is handled by the credit rules).

    ``impervious_sqft`` is the area of structures for a ``residential`` parcel (the
    allowance is added by PP-CWU-IMPERV-RES) and all impervious surface otherwise.
    ``excluded_sqft`` is ponds, lakes, agricultural land and wetlands (PP-CWU-CN).
    Areas also accept ints and decimal strings; floats are refused.

    Raises ``InvalidParcel`` naming the field: unknown use [``parcel.use``]; a negative or
    non-numeric area [that field]; ``area_sqft`` of 0, or impervious + woods + excluded
    above ``area_sqft`` [``parcel.area_sqft``].
    """

    use: ParcelUse
    area_sqft: Decimal
    impervious_sqft: Decimal
    woods_sqft: Decimal = ZERO
    excluded_sqft: Decimal = ZERO

    def __post_init__(self) -> None:
        if not isinstance(self.use, str) or self.use not in PARCEL_USES:
            raise InvalidParcel("parcel.use", f"{self.use!r} is not one of {', '.join(PARCEL_USES)}")
        for name in ("area_sqft", "impervious_sqft", "woods_sqft", "excluded_sqft"):
            field = f"parcel.{name}"
            value = _to_decimal(getattr(self, name), field, InvalidParcel)
            if value < 0:
                raise InvalidParcel(field, f"must not be negative, got {value}")
            object.__setattr__(self, name, value)
        if self.area_sqft == 0:
            raise InvalidParcel("parcel.area_sqft", "must be above 0")
        occupied = HYDROLOGY.add(HYDROLOGY.add(self.impervious_sqft, self.woods_sqft), self.excluded_sqft)
        if occupied > self.area_sqft:
            raise InvalidParcel(
                "parcel.area_sqft",
                f"impervious ({self.impervious_sqft}) + woods ({self.woods_sqft}) + excluded "
                f"({self.excluded_sqft}) = {occupied} sq ft exceed the parcel area ({self.area_sqft})",
            )

    @property
    def exempt(self) -> bool:
        """PP-CWU-EXEMPT: agricultural land and public right-of-way."""
        return self.use in EXEMPT_USES

    @property
    def counted_area_sqft(self) -> Decimal:
        """Area used for CN and volume: the parcel less excluded area (PP-CWU-CN)."""
        return HYDROLOGY.subtract(self.area_sqft, self.excluded_sqft)


def counted_impervious_sqft(parcel: Parcel, settings: StormwaterSettings) -> Decimal:
    """Impervious area that enters the composite CN.

    PP-CWU-IMPERV-RES: structures + allowance, capped so impervious + woods never exceed
    the counted area. PP-CWU-IMPERV-NONRES: all impervious surface, as given.
    """
    if parcel.use != "residential":
        return parcel.impervious_sqft
    return min(
        HYDROLOGY.add(parcel.impervious_sqft, settings.residential_allowance_sqft),
        HYDROLOGY.subtract(parcel.counted_area_sqft, parcel.woods_sqft),
    )


def format_fixed(value: Decimal, places: int) -> str:
    """A decimal string with exactly ``places`` decimals, rounded half-up (display only)."""
    return str(round_half_up(value, places))


def format_plain(value: Decimal) -> str:
    """A decimal string without exponent or trailing zeros: 15100 -> "15100", 0.50 -> "0.5"."""
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def _optional_fixed(value: Decimal | None, places: int) -> str | None:
    return None if value is None else format_fixed(value, places)


@dataclass(frozen=True)
class EruDetermination:
    """The ERU determination of one parcel under one settings version (PP-CWU-ERU).

    ``eru`` is rounded half-up to ``settings.eru_places`` (0 when exempt); every other
    figure is unrounded. ``composite_cn``/``runoff_in`` are ``None`` when nothing is
    counted (exempt, or counted area 0).
    """

    parcel: Parcel
    settings: StormwaterSettings
    exempt: bool
    eru: Decimal
    eru_unrounded: Decimal
    composite_cn: Decimal | None
    runoff_in: Decimal | None
    runoff_cuft: Decimal
    standard_runoff_cuft: Decimal
    counted_area_sqft: Decimal
    impervious_counted_sqft: Decimal

    @property
    def rule_ids(self) -> tuple[str, ...]:
        """Rules this determination applied, for the bill line and the audit event."""
        if self.exempt:
            return (RULE_EXEMPT,)
        imperv = RULE_IMPERV_RES if self.parcel.use == "residential" else RULE_IMPERV_NONRES
        return (RULE_ERU, RULE_ERU_STD, imperv, RULE_CN, RULE_TR55)

    def to_contract_dict(self) -> dict[str, str | bool | None]:
        """The CONTRACTS.md ``sewerbill eru`` output.

        Standard parcel: {"eru": "1.00", "composite_cn": "78.3704", "runoff_in": "0.498285",
        "runoff_cuft": "627.0084", "standard_runoff_cuft": "627.0084",
        "counted_area_sqft": "15100", "exempt": false}. Exempt: "eru": "0", "exempt": true,
        ``composite_cn``/``runoff_in`` null. Each figure from its unrounded value (module
        docstring), so runoff_cuft / standard_runoff_cuft rounded half-up gives ``eru``.
        """
        return {
            "eru": "0" if self.exempt else format_fixed(self.eru, self.settings.eru_places),
            "composite_cn": _optional_fixed(self.composite_cn, CN_PLACES),
            "runoff_in": _optional_fixed(self.runoff_in, RUNOFF_IN_PLACES),
            "runoff_cuft": format_fixed(self.runoff_cuft, RUNOFF_CUFT_PLACES),
            "standard_runoff_cuft": format_fixed(self.standard_runoff_cuft, RUNOFF_CUFT_PLACES),
            "counted_area_sqft": format_plain(self.counted_area_sqft),
            "exempt": self.exempt,
        }

    def derivation(self) -> dict[str, Any]:
        """Inputs, settings and intermediate figures for a bill line's ``details`` (STYLE.md 9).

        Decimals are strings; unrounded figures are shown at 6 decimals (display only).
        """
        s = self.settings
        standard = s.standard
        details: dict[str, Any] = self.to_contract_dict()
        details.update(
            {
                "rule_ids": list(self.rule_ids),
                "use": self.parcel.use,
                "area_sqft": format_plain(self.parcel.area_sqft),
                "impervious_sqft": format_plain(self.parcel.impervious_sqft),
                "woods_sqft": format_plain(self.parcel.woods_sqft),
                "excluded_sqft": format_plain(self.parcel.excluded_sqft),
                "impervious_counted_sqft": format_plain(self.impervious_counted_sqft),
                "eru_unrounded": format_fixed(self.eru_unrounded, UNROUNDED_PLACES),
                "runoff_cuft_unrounded": format_fixed(self.runoff_cuft, UNROUNDED_PLACES),
                "standard_runoff_cuft_unrounded": format_fixed(self.standard_runoff_cuft, UNROUNDED_PLACES),
                "standard_area_sqft": format_plain(s.standard_area_sqft),
                "standard_impervious_fraction": format_plain(s.standard_impervious_fraction),
                "standard_composite_cn": _optional_fixed(standard.composite_cn, CN_PLACES),
                "standard_runoff_in": _optional_fixed(standard.runoff_in, RUNOFF_IN_PLACES),
                "impervious_cn": format_plain(s.impervious_cn),
                "pervious_cn": format_plain(s.pervious_cn),
                "woods_cn": format_plain(s.woods_cn),
                "design_storm_in": str(s.design_storm_in),
                "residential_allowance_sqft": format_plain(s.residential_allowance_sqft),
                "eru_places": s.eru_places,
            }
        )
        return details


def determine_eru(parcel: Parcel, settings: StormwaterSettings) -> EruDetermination:
    """ERUs of a parcel (PP-CWU-ERU): its 2-inch-storm runoff volume / the standard parcel's.

    Exempt uses get 0 (PP-CWU-EXEMPT). Otherwise the counted area is the parcel less
    excluded area (PP-CWU-CN), impervious area per PP-CWU-IMPERV-RES / -NONRES, composite
    CN per PP-CWU-CN, depth and volume per PP-CWU-TR55; the ratio is rounded half-up to
    ``settings.eru_places`` once, at the end.
    """
    standard = settings.standard
    if parcel.exempt:
        return EruDetermination(
            parcel=parcel,
            settings=settings,
            exempt=True,
            eru=ZERO,
            eru_unrounded=ZERO,
            composite_cn=None,
            runoff_in=None,
            runoff_cuft=ZERO,
            standard_runoff_cuft=standard.runoff_cuft,
            counted_area_sqft=ZERO,
            impervious_counted_sqft=ZERO,
        )
    counted = parcel.counted_area_sqft
    impervious = counted_impervious_sqft(parcel, settings)
    hydrology = _hydrology(counted, impervious, parcel.woods_sqft, settings)
    if hydrology.runoff_cuft == 0:
        ratio = ZERO
    else:
        ratio = HYDROLOGY.divide(hydrology.runoff_cuft, standard.runoff_cuft)
    return EruDetermination(
        parcel=parcel,
        settings=settings,
        exempt=False,
        eru=round_half_up(ratio, settings.eru_places),
        eru_unrounded=ratio,
        composite_cn=hydrology.composite_cn,
        runoff_in=hydrology.runoff_in,
        runoff_cuft=hydrology.runoff_cuft,
        standard_runoff_cuft=standard.runoff_cuft,
        counted_area_sqft=counted,
        impervious_counted_sqft=impervious,
    )


PLEASANT_PRAIRIE_DEFAULTS = StormwaterSettings.tariff_defaults()
"""TARIFFS.md defaults (version 2023-01-01), for tests and demos; billing builds its own."""
