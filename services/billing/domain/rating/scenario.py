"""The ``sewerbill preview`` input (CONTRACTS.md) -> a ``RatingInput``, enforcing every input rule.

Pure: takes the document already parsed (``json.loads(text, parse_float=Decimal)``) and the
tariff book. Every violation is an ``InvalidScenario`` whose ``field`` is the dotted path
at fault, checked in a fixed order so the one message is deterministic:

1. unknown top-level fields; ``tenant``; ``period`` (dates, ``period.end`` after
   ``period.start``, ``period.start`` not before the first tariff, exactly one billing
   period: ``periods.add_months``);
2. fields that belong to another tenant (the CONTRACTS.md table), and ``account``,
   ``water_gallons`` or ``strength`` for the stormwater tenant;
3. the tenant's own fields.

Numbers are JSON numbers (Decimal through ``parse_float``) or decimal strings; a Python
float, a boolean, NaN/Infinity or a non-numeric string is refused (X-MONEY). ``null`` is
the same as an absent field, except in step 2 where the mere presence of a field that does
not apply is refused (never silently ignored).

Decisions beyond CONTRACTS.md (the spirit of "never silently ignored"):
``winter_average_gallons`` on a nonresidential PP account [``winter_average_gallons``] and
``samples_collected`` above 0 on a residential PP account [``samples_collected``] are
refused (PP-SEW-WINTER is residential; residential users are not sampled); Sullivan needs
``total_recs`` above 0 (it divides the debt); a residential account needs at least 1
dwelling unit. Strength parameters without a limit or rate at the tenant (e.g. ``tkn`` at
Pleasant Prairie, ``fog`` at Grafton) are accepted and produce no line.

Rules shared with the raters (one copy each, in the tenant's module, so the billing
service's inputs are held to them too): strength above normal on an unmetered Grafton
account [``strength``] (GR-HIGH); a nonresidential Sullivan account without
``account.rec_units`` (SU-REC, no default) and more ``bod900_violation_days`` than the
period has (SU-BOD900).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date
from decimal import Decimal
from typing import Any

from billing.domain.rating.errors import InvalidScenario
from billing.domain.rating.grafton import refuse_unmetered_high_strength
from billing.domain.rating.model import ZERO, Account, ParcelCharge, RatingInput
from billing.domain.rating.periods import add_months
from billing.domain.rating.sullivan import check_violation_days, require_rec_units
from common.tariffs import (
    METER_SIZES,
    PARAMETERS,
    GraftonTariff,
    PPSewerTariff,
    PPStormwaterTariff,
    TariffBook,
)
from common.values import NotADate, NotADecimal, to_date, to_decimal

PP_SEWER = "pleasant-prairie-sewer"
PP_STORM = "pleasant-prairie-stormwater"
GRAFTON = "grafton-sewer"
SULLIVAN = "sullivan-sewer"

TOP_FIELDS = (
    "tenant",
    "period",
    "account",
    "water_gallons",
    "winter_average_gallons",
    "estimated_gallons",
    "strength",
    "bod900_violation_days",
    "samples_collected",
    "total_recs",
    "parcel",
)
PERIOD_FIELDS = ("start", "end")
ACCOUNT_FIELDS = ("class", "zone", "meter_size", "dwelling_units", "rec_units")
PARCEL_FIELDS = ("use", "area_sqft", "impervious_sqft", "woods_sqft", "excluded_sqft", "credit_percent")
ACCOUNT_CLASSES = ("residential", "nonresidential")

TENANT_ONLY: tuple[tuple[str, str], ...] = (
    ("account.zone", PP_SEWER),
    ("winter_average_gallons", PP_SEWER),
    ("samples_collected", PP_SEWER),
    ("estimated_gallons", GRAFTON),
    ("account.rec_units", SULLIVAN),
    ("total_recs", SULLIVAN),
    ("bod900_violation_days", SULLIVAN),
    ("parcel", PP_STORM),
)
"""CONTRACTS.md: fields that belong to one tenant only; anywhere else they are an error."""
SEWER_ONLY = ("account", "water_gallons", "strength")


EruOf = Callable[[Mapping[str, Any], PPStormwaterTariff], tuple[Decimal, Mapping[str, Any]]]
"""The stormwater service's ERU determination: (rounded ERU, derivation) of a raw parcel."""


# --- primitives ------------------------------------------------------------------------


def _fields(raw: Mapping[str, Any], allowed: tuple[str, ...], prefix: str) -> None:
    for key in raw:
        if key not in allowed:
            where = f"{prefix}.{key}" if prefix else str(key)
            raise InvalidScenario(where, f"unknown field (expected one of {', '.join(allowed)})")


def _object(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidScenario(field, f"must be an object, got {_shown(value)}")
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def decimal_value(value: Any, field: str) -> Decimal:
    """A JSON number (int or Decimal) or a decimal string as a finite Decimal; never a float."""
    try:
        return to_decimal(value)
    except NotADecimal as exc:
        raise InvalidScenario(field, str(exc)) from None


def _non_negative(value: Any, field: str, what: str = "") -> Decimal:
    number = decimal_value(value, field)
    if number < 0:
        raise InvalidScenario(field, f"must not be negative, got {number}{what}")
    return number + ZERO  # -0 -> 0


def _count(value: Any, field: str) -> int:
    number = _non_negative(value, field)
    if number != number.to_integral_value():
        raise InvalidScenario(field, f"must be a whole number, got {number}")
    return int(number)


def _date(value: Any, field: str) -> date:
    try:
        return to_date(value)
    except NotADate as exc:
        raise InvalidScenario(field, str(exc)) from None


def _get(raw: Mapping[str, Any], key: str) -> Any:
    return raw.get(key)


def _required(raw: Mapping[str, Any], key: str, field: str, why: str = "") -> Any:
    value = raw.get(key)
    if value is None:
        raise InvalidScenario(field, f"is required{why}")
    return value


# --- the document ----------------------------------------------------------------------


def parse_scenario(raw: Any, book: TariffBook, eru_of: EruOf | None = None) -> RatingInput:
    """Validate a preview document against CONTRACTS.md and build the ``RatingInput``.

    ``eru_of`` determines a stormwater parcel's ERU through the stormwater service's contract
    (``sewerbill.cli.compose.eru_of`` for the staff command; injected so this domain never
    imports another service); it raises ``InvalidScenario`` for a bad parcel.
    """
    doc = _object(raw, "scenario")
    _fields(doc, TOP_FIELDS, "")
    tenant = _tenant(doc, book)
    start, end = _period(doc, tenant, book)
    _tenant_only_fields(doc, tenant)
    if tenant == PP_STORM:
        if eru_of is None:
            raise TypeError("parse_scenario needs eru_of to rate a stormwater parcel")
        return _stormwater(doc, tenant, start, end, book, eru_of)
    return _sewer(doc, tenant, start, end, book)


def _tenant(doc: Mapping[str, Any], book: TariffBook) -> str:
    tenant = _required(doc, "tenant", "tenant")
    if not isinstance(tenant, str) or tenant not in book.tenants:
        raise InvalidScenario(
            "tenant", f"{_shown(tenant)} is not a tenant (expected one of {', '.join(book.tenants)})"
        )
    return tenant


def _period(doc: Mapping[str, Any], tenant: str, book: TariffBook) -> tuple[date, date]:
    period = _object(_required(doc, "period", "period"), "period")
    _fields(period, PERIOD_FIELDS, "period")
    start = _date(_required(period, "start", "period.start"), "period.start")
    end = _date(_required(period, "end", "period.end"), "period.end")
    if end <= start:
        raise InvalidScenario(
            "period.end",
            f"{end.isoformat()} must be after period.start {start.isoformat()} (half-open [start, end))",
        )
    first = book.first_effective(tenant)
    if start < first:
        raise InvalidScenario(
            "period.start",
            f"{start.isoformat()} is before the first tariff version of {tenant} ({first.isoformat()})",
        )
    months = book.in_force(tenant, start).billing_period_months
    expected = add_months(start, months)
    if end != expected:
        length = "one month" if months == 1 else f"{months} months"
        raise InvalidScenario(
            "period",
            f"must be exactly one billing period of {tenant} ({length}): "
            f"{start.isoformat()} to {expected.isoformat()}, got end {end.isoformat()}",
        )
    return start, end


def _tenant_only_fields(doc: Mapping[str, Any], tenant: str) -> None:
    account = doc.get("account")
    for path, owner in TENANT_ONLY:
        if owner == tenant:
            continue
        if path.startswith("account."):
            present = isinstance(account, Mapping) and path.removeprefix("account.") in account
        else:
            present = path in doc
        if present:
            raise InvalidScenario(path, f"applies to tenant {owner} only, not {tenant}")
    if tenant == PP_STORM:
        for key in SEWER_ONLY:
            if key in doc:
                raise InvalidScenario(key, f"does not apply to tenant {tenant} (it takes parcel)")


# --- sewer tenants ---------------------------------------------------------------------


def _meter_sizes(tenant: str, versions: list[Any]) -> set[str]:
    """Meter sizes the tenant knows in the period's tariff versions."""
    if tenant == GRAFTON:
        return {m for t in versions if isinstance(t, GraftonTariff) for m in t.service_charge.value}
    if tenant == PP_SEWER:
        sizes: set[str] = set()
        for t in versions:
            if isinstance(t, PPSewerTariff):
                for table in t.service_charge.value.values():
                    sizes.update(table)
                sizes.update(t.meter_size_aliases)
        return sizes
    return set(METER_SIZES)


def _sewer(doc: Mapping[str, Any], tenant: str, start: date, end: date, book: TariffBook) -> RatingInput:
    versions = [span.tariff for span in book.split(tenant, start, end)]
    raw_account = _object(_required(doc, "account", "account", f" for tenant {tenant}"), "account")
    _fields(raw_account, ACCOUNT_FIELDS, "account")
    account_class = _required(raw_account, "class", "account.class")
    if account_class not in ACCOUNT_CLASSES:
        raise InvalidScenario(
            "account.class", f"{_shown(account_class)} is not one of {', '.join(ACCOUNT_CLASSES)}"
        )
    residential = account_class == "residential"
    dwellings = (
        1
        if raw_account.get("dwelling_units") is None
        else _count(raw_account["dwelling_units"], "account.dwelling_units")
    )
    if residential and dwellings < 1:
        raise InvalidScenario("account.dwelling_units", "a residential account has at least 1 dwelling unit")

    meter = raw_account.get("meter_size")
    if meter is not None:
        if not isinstance(meter, str) or meter not in _meter_sizes(tenant, versions):
            raise InvalidScenario(
                "account.meter_size", f"{_shown(meter)} is not a meter size of tenant {tenant}"
            )
    elif tenant != GRAFTON:
        raise InvalidScenario(
            "account.meter_size", f"is required: unmetered accounts exist only at {GRAFTON}, not {tenant}"
        )
    elif residential and dwellings != 1:
        raise InvalidScenario(
            "account.meter_size",
            f"is required: an unmetered residential account is single-family (1 dwelling unit), got {dwellings}",
        )

    zone: str | None = None
    if tenant == PP_SEWER:
        zone = _required(raw_account, "zone", "account.zone", f" for tenant {tenant}")
        zones = sorted({z for t in versions if isinstance(t, PPSewerTariff) for z in t.zones})
        if zone not in zones:
            raise InvalidScenario(
                "account.zone", f"{_shown(zone)} is not a rate zone of tenant {tenant} ({', '.join(zones)})"
            )
        limit = min(t.max_residential_units.value for t in versions if isinstance(t, PPSewerTariff))
        if residential and dwellings > limit:
            raise InvalidScenario(
                "account.dwelling_units",
                f"a residential account has fewer than {limit + 1} dwelling units (PP-SEW-CLASS-RES), got "
                f"{dwellings}: bill it as nonresidential (PP-SEW-CLASS-NONRES)",
            )
        if residential and "strength" in doc:
            raise InvalidScenario(
                "strength", "residential Pleasant Prairie accounts are not sampled: no strength"
            )

    rec_units: Decimal | None = None
    if raw_account.get("rec_units") is not None:
        rec_units = _non_negative(raw_account["rec_units"], "account.rec_units")

    water: Decimal | None = None
    estimated = ZERO
    if meter is not None:
        water = _non_negative(
            _required(doc, "water_gallons", "water_gallons", " for a metered account"), "water_gallons"
        )
        # An explicit 0 is the default and says nothing; any estimate on a metered account
        # would be billed nowhere, so it is refused rather than ignored.
        if doc.get("estimated_gallons") is not None and _non_negative(
            doc["estimated_gallons"], "estimated_gallons"
        ):
            raise InvalidScenario("estimated_gallons", "applies to unmetered accounts only (GR-UNMETERED)")
    else:
        if doc.get("water_gallons") is not None:
            raise InvalidScenario(
                "water_gallons", "is refused for an unmetered account (GR-UNMETERED bills estimated_gallons)"
            )
        if doc.get("estimated_gallons") is not None:
            estimated = _non_negative(doc["estimated_gallons"], "estimated_gallons")

    winter: Decimal | None = None
    if doc.get("winter_average_gallons") is not None:
        if not residential:
            raise InvalidScenario(
                "winter_average_gallons", "applies to residential accounts only (PP-SEW-WINTER)"
            )
        winter = _non_negative(doc["winter_average_gallons"], "winter_average_gallons")

    strength: dict[str, Decimal] = {}
    if doc.get("strength") is not None:
        raw_strength = _object(doc["strength"], "strength")
        _fields(raw_strength, PARAMETERS, "strength")
        for param in PARAMETERS:
            if raw_strength.get(param) is not None:
                strength[param] = _non_negative(raw_strength[param], f"strength.{param}", " mg/l")

    samples = 0
    if doc.get("samples_collected") is not None:
        samples = _count(doc["samples_collected"], "samples_collected")
        if residential and samples:
            raise InvalidScenario(
                "samples_collected", "residential Pleasant Prairie accounts are not sampled"
            )

    if tenant == GRAFTON and meter is None and strength:
        refuse_unmetered_high_strength(
            [
                {str(p): v for p, v in t.normal_limits.value.items()}
                for t in versions
                if isinstance(t, GraftonTariff)
            ],
            strength,
        )

    total_recs: Decimal | None = None
    bod900_days = 0
    if tenant == SULLIVAN:
        require_rec_units(residential, rec_units)
        total_recs = _non_negative(
            _required(doc, "total_recs", "total_recs", f" for tenant {tenant}"), "total_recs"
        )
        if total_recs == 0:
            raise InvalidScenario("total_recs", "must be above 0 (the debt retirement is divided by it)")
        if doc.get("bod900_violation_days") is not None:
            bod900_days = _count(doc["bod900_violation_days"], "bod900_violation_days")
            check_violation_days(bod900_days, (end - start).days)

    return RatingInput(
        tenant=tenant,
        period_start=start,
        period_end=end,
        account=Account(account_class, zone, meter, dwellings, rec_units),
        water_gallons=water,
        winter_average_gallons=winter,
        estimated_gallons=estimated,
        strength=strength,
        bod900_violation_days=bod900_days,
        samples_collected=samples,
        total_recs=total_recs,
    )


# --- stormwater ------------------------------------------------------------------------


def _stormwater(
    doc: Mapping[str, Any], tenant: str, start: date, end: date, book: TariffBook, eru_of: EruOf
) -> RatingInput:
    raw_parcel = parcel_document(_required(doc, "parcel", "parcel", f" for tenant {tenant}"))
    versions = [span.tariff for span in book.split(tenant, start, end)]
    tariff = versions[0]
    assert isinstance(tariff, PPStormwaterTariff)
    # The stormwater domain validates use and areas (parcel.use, parcel.area_sqft, ...).
    eru, details = eru_of(raw_parcel, tariff)
    use = raw_parcel["use"]
    cap = min(t.credit.cap_percent.value for t in versions if isinstance(t, PPStormwaterTariff))
    credit = parse_credit_percent(raw_parcel.get("credit_percent"), use, cap)
    return RatingInput(
        tenant=tenant,
        period_start=start,
        period_end=end,
        parcel=ParcelCharge(use=use, eru=eru, credit_percent=credit, eru_details=details),
    )


def parcel_document(value: Any) -> Mapping[str, Any]:
    """The CONTRACTS.md ``parcel`` object: known fields only, use and areas present.

    Shared by ``preview`` and ``eru``; the stormwater domain then validates use and areas.
    """
    raw_parcel = _object(value, "parcel")
    _fields(raw_parcel, PARCEL_FIELDS, "parcel")
    for key in ("use", "area_sqft", "impervious_sqft"):
        _required(raw_parcel, key, f"parcel.{key}")
    return raw_parcel


def parse_credit_percent(value: Any, use: str, cap: Decimal) -> Decimal:
    """PP-CWU-CREDIT: an approved percent, nonresidential parcels only, at most the cap (30)."""
    if value is None:
        return ZERO
    percent = _non_negative(value, "parcel.credit_percent")
    if percent > 0 and use != "nonresidential":
        raise InvalidScenario(
            "parcel.credit_percent", f"{percent}: a credit applies to nonresidential parcels only, not {use}"
        )
    if percent > cap:
        raise InvalidScenario(
            "parcel.credit_percent",
            f"{percent} is above the tariff's cap of {cap}% of the ERU charge (PP-CWU-CREDIT)",
        )
    return percent
