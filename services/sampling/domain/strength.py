"""Wastewater strength: lab results, limits, exceedances and a user's strength category.

Pure domain code: no I/O, no clock (``as_of`` is always an argument), concentrations are
``Decimal`` mg/l. Rules implemented here (see ``spec/RULES.md``):

- PP-SEW-CAT-A / PP-SEW-CAT-B / PP-SEW-CAT-B-EXIT (Pleasant Prairie, ``A``/``B``)
- GR-NORMAL / GR-HIGH / GR-REASSIGN (Grafton, ``normal``/``high``)
- SU-NORMAL / SU-SURCHARGE with the GR-REASSIGN reading (Sullivan, ``normal``/``above-normal``)

Choices shared by every tenant:

- A result *exceeds* when any measured parameter is strictly above its limit; a value at
  the limit is compliant ("no greater than" in all three ordinances). A parameter the
  tenant sets no limit for (e.g. TKN at Pleasant Prairie) never makes a result exceed.
- Results dated after ``as_of`` are ignored; the rest are applied in date order whatever
  their input order.
- Several results on the same date are one day's outcome: the day exceeds when any of them
  exceeds. (A resample under PP-SEW-RESAMPLE is resolved upstream by choosing or averaging;
  pass only the finalised result.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from types import MappingProxyType

from common.dates import add_months
from sampling.domain.errors import InvalidInput, UnknownTenant


class Parameter(StrEnum):
    """A measured pollutant; the value is the JSON field name. Concentrations are mg/l."""

    BOD = "bod"
    TSS = "tss"
    PHOSPHORUS = "phosphorus"
    TKN = "tkn"
    FOG = "fog"


@dataclass(frozen=True)
class LabResult:
    """One finalised lab result: the sample date and the concentrations measured (mg/l).

    A parameter that was not analysed is ``None``. At least one parameter must be present:
    an empty result proves nothing about compliance.
    """

    sampled_on: date
    bod: Decimal | None = None
    tss: Decimal | None = None
    phosphorus: Decimal | None = None
    tkn: Decimal | None = None
    fog: Decimal | None = None

    def __post_init__(self) -> None:
        if isinstance(self.sampled_on, datetime) or not isinstance(self.sampled_on, date):
            raise InvalidInput("sampled_on", f"{self.sampled_on!r} is not a date")
        present = False
        for parameter in Parameter:
            value = getattr(self, parameter.value)
            if value is None:
                continue
            present = True
            if not isinstance(value, Decimal) or not value.is_finite():
                raise InvalidInput(parameter.value, f"{value!r} is not a finite Decimal concentration")
            if value < 0:
                raise InvalidInput(parameter.value, f"concentration {value} mg/l must not be negative")
        if not present:
            raise InvalidInput("results", "a lab result needs at least one concentration")

    def concentration(self, parameter: Parameter) -> Decimal | None:
        """Concentration of ``parameter`` in mg/l, or None when it was not analysed."""
        value: Decimal | None = getattr(self, parameter.value)
        return value

    def concentrations(self) -> dict[Parameter, Decimal]:
        """The measured concentrations only, in Parameter order."""
        return {p: v for p in Parameter if (v := self.concentration(p)) is not None}

    def to_contract_dict(self) -> dict[str, str]:
        """``{"sampled_on", <parameter>: "<mg/l>"}``, measured parameters only, plain decimals."""
        out = {"sampled_on": self.sampled_on.isoformat()}
        out.update({p.value: format(v, "f") for p, v in self.concentrations().items()})
        return out


@dataclass(frozen=True)
class StrengthLimits:
    """Upper limits (mg/l) of normal strength; a value strictly above its limit exceeds.

    ``rule_id`` is the rule that defines the limits (e.g. ``PP-SEW-CAT-A``), carried into
    derivations. The tariff layer builds these from tariff files with :meth:`from_mapping`.
    """

    limits_mg_l: Mapping[Parameter, Decimal]
    rule_id: str = ""

    def __post_init__(self) -> None:
        checked: dict[Parameter, Decimal] = {}
        for key, value in self.limits_mg_l.items():
            parameter = _parameter(key, f"limits.{key}")
            if not isinstance(value, Decimal) or not value.is_finite() or value < 0:
                raise InvalidInput(f"limits.{parameter.value}", f"{value!r} is not a non-negative Decimal")
            checked[parameter] = value
        object.__setattr__(self, "limits_mg_l", MappingProxyType(checked))

    def __hash__(self) -> int:
        return hash((tuple(sorted(self.limits_mg_l.items())), self.rule_id))

    @classmethod
    def from_mapping(cls, limits: Mapping[str, Decimal | int | str], rule_id: str = "") -> StrengthLimits:
        """Build limits from tariff data: parameter names to Decimal, int or decimal string."""
        converted: dict[Parameter, Decimal] = {}
        for key, value in limits.items():
            parameter = _parameter(key, f"limits.{key}")
            if isinstance(value, bool) or not isinstance(value, Decimal | int | str):
                raise InvalidInput(f"limits.{parameter.value}", f"{value!r} is not a decimal number")
            try:
                converted[parameter] = Decimal(value)
            except ArithmeticError:
                raise InvalidInput(
                    f"limits.{parameter.value}", f"{value!r} is not a decimal number"
                ) from None
        return cls(converted, rule_id)

    def limit(self, parameter: Parameter) -> Decimal | None:
        return self.limits_mg_l.get(parameter)


def _parameter(key: object, field_path: str) -> Parameter:
    if isinstance(key, str) and key in _PARAMETER_NAMES:
        return Parameter(key)
    raise InvalidInput(field_path, f"{key!r} is not a parameter ({', '.join(Parameter)})")


_PARAMETER_NAMES = frozenset(p.value for p in Parameter)


def _limits(rule_id: str, **values: str) -> StrengthLimits:
    return StrengthLimits({Parameter(k): Decimal(v) for k, v in values.items()}, rule_id)


PLEASANT_PRAIRIE_CATEGORY_A = _limits("PP-SEW-CAT-A", bod="180", tss="200", phosphorus="6", fog="100")
"""PP-SEW-CAT-A: BOD <= 180, TSS <= 200, phosphorus <= 6, oil & grease <= 100 mg/l."""

GRAFTON_NORMAL = _limits("GR-NORMAL", bod="200", tss="250", phosphorus="6", tkn="20")
"""GR-NORMAL: BOD <= 200, TSS <= 250, phosphorus <= 6, nitrogen (TKN) <= 20 mg/l."""

SULLIVAN_NORMAL = _limits("SU-NORMAL", bod="400", tss="250", phosphorus="12")
"""SU-NORMAL: BOD <= 400, TSS <= 250, phosphorus <= 12 mg/l."""


def exceedances(result: LabResult, limits: StrengthLimits) -> dict[Parameter, Decimal]:
    """Excess concentration (mg/l above the limit) of each parameter over its limit.

    Only the concentration above the limit counts (X-POUNDS); parameters at or below their
    limit, unmeasured ones and ones without a limit are left out.
    """
    excess: dict[Parameter, Decimal] = {}
    for parameter, value in result.concentrations().items():
        limit = limits.limit(parameter)
        if limit is not None and value > limit:
            excess[parameter] = value - limit
    return excess


def exceeds(result: LabResult, limits: StrengthLimits) -> bool:
    """True when any parameter is strictly above its limit (PP-SEW-CAT-B, GR-HIGH)."""
    return bool(exceedances(result, limits))


# --- tenants and categories ------------------------------------------------------------

PLEASANT_PRAIRIE_SEWER = "pleasant-prairie-sewer"
GRAFTON_SEWER = "grafton-sewer"
SULLIVAN_SEWER = "sullivan-sewer"
CLASSIFIED_TENANTS: tuple[str, ...] = (PLEASANT_PRAIRIE_SEWER, GRAFTON_SEWER, SULLIVAN_SEWER)

CATEGORY_A = "A"
CATEGORY_B = "B"
NORMAL = "normal"
HIGH = "high"
ABOVE_NORMAL = "above-normal"

PP_EXIT_MONTHS = 24
"""PP-SEW-CAT-B-EXIT: 24 consecutive months of compliant results."""


@dataclass(frozen=True)
class CategoryChange:
    """The category in force from ``from_date`` (one entry of a classification's history).

    ``rule_id`` and ``basis_sampled_on`` record the basis of the change (GR-REASSIGN,
    X-AUDIT): the result that triggered it or, for a PP-SEW-CAT-B-EXIT return to A, the
    first compliant sample that opened the 24 months.
    """

    from_date: date
    category: str
    rule_id: str
    basis_sampled_on: date

    def to_contract_dict(self) -> dict[str, str]:
        return {"from": self.from_date.isoformat(), "category": self.category}


@dataclass(frozen=True)
class ExitWindow:
    """A running PP-SEW-CAT-B-EXIT window: Category A from ``ends_on`` if all stay compliant."""

    started_on: date
    ends_on: date


@dataclass(frozen=True)
class Classification:
    """A user's strength category as of a date (CONTRACTS.md, ``sewerbill classify``).

    ``since`` is the date the current category took effect, None with no results.
    ``history`` lists only changes of category, oldest first. ``exit_window`` is set only
    for a Pleasant Prairie Category B user whose 24 compliant months are running.

    ``basis`` is the result whose concentrations billing uses for the surcharge while the
    user is in the above-normal category (PP-SEW-SURCHARGE, GR-HIGH, SU-SURCHARGE): the
    most recent exceeding result up to ``as_of``. Compliant results during Pleasant
    Prairie's 24 months do not lower it; a newer exceeding result replaces it. None in the
    normal category.

    ``ignored`` are the results dated after ``as_of``, in the order given: they take no
    part, and the output lists each in ``notes`` so no input is dropped unsaid. They are
    what was given, not what was found, so two classifications are equal on the rest.
    """

    tenant: str
    as_of: date
    category: str
    since: date | None
    history: tuple[CategoryChange, ...] = ()
    exit_window: ExitWindow | None = None
    basis: LabResult | None = None
    ignored: tuple[LabResult, ...] = field(default=(), compare=False)

    def to_contract_dict(self) -> dict[str, object]:
        """Exactly the CONTRACTS.md output: ISO dates, ``since`` and ``basis`` None (JSON null)
        if unset; ``notes`` the results ignored as dated after ``as_of`` (CONTRACTS.md), each
        as ``{"sampled_on", "text"}``, empty when there are none."""
        return {
            "category": self.category,
            "since": self.since.isoformat() if self.since is not None else None,
            "history": [change.to_contract_dict() for change in self.history],
            "basis": self.basis.to_contract_dict() if self.basis is not None else None,
            "notes": [
                {
                    "sampled_on": r.sampled_on.isoformat(),
                    "text": f"result sampled on {r.sampled_on.isoformat()} is dated after as_of "
                    f"{self.as_of.isoformat()}: ignored",
                }
                for r in self.ignored
            ],
        }


def after_as_of(results: Iterable[LabResult], as_of: date) -> tuple[LabResult, ...]:
    """The results dated after ``as_of`` (ignored by the classification), in the order given."""
    return tuple(r for r in results if r.sampled_on > as_of)


@dataclass
class _Timeline:
    """Accumulates category changes; only real changes are recorded."""

    category: str | None = None
    changes: list[CategoryChange] = field(default_factory=list)

    def change(self, on: date, category: str, rule_id: str, basis: date) -> None:
        if category != self.category:
            self.category = category
            self.changes.append(CategoryChange(on, category, rule_id, basis))

    @property
    def since(self) -> date | None:
        return self.changes[-1].from_date if self.changes else None


def _check_as_of(as_of: date) -> None:
    if isinstance(as_of, datetime) or not isinstance(as_of, date):
        raise InvalidInput("as_of", f"{as_of!r} is not a date")


def daily_outcomes(
    results: Iterable[LabResult], as_of: date, limits: StrengthLimits
) -> list[tuple[date, bool]]:
    """(date, exceeded) per sample date up to and including ``as_of``, in date order.

    Results after ``as_of`` are ignored; a day exceeds when any of its results exceeds.
    """
    _check_as_of(as_of)
    by_day: dict[date, bool] = {}
    for result in results:
        if result.sampled_on <= as_of:
            by_day[result.sampled_on] = by_day.get(result.sampled_on, False) or exceeds(result, limits)
    return sorted(by_day.items())


def latest_exceeding_result(
    results: Iterable[LabResult], as_of: date, limits: StrengthLimits
) -> LabResult | None:
    """The most recent exceeding result up to and including ``as_of``, or None.

    Several exceeding results on that day (one day's outcome, see the module docstring)
    are one basis: each parameter at the highest concentration any of them measured, so
    the basis does not depend on the order the results arrive in.
    """
    _check_as_of(as_of)
    latest_day: date | None = None
    of_day: list[LabResult] = []
    for result in results:
        if result.sampled_on > as_of or not exceeds(result, limits):
            continue
        if latest_day is None or result.sampled_on > latest_day:
            latest_day, of_day = result.sampled_on, [result]
        elif result.sampled_on == latest_day:
            of_day.append(result)
    if latest_day is None:
        return None
    if len(of_day) == 1:
        return of_day[0]
    merged: dict[str, Decimal] = {}
    for result in of_day:
        for parameter, value in result.concentrations().items():
            if parameter.value not in merged or value > merged[parameter.value]:
                merged[parameter.value] = value
    return LabResult(latest_day, **merged)


def classify_pleasant_prairie(
    results: Iterable[LabResult],
    as_of: date,
    limits: StrengthLimits = PLEASANT_PRAIRIE_CATEGORY_A,
    exit_months: int = PP_EXIT_MONTHS,
) -> Classification:
    """Category A or B as of ``as_of`` (PP-SEW-CAT-A, PP-SEW-CAT-B, PP-SEW-CAT-B-EXIT).

    - The first result over a threshold puts the user in B from that sample's date.
    - A B user returns to A on the ``exit_months`` anniversary (see :func:`add_months`) of
      the first compliant sample after the last exceeding one, provided every sample up to
      the anniversary was compliant; an exceeding result restarts the count, and a B user
      with no compliant sample since its last exceedance stays B. A sample dated on the
      anniversary itself still counts inside the window (an exceedance that day keeps the
      user in B rather than making it A and B on the same day).
    - The return to A is dated on the anniversary, which may fall after the last sample,
      but only if it is on or before ``as_of``.
    - ``since`` is the start of the current unbroken run: restarts of the 24 months do not
      move it. A user whose first result is compliant is A since that result's date.
    - ``basis`` (PP-SEW-SURCHARGE) is, while in B, the latest exceeding result: it stays
      through the compliant samples of the 24 months.
    """
    if isinstance(exit_months, bool) or not isinstance(exit_months, int) or exit_months < 1:
        raise InvalidInput("exit_months", f"{exit_months!r} must be a positive whole number of months")
    results = tuple(results)
    timeline = _Timeline()
    window_start: date | None = None

    def close_window_if_due(on_or_before: date, *, inclusive: bool) -> None:
        nonlocal window_start
        if timeline.category != CATEGORY_B or window_start is None:
            return
        anniversary = add_months(window_start, exit_months)
        if anniversary < on_or_before or (inclusive and anniversary == on_or_before):
            timeline.change(anniversary, CATEGORY_A, "PP-SEW-CAT-B-EXIT", window_start)
            window_start = None

    for day, exceeded in daily_outcomes(results, as_of, limits):
        # A window that ended before this sample made the user A first; one ending on this
        # very day completes only if this day's sample is compliant.
        close_window_if_due(day, inclusive=not exceeded)
        if exceeded:
            timeline.change(day, CATEGORY_B, "PP-SEW-CAT-B", day)
            window_start = None
        elif timeline.category is None:
            timeline.change(day, CATEGORY_A, "PP-SEW-CAT-A", day)
        elif timeline.category == CATEGORY_B and window_start is None:
            window_start = day
    close_window_if_due(as_of, inclusive=True)

    exit_window = None
    if timeline.category == CATEGORY_B and window_start is not None:
        exit_window = ExitWindow(window_start, add_months(window_start, exit_months))
    in_b = timeline.category == CATEGORY_B
    return Classification(
        tenant=PLEASANT_PRAIRIE_SEWER,
        as_of=as_of,
        category=timeline.category or CATEGORY_A,
        since=timeline.since,
        history=tuple(timeline.changes),
        exit_window=exit_window,
        basis=latest_exceeding_result(results, as_of, limits) if in_b else None,
        ignored=after_as_of(results, as_of),
    )


def _classify_by_latest_result(
    tenant: str,
    results: Iterable[LabResult],
    as_of: date,
    limits: StrengthLimits,
    categories: tuple[str, str],
    rule_ids: tuple[str, str],
) -> Classification:
    """GR-REASSIGN (interpretation): each result's day sets the category, no waiting period."""
    normal, high = categories
    normal_rule, high_rule = rule_ids
    results = tuple(results)
    timeline = _Timeline()
    for day, exceeded in daily_outcomes(results, as_of, limits):
        if exceeded:
            timeline.change(day, high, high_rule, day)
        else:
            timeline.change(day, normal, normal_rule, day)
    # High only while the latest day exceeds, so the basis is that day's result.
    in_high = timeline.category == high
    return Classification(
        tenant=tenant,
        as_of=as_of,
        category=timeline.category or normal,
        since=timeline.since,
        history=tuple(timeline.changes),
        basis=latest_exceeding_result(results, as_of, limits) if in_high else None,
        ignored=after_as_of(results, as_of),
    )


def classify_grafton(
    results: Iterable[LabResult], as_of: date, limits: StrengthLimits = GRAFTON_NORMAL
) -> Classification:
    """``normal`` or ``high`` as of ``as_of`` (GR-NORMAL, GR-HIGH, GR-REASSIGN).

    The latest result decides: ``high`` while it exceeds a limit, ``normal`` again after a
    compliant one. ``since`` is the date of the latest change of category.
    """
    return _classify_by_latest_result(
        GRAFTON_SEWER, results, as_of, limits, (NORMAL, HIGH), ("GR-REASSIGN", "GR-HIGH")
    )


def classify_sullivan(
    results: Iterable[LabResult], as_of: date, limits: StrengthLimits = SULLIVAN_NORMAL
) -> Classification:
    """``normal`` or ``above-normal`` as of ``as_of`` (SU-NORMAL, SU-SURCHARGE).

    Same reading as GR-REASSIGN ("the same holds for Sullivan"): the latest result decides.
    """
    return _classify_by_latest_result(
        SULLIVAN_SEWER, results, as_of, limits, (NORMAL, ABOVE_NORMAL), ("SU-NORMAL", "SU-SURCHARGE")
    )


DEFAULT_LIMITS: Mapping[str, StrengthLimits] = MappingProxyType(
    {
        PLEASANT_PRAIRIE_SEWER: PLEASANT_PRAIRIE_CATEGORY_A,
        GRAFTON_SEWER: GRAFTON_NORMAL,
        SULLIVAN_SEWER: SULLIVAN_NORMAL,
    }
)
"""Ordinance limits per tenant, used when the caller passes no tariff limits."""


def classify(
    tenant: str,
    results: Iterable[LabResult],
    as_of: date,
    limits: StrengthLimits | None = None,
) -> Classification:
    """Classify by the tenant's rule; ``limits`` default to the ordinance limits.

    Raises :class:`UnknownTenant` (field ``tenant``) for a tenant without strength
    categories, including ``pleasant-prairie-stormwater``.
    """
    if not isinstance(tenant, str) or tenant not in DEFAULT_LIMITS:
        raise UnknownTenant(tenant, CLASSIFIED_TENANTS)
    chosen = limits if limits is not None else DEFAULT_LIMITS[tenant]
    if tenant == PLEASANT_PRAIRIE_SEWER:
        return classify_pleasant_prairie(results, as_of, chosen)
    if tenant == GRAFTON_SEWER:
        return classify_grafton(results, as_of, chosen)
    return classify_sullivan(results, as_of, chosen)
