"""The board's rate study (issue 35): the rates that recover next year's budget of each fund
from the last twelve months' billing determinants. Pure: Decimal money, no I/O, no clock.

Inputs are a ``Budget`` (the annual revenue requirement of each fund) and the test year's
``Usage`` records (one account's ``RatingInput`` for one billing period, with the account's
user class). Rates are computed from the determinants and rounded half-up as the tariff
publishes them (the number of places of the version in force); the proposed version is the
tariff in force with those rates, marked ``status: proposed``.

Rate models (RULES.md):

- pleasant-prairie-stormwater (PP-CWU-ERU): ERU rate = (budget - base-charge revenue) /
  billable ERU-months; billable ERUs are net of approved credits (PP-CWU-CREDIT) and leave
  out exempt parcels (PP-CWU-EXEMPT). The base charge is kept unless the budget sets it.
- pleasant-prairie-sewer (PP-SEW-SVC, PP-SEW-VOL): each district (rate zone PP, LM) has its
  own budget; its meter charges (keeping their ratios to the 5/8" charge) and volume rate
  recover it less its surcharge revenue (PP-SEW-SURCHARGE, rates kept), the meter charges
  keeping the test year's share. Billed kgal are after PP-SEW-WINTER.
- grafton-sewer (GR-SVC, GR-VOL, GR-UNMETERED, GR-FUNDS): the revenue requirement of the
  service and volume charges is the funds' budgets less high-strength revenue (GR-HIGH, its
  rates kept) and other revenue. A share of it (the budget's ``service_charge_share``,
  default the test year's own share) is recovered by the meter charges, which keep their
  ratios to the 5/8" charge (meter equivalents); the rest by the volume rate over all
  kilogallons (an unmetered account counts as a 5/8" meter and its included 18 kgal plus
  any estimated excess). The flat unmetered charge stays the 5/8" charge + 18 kgal x the
  volume rate. The replacement fund share is the replacement budget / that requirement.
- sullivan-sewer (SU-USE, SU-SURCHARGE, SU-REC, SU-FUNDS; Wis. Adm. Code NR 128.13): the
  operation, maintenance and replacement (OM&R) budget is allocated to flow and to each
  loading (the budget's ``cost_allocation``); each loading's cost per pound is its cost over
  the system's pounds, where every kilogallon carries normal-strength pounds (SU-NORMAL,
  what SU-USE bills) and a sampled user adds its pounds over normal. The use charge per
  kgal is the flow cost per kgal plus the normal-strength pounds of a kgal at each cost per
  pound; the surcharge per pound of excess is the cost per pound. So each user class pays in
  proportion to its flow and loadings. SU-REC recovers the debt-retirement budget exactly
  (annual debt / total RECs per REC). The replacement share is the replacement budget /
  the use-charge revenue. Penalties (SU-BOD900) are not rate revenue and recover nothing.

Where per-fund budgets are given, the fund shares are outputs of the study, not inputs.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from billing.domain.rating import RatingEngine, RatingInput
from common.errors import FieldError
from common.tariffs import (
    GraftonTariff,
    PPSewerTariff,
    PPStormwaterTariff,
    SullivanTariff,
    Tariff,
    TariffBook,
)

ZERO = Decimal(0)
ONE = Decimal(1)
HUNDRED = Decimal(100)
KGAL_PER_MGAL = Decimal(1000)
STORMWATER = "pleasant-prairie-stormwater"
PP_SEWER = "pleasant-prairie-sewer"
GRAFTON = "grafton-sewer"
SULLIVAN = "sullivan-sewer"
STUDIED = (STORMWATER, PP_SEWER, GRAFTON, SULLIVAN)
# Pleasant Prairie sewer's budgets are its two districts' (rate zones PP and LM): each
# district's rates recover its own budget.
FUNDS = {
    STORMWATER: ("om",),
    PP_SEWER: ("PP", "LM"),
    GRAFTON: ("replacement", "om"),
    SULLIVAN: ("replacement", "om", "debt_retirement"),
}
# Charges that are not rates recover no budget (their revenue is reported apart): a
# penalty (SU-BOD900) and a cost passed through (PP-SEW-SAMPLE-COST).
PENALTY_RULES = frozenset({"SU-BOD900", "PP-SEW-SAMPLE-COST"})
LOADINGS = ("bod", "tss", "phosphorus")
OMR_RULES = frozenset({"SU-USE", "SU-SURCHARGE"})  # Sullivan's OM&R charges (NR 128.13)


class RateStudyError(FieldError):
    """The budget or the determinants cannot give rates; ``field`` names the input at fault."""


@dataclass(frozen=True)
class Usage:
    """One account's billing determinants for one period of the test year."""

    account_id: str
    user_class: str
    rating: RatingInput


@dataclass(frozen=True)
class Budget:
    """Next year's revenue requirement of each fund (annual, dollars)."""

    tenant: str
    effective_from: date
    funds: Mapping[str, Decimal]
    other_revenue: Mapping[str, Decimal] = field(default_factory=dict)
    example: bool = True
    adopted_by: str = "proposed by the board's rate study"
    service_charge_share: Decimal | None = None  # grafton-sewer
    cost_allocation: Mapping[str, Decimal] = field(default_factory=dict)  # sullivan-sewer
    treatment_portion: Decimal | None = None  # sullivan-sewer (SU-ANNUAL-NOTICE)
    base_charge: Decimal | None = None  # pleasant-prairie-stormwater

    def requirement(self, fund: str) -> Decimal:
        """What the fund's rates must recover: its budget less its other revenue."""
        return self.funds.get(fund, ZERO) - self.other_revenue.get(fund, ZERO)


# --- budget parsing (a mapping in: the CLI reads the YAML) -------------------------------------


def _dec(raw: Any, where: str) -> Decimal:
    if isinstance(raw, bool) or not isinstance(raw, str | int | Decimal):
        raise RateStudyError(where, f"must be a decimal string, got {type(raw).__name__} {raw!r}")
    try:
        value = Decimal(str(raw).replace(",", ""))
    except ArithmeticError:
        raise RateStudyError(where, f"not a decimal number: {raw!r}") from None
    if not value.is_finite() or value < 0:
        raise RateStudyError(where, f"must be a finite amount of 0 or more, got {raw!r}")
    return value


def _decimals(raw: Any, where: str) -> dict[str, Decimal]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise RateStudyError(where, "must be a mapping")
    return {str(k): _dec(v, f"{where}.{k}") for k, v in raw.items()}


BUDGET_FIELDS = frozenset(
    {
        "tenant",
        "effective_from",
        "funds",
        "other_revenue",
        "example",
        "adopted_by",
        "service_charge_share",
        "cost_allocation",
        "treatment_portion",
        "base_charge",
        "note",
    }
)


def parse_budget(raw: Any) -> Budget:
    """A ``Budget`` from its document (BUDGET.yaml); errors name the field."""
    if not isinstance(raw, Mapping):
        raise RateStudyError("budget", "must be a mapping")
    for key in raw:
        if key not in BUDGET_FIELDS:
            raise RateStudyError(str(key), "unknown field")
    tenant = raw.get("tenant")
    if tenant not in STUDIED:
        raise RateStudyError("tenant", f"{tenant!r} has no rate study (one of {', '.join(STUDIED)})")
    start = raw.get("effective_from")
    if isinstance(start, str):
        try:
            start = date.fromisoformat(start)
        except ValueError:
            raise RateStudyError("effective_from", f"not a date: {start!r}") from None
    if not isinstance(start, date):
        raise RateStudyError("effective_from", "is required (the proposed version's effective date)")
    funds = _decimals(raw.get("funds"), "funds")
    for fund in FUNDS[tenant]:
        if fund not in funds:
            raise RateStudyError(f"funds.{fund}", f"is required for {tenant}")
    for fund in funds:
        if fund not in FUNDS[tenant]:
            raise RateStudyError(f"funds.{fund}", f"is not a fund of {tenant} ({', '.join(FUNDS[tenant])})")
    other = _decimals(raw.get("other_revenue"), "other_revenue")
    allocation = _decimals(raw.get("cost_allocation"), "cost_allocation")
    if tenant == SULLIVAN:
        if "flow" not in allocation:
            raise RateStudyError(
                "cost_allocation.flow", "is required: NR 128.13 allocates OM&R to flow and loadings"
            )
        for key in allocation:
            if key != "flow" and key not in LOADINGS:
                raise RateStudyError(
                    f"cost_allocation.{key}", f"must be flow or one of {', '.join(LOADINGS)}"
                )
        if sum(allocation.values()) != ONE:
            raise RateStudyError("cost_allocation", "shares must add up to 1")
    share = raw.get("service_charge_share")
    example = raw.get("example", True)
    if not isinstance(example, bool):
        raise RateStudyError("example", "must be true or false")
    return Budget(
        tenant=tenant,
        effective_from=start,
        funds=funds,
        other_revenue=other,
        example=example,
        adopted_by=str(raw.get("adopted_by") or "proposed by the board's rate study"),
        service_charge_share=None if share is None else _dec(share, "service_charge_share"),
        cost_allocation=allocation,
        treatment_portion=(
            None
            if raw.get("treatment_portion") is None
            else _dec(raw["treatment_portion"], "treatment_portion")
        ),
        base_charge=None if raw.get("base_charge") is None else _dec(raw["base_charge"], "base_charge"),
    )


# --- rounding as the tariff publishes ----------------------------------------------------------


def places_of(published: Decimal) -> int:
    """Decimal places of a published figure ("6.00" -> 2, "0.12" -> 2, "8.345" -> 3)."""
    exponent = published.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def publish(value: Decimal, like: Decimal) -> Decimal:
    """``value`` rounded half-up to the places ``like`` is published with."""
    return value.quantize(ONE.scaleb(-places_of(like)), ROUND_HALF_UP)


def unit_of(like: Decimal) -> Decimal:
    """One unit of the published precision of ``like`` (0.01 for "6.00")."""
    return ONE.scaleb(-places_of(like))


def _divide(numerator: Decimal, denominator: Decimal, where: str) -> Decimal:
    if denominator <= 0:
        raise RateStudyError(where, "the test year has none: no rate can recover the budget from it")
    return numerator / denominator


# --- the study ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RateChange:
    """One published figure of the proposed version: where it lives, before and after."""

    setting: str
    before: Decimal
    after: Decimal
    unit: Decimal  # one unit of its published precision


@dataclass(frozen=True)
class Study:
    """The study's rates, the determinants behind them, and the tolerance per fund: what one
    unit of each rate's published precision moves the fund's annual revenue."""

    tenant: str
    effective_from: date
    rates: tuple[RateChange, ...]
    determinants: Mapping[str, Any]
    tolerance: Mapping[str, Decimal]
    updates: Mapping[str, Any]  # setting -> new value (for ``proposed_tariff``)


def _years(usages: Sequence[Usage], tariff: Tariff) -> Decimal:
    """The test year's length in years: its months, first period's start to last period's
    end, over 12 (twelve months -> 1; budgets are annual). Whole periods only."""
    start = min(u.rating.period_start for u in usages)
    end = max(u.rating.period_end for u in usages)
    months = (end.year - start.year) * 12 + end.month - start.month
    if months % tariff.billing_period_months:
        raise RateStudyError(
            "determinants", f"{start} to {end} is not whole billing periods of {tariff.tenant}"
        )
    return _divide(Decimal(months), Decimal(12), "determinants")


def study(budget: Budget, tariff: Tariff, usages: Sequence[Usage]) -> Study:
    """The rates of ``budget`` on the test year ``usages``, from the version in force ``tariff``."""
    if not usages:
        raise RateStudyError("determinants", f"no billing determinants for {budget.tenant}")
    if isinstance(tariff, PPStormwaterTariff):
        return _stormwater(budget, tariff, usages)
    if isinstance(tariff, GraftonTariff):
        return _grafton(budget, tariff, usages)
    if isinstance(tariff, PPSewerTariff):
        return _pp_sewer(budget, tariff, usages)
    if isinstance(tariff, SullivanTariff):
        return _sullivan(budget, tariff, usages)
    raise RateStudyError("tenant", f"{tariff.tenant} has no rate study")


def _stormwater(budget: Budget, tariff: PPStormwaterTariff, usages: Sequence[Usage]) -> Study:
    """PP-CWU-ERU: (budget - base-charge revenue) / billable ERUs."""
    years = _years(usages, tariff)
    cap = tariff.credit.cap_percent.value
    base_count = ZERO
    billable = ZERO
    gross = ZERO
    for u in usages:
        parcel = u.rating.parcel
        if parcel is None:
            raise RateStudyError("parcel", f"{u.account_id}: a stormwater usage needs its parcel")
        parts = parcel.parts or ()
        pieces = (
            [(Decimal(p.days), p.exempt, p.eru, p.credit_percent) for p in parts]
            if parts
            else [(ONE, parcel.exempt, parcel.eru, parcel.credit_percent)]
        )
        days = sum((p[0] for p in pieces), ZERO)
        for n, exempt, eru, credit in pieces:
            if exempt:
                continue
            weight = n / days
            base_count += weight
            gross += eru * weight
            billable += eru * weight * (ONE - min(credit, cap) / HUNDRED)
    base = budget.base_charge if budget.base_charge is not None else tariff.base_charge.value
    base = publish(base, tariff.base_charge.value)
    requirement = budget.requirement("om") * years
    raw = _divide(requirement - base * base_count, billable, "determinants.billable_eru_months")
    rate = publish(raw, tariff.eru_rate.value)
    unit = unit_of(tariff.eru_rate.value)
    return Study(
        tenant=budget.tenant,
        effective_from=budget.effective_from,
        rates=(
            RateChange("base_charge", tariff.base_charge.value, base, unit_of(tariff.base_charge.value)),
            RateChange("eru_rate", tariff.eru_rate.value, rate, unit),
        ),
        determinants={
            "parcel_months_charged": base_count,
            "eru_months": gross,
            "billable_eru_months": billable,
            "base_charge_revenue": base * base_count,
            "eru_rate_unrounded": raw,
        },
        tolerance={"om": unit * billable / years},
        updates={"base_charge": base, "eru_rate": rate},
    )


def _grafton(budget: Budget, tariff: GraftonTariff, usages: Sequence[Usage]) -> Study:
    """GR-SVC, GR-VOL, GR-UNMETERED with the GR-FUNDS share as an output."""
    years = _years(usages, tariff)
    service = {str(m): v for m, v in tariff.service_charge.value.items()}
    small = service["5/8"]
    meters: dict[str, Decimal] = defaultdict(Decimal)
    unmetered = ZERO
    metered_kgal = ZERO
    unmetered_excess_kgal = ZERO
    included = tariff.unmetered_included_kgal.value
    for u in usages:
        account = u.rating.account
        if account is None:
            raise RateStudyError("account", f"{u.account_id}: a Grafton usage needs its account")
        if account.meter_size is None:
            unmetered += 1
            unmetered_excess_kgal += max(ZERO, u.rating.estimated_gallons.scaleb(-3) - included)
        else:
            if account.meter_size not in service:
                raise RateStudyError(
                    "account.meter_size", f"{u.account_id}: {account.meter_size} is not published"
                )
            meters[account.meter_size] += 1
            metered_kgal += (u.rating.water_gallons or ZERO).scaleb(-3)
    high = _rule_revenue(usages, pro_forma_book(tariff, usages), {"GR-HIGH"})
    requirement = (budget.requirement("replacement") + budget.requirement("om")) * years - high
    ratios = {m: v / small for m, v in service.items()}
    equivalents = sum((n * ratios[m] for m, n in meters.items()), ZERO) + unmetered
    kgal = metered_kgal + unmetered * included + unmetered_excess_kgal
    current_service = sum((n * service[m] for m, n in meters.items()), ZERO) + unmetered * small
    current_total = current_service + kgal * tariff.volume_rate_per_kgal.value
    share = (
        budget.service_charge_share
        if budget.service_charge_share is not None
        else _divide(current_service, current_total, "determinants.kgal")
    )
    if share >= ONE:
        raise RateStudyError("service_charge_share", "must be below 1: the volume rate recovers the rest")
    small_new = _divide(requirement * share, equivalents, "determinants.meters")
    new_service = {m: publish(small_new * ratios[m], v) for m, v in service.items()}
    service_revenue = (
        sum((n * new_service[m] for m, n in meters.items()), ZERO) + unmetered * new_service["5/8"]
    )
    volume_raw = _divide(requirement - service_revenue, kgal, "determinants.kgal")
    volume = publish(volume_raw, tariff.volume_rate_per_kgal.value)
    flat = publish(new_service["5/8"] + included * volume, tariff.unmetered_flat_charge.value)
    recovered = service_revenue + kgal * volume
    share_raw = _divide(budget.requirement("replacement") * years, recovered, "funds")
    replacement_share = publish(share_raw, tariff.replacement_fund_share.value)
    svc_unit = unit_of(small)
    moved = (
        unit_of(tariff.volume_rate_per_kgal.value) * kgal
        + svc_unit * (sum(meters.values(), ZERO) + unmetered)
        + unit_of(tariff.unmetered_flat_charge.value) * unmetered
    )
    share_unit = unit_of(tariff.replacement_fund_share.value) * recovered
    rates = [RateChange(f"service_charge.{m}", service[m], new_service[m], svc_unit) for m in service]
    rates += [
        RateChange("volume_rate_per_kgal", tariff.volume_rate_per_kgal.value, volume, unit_of(volume)),
        RateChange("unmetered_flat_charge", tariff.unmetered_flat_charge.value, flat, unit_of(flat)),
        RateChange(
            "replacement_fund_share",
            tariff.replacement_fund_share.value,
            replacement_share,
            unit_of(tariff.replacement_fund_share.value),
        ),
    ]
    return Study(
        tenant=budget.tenant,
        effective_from=budget.effective_from,
        rates=tuple(rates),
        determinants={
            "meter_quarters": dict(sorted(meters.items())),
            "unmetered_quarters": unmetered,
            "meter_equivalent_quarters": equivalents,
            "metered_kgal": metered_kgal,
            "unmetered_kgal": unmetered * included + unmetered_excess_kgal,
            "high_strength_revenue": high,
            "service_and_volume_requirement": requirement,
            "service_charge_share": share,
            "volume_rate_unrounded": volume_raw,
            "replacement_fund_share_unrounded": share_raw,
        },
        tolerance={
            "replacement": (replacement_share * moved + share_unit) / years,
            "om": ((ONE - replacement_share) * moved + share_unit) / years,
        },
        updates={
            "service_charge": new_service,
            "volume_rate_per_kgal": volume,
            "unmetered_flat_charge": flat,
            "replacement_fund_share": replacement_share,
        },
    )


def _pp_sewer(budget: Budget, tariff: PPSewerTariff, usages: Sequence[Usage]) -> Study:
    """PP-SEW-SVC and PP-SEW-VOL of each district (rate zone) from its own budget.

    The billed kilogallons are those the version in force bills (PP-SEW-WINTER's lesser of
    metered use and the winter average included): the test year is rated pro forma on it and
    its PP-SEW-VOL quantities summed. Surcharge revenue (PP-SEW-SURCHARGE, its rates kept)
    counts towards the district's budget; sampling costs are passed through, not rates.
    Meter charges keep their ratios to the zone's 5/8" charge; a size a zone does not
    publish stays unpublished. The share of the meter charges is the test year's own."""
    years = _years(usages, tariff)
    engine = RatingEngine(pro_forma_book(tariff, usages))
    meters: dict[str, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    kgal: dict[str, Decimal] = defaultdict(Decimal)
    surcharge: dict[str, Decimal] = defaultdict(Decimal)
    for u in usages:
        account = u.rating.account
        if account is None or account.zone is None or account.meter_size is None:
            raise RateStudyError("account", f"{u.account_id}: a Pleasant Prairie usage needs zone and meter")
        zone = account.zone
        for bl in engine.rate(u.rating).lines:
            if bl.rule_id == "PP-SEW-SVC":
                meters[zone][account.meter_size] += bl.quantity
            elif bl.rule_id == "PP-SEW-VOL":
                kgal[zone] += bl.quantity
            elif bl.rule_id == "PP-SEW-SURCHARGE":
                surcharge[zone] += bl.amount
    service_now = {z: dict(table) for z, table in tariff.service_charge.value.items()}
    volume_now = dict(tariff.volume_rate_per_kgal.value)
    new_service: dict[str, dict[str, Decimal]] = {}
    new_volume: dict[str, Decimal] = {}
    rates: list[RateChange] = []
    tolerance: dict[str, Decimal] = {}
    for zone in FUNDS[PP_SEWER]:
        table = {str(m): v for m, v in service_now.get(zone, {}).items()}
        if zone not in volume_now or "5/8" not in table:
            raise RateStudyError(f"funds.{zone}", f'rate zone {zone} has no published 5/8" and volume rates')
        small = table["5/8"]
        ratios = {m: v / small for m, v in table.items()}
        counts = meters.get(zone, {})
        requirement = budget.requirement(zone) * years - surcharge[zone]
        equivalents = sum((n * ratios[m] for m, n in counts.items()), ZERO)
        current_service = sum((n * table[m] for m, n in counts.items()), ZERO)
        share = _divide(
            current_service, current_service + kgal[zone] * volume_now[zone], f"determinants.{zone}"
        )
        small_new = _divide(requirement * share, equivalents, f"determinants.{zone}.meters")
        new_table = {m: publish(small_new * ratios[m], v) for m, v in table.items()}
        service_revenue = sum((n * new_table[m] for m, n in counts.items()), ZERO)
        volume = publish(
            _divide(requirement - service_revenue, kgal[zone], f"determinants.{zone}.kgal"), volume_now[zone]
        )
        new_service[zone] = new_table
        new_volume[zone] = volume
        rates += [
            RateChange(f"service_charge.{zone}.{m}", table[m], new_table[m], unit_of(table[m])) for m in table
        ]
        rates.append(RateChange(f"volume_rate_per_kgal.{zone}", volume_now[zone], volume, unit_of(volume)))
        tolerance[zone] = (unit_of(volume) * kgal[zone] + unit_of(small) * sum(counts.values(), ZERO)) / years
    return Study(
        tenant=budget.tenant,
        effective_from=budget.effective_from,
        rates=tuple(rates),
        determinants={
            "meter_months": {z: dict(sorted(t.items())) for z, t in sorted(meters.items())},
            "billed_kgal": dict(kgal),
            "surcharge_revenue": dict(surcharge),
        },
        tolerance=tolerance,
        updates={"service_charge": new_service, "volume_rate_per_kgal": new_volume},
    )


def _sullivan(budget: Budget, tariff: SullivanTariff, usages: Sequence[Usage]) -> Study:
    """NR 128.13 as SU-USE and SU-SURCHARGE read it; SU-REC from the debt budget."""
    years = _years(usages, tariff)
    factor = tariff.pounds_factor.value
    limits = {str(p): v for p, v in tariff.normal_limits.value.items()}
    published = {str(p): v for p, v in tariff.surcharge_rates_per_lb.value.items()}
    loadings = [p for p in LOADINGS if p in budget.cost_allocation]
    kgal = ZERO
    normal_lbs: dict[str, Decimal] = defaultdict(Decimal)
    excess_lbs: dict[str, Decimal] = defaultdict(Decimal)
    by_class: dict[str, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    for u in usages:
        gallons = u.rating.water_gallons or ZERO
        k = gallons.scaleb(-3)
        kgal += k
        by_class[u.user_class]["kgal"] += k
        mgal = gallons.scaleb(-6)
        for p in loadings:
            normal = limits[p] * mgal * factor
            normal_lbs[p] += normal
            by_class[u.user_class][f"{p}_lbs"] += normal
            concentration = u.rating.strength.get(p)
            if concentration is not None and concentration > limits[p] and tariff.surcharge_applies.value:
                over = (concentration - limits[p]) * mgal * factor
                excess_lbs[p] += over
                by_class[u.user_class][f"{p}_lbs"] += over
    omr = (budget.requirement("replacement") + budget.requirement("om")) * years
    flow_cost = omr * budget.cost_allocation["flow"]
    per_lb: dict[str, Decimal] = {}
    for p in loadings:
        cost = omr * budget.cost_allocation[p]
        per_lb[p] = _divide(cost, normal_lbs[p] + excess_lbs[p], f"determinants.{p}_lbs")
    use_raw = _divide(flow_cost, kgal, "determinants.kgal") + sum(
        (per_lb[p] * limits[p] * factor / KGAL_PER_MGAL for p in loadings), ZERO
    )
    use = publish(use_raw, tariff.use_rate_per_kgal.value)
    surcharge = {p: publish(per_lb.get(p, v), v) for p, v in published.items()}
    use_revenue = use * kgal
    share_raw = _divide(budget.requirement("replacement") * years, use_revenue, "determinants.kgal")
    share = publish(share_raw, tariff.replacement_fund_share.value)
    debt = publish(budget.requirement("debt_retirement"), tariff.annual_debt_retirement.value)
    treatment = (
        publish(budget.treatment_portion, tariff.treatment_portion.value)
        if budget.treatment_portion is not None
        else tariff.treatment_portion.value
    )
    use_unit = unit_of(tariff.use_rate_per_kgal.value)
    share_unit = unit_of(tariff.replacement_fund_share.value)
    surcharge_moved = sum((unit_of(published[p]) * excess_lbs[p] for p in loadings if p in published), ZERO)
    rates = [
        RateChange("use_rate_per_kgal", tariff.use_rate_per_kgal.value, use, use_unit),
        *(
            RateChange(f"surcharge_rates_per_lb.{p}", published[p], surcharge[p], unit_of(published[p]))
            for p in published
        ),
        RateChange("annual_debt_retirement", tariff.annual_debt_retirement.value, debt, unit_of(debt)),
        RateChange("replacement_fund_share", tariff.replacement_fund_share.value, share, share_unit),
        RateChange("treatment_portion", tariff.treatment_portion.value, treatment, unit_of(treatment)),
    ]
    return Study(
        tenant=budget.tenant,
        effective_from=budget.effective_from,
        rates=tuple(rates),
        determinants={
            "kgal": kgal,
            "normal_strength_lbs": dict(normal_lbs),
            "excess_lbs": dict(excess_lbs),
            "omr_requirement": omr,
            "cost_per_lb": per_lb,
            "flow_cost_per_kgal": flow_cost / kgal,
            "use_rate_unrounded": use_raw,
            "replacement_fund_share_unrounded": share_raw,
            "class_flow_and_loadings": {c: dict(v) for c, v in sorted(by_class.items())},
            # NR 128.13: each class's share of the annual OM&R cost by its flow and loadings
            "class_omr_cost_of_service": {
                c: (flow_cost * v["kgal"] / kgal + sum((per_lb[p] * v[f"{p}_lbs"] for p in loadings), ZERO))
                / years
                for c, v in sorted(by_class.items())
            },
        },
        tolerance={
            "replacement": (share * use_unit * kgal + share_unit * use_revenue) / years,
            "om": ((ONE - share) * use_unit * kgal + share_unit * use_revenue + surcharge_moved) / years,
            # SU-REC divides the debt exactly: only the cents of each line move it.
            "debt_retirement": unit_of(debt) * Decimal(len(usages)) / years,
        },
        updates={
            "use_rate_per_kgal": use,
            "surcharge_rates_per_lb": surcharge,
            "annual_debt_retirement": debt,
            "replacement_fund_share": share,
            "treatment_portion": treatment,
        },
    )


def _rule_revenue(usages: Iterable[Usage], book: TariffBook, rules: frozenset[str] | set[str]) -> Decimal:
    """The test year's revenue of ``rules`` rated on ``book`` (e.g. GR-HIGH kept as it is)."""
    engine = RatingEngine(book)
    total = ZERO
    for u in usages:
        if not u.rating.strength:
            continue
        for bl in engine.rate(u.rating).lines:
            if bl.rule_id in rules:
                total += bl.amount
    return total


# --- the proposed version ----------------------------------------------------------------------


def proposed_tariff(current: Tariff, result: Study, budget: Budget) -> Tariff:
    """The next effective-dated version: ``current`` with the study's rates, ``status: proposed``.

    Each updated setting keeps its rule and says it is an example when the budget is."""
    changes: dict[str, Any] = {}
    for name, value in result.updates.items():
        setting = getattr(current, name)
        if isinstance(value, Mapping):
            value = {**setting.value, **value}
        changes[name] = setting.model_copy(
            update={
                "value": value,
                "example": budget.example or setting.example,
                "note": f"rate study for {budget.effective_from.isoformat()}",
            }
        )
    changes.update(
        {
            "effective_from": budget.effective_from,
            "effective_until": None,
            "status": "proposed",
            "adopted_by": budget.adopted_by,
        }
    )
    proposed = current.model_copy(update=changes)
    # Validate as a file would be (a copy skips the validators).
    return type(current).model_validate(proposed.model_dump())


def pro_forma_book(proposed: Tariff, usages: Sequence[Usage]) -> TariffBook:
    """A book in which ``proposed`` (or any one version) is in force over the whole test
    year: the year re-rated as if its rates had applied (pro forma)."""
    first = min(u.rating.period_start for u in usages)
    return TariffBook(
        {proposed.tenant: [proposed.model_copy(update={"effective_from": first, "effective_until": None})]}
    )


# --- re-rating the test year: recovery and impact ----------------------------------------------


@dataclass
class _Account:
    user_class: str
    before: Decimal = ZERO
    after: Decimal = ZERO
    periods: int = 0
    kgal: Decimal = ZERO
    eru: Decimal = ZERO


def _fund_amounts(bl: Any, usage: Usage) -> Mapping[str, Decimal]:
    """The line's amount by fund: its X-FUNDS record, else its district (Pleasant Prairie
    sewer's zone), else operation and maintenance."""
    funds = bl.details.get("funds")
    if funds:
        return funds
    if usage.rating.tenant == PP_SEWER and usage.rating.account is not None and usage.rating.account.zone:
        return {usage.rating.account.zone: bl.amount}
    return {"om": bl.amount}


def impact(
    budget: Budget,
    result: Study,
    usages: Sequence[Usage],
    before: TariffBook,
    after: TariffBook,
    *,
    largest: int = 10,
) -> dict[str, Any]:
    """Re-rate the test year on the version in force (``before``) and the proposed one
    (``after``): each fund's recovery and residual, each class's revenue, a typical bill per
    class, and the largest changes by account. Amounts are Decimals (rendered by the caller)."""
    years = _years(usages, before.versions(budget.tenant)[-1])
    versions_before: set[str] = set()
    engines = RatingEngine(before), RatingEngine(after)
    recovered: dict[str, Decimal] = defaultdict(Decimal)
    penalties = ZERO
    classes: dict[str, dict[str, Decimal]] = defaultdict(lambda: {"before": ZERO, "after": ZERO})
    accounts: dict[str, _Account] = {}
    omr_by_class: dict[str, Decimal] = defaultdict(Decimal)
    for u in usages:
        acct = accounts.setdefault(u.account_id, _Account(u.user_class))
        acct.periods += 1
        acct.kgal += (u.rating.water_gallons or u.rating.estimated_gallons or ZERO).scaleb(-3)
        if u.rating.parcel is not None:
            acct.eru += u.rating.parcel.eru
        old, new = (engine.rate(u.rating) for engine in engines)
        versions_before.update(old.tariff_versions)
        acct.before += old.total
        acct.after += new.total
        classes[u.user_class]["before"] += old.total
        classes[u.user_class]["after"] += new.total
        for bl in new.lines:
            if bl.rule_id in OMR_RULES:
                omr_by_class[u.user_class] += bl.amount
            if bl.rule_id in PENALTY_RULES:
                penalties += bl.amount
                continue
            for fund, amount in _fund_amounts(bl, u).items():
                recovered[fund] += amount
    funds = {}
    for fund in FUNDS[budget.tenant]:
        annual = recovered[fund] / years
        requirement = budget.requirement(fund)
        residual = annual - requirement
        tolerance = result.tolerance[fund]
        funds[fund] = {
            "budget": budget.funds.get(fund, ZERO),
            "other_revenue": budget.other_revenue.get(fund, ZERO),
            "requirement": requirement,
            "recovered": annual,
            "residual": residual,
            "tolerance": tolerance,
            "within_tolerance": abs(residual) <= tolerance,
        }
    by_class: dict[str, dict[str, Any]] = {}
    cost_of_service = result.determinants.get("class_omr_cost_of_service", {})
    for name, revenue in sorted(classes.items()):
        members = [a for a in accounts.values() if a.user_class == name]
        by_class[name] = {
            "accounts": len(members),
            "revenue_before": revenue["before"] / years,
            "revenue_after": revenue["after"] / years,
            "change": (revenue["after"] - revenue["before"]) / years,
            "change_percent": _percent(revenue["after"] - revenue["before"], revenue["before"]),
            "typical_customer": _typical(members, budget.tenant),
        }
        if name in cost_of_service:  # Sullivan: the OM&R the class's flow and loadings cost
            by_class[name]["omr_cost_of_service"] = cost_of_service[name]
            by_class[name]["omr_revenue_after"] = omr_by_class[name] / years
    changes = sorted(
        ((account_id, a) for account_id, a in accounts.items()),
        key=lambda item: (-abs(item[1].after - item[1].before), item[0]),
    )[:largest]
    return {
        "tenant": budget.tenant,
        "effective_from": budget.effective_from,
        "tariff_before": ", ".join(sorted(versions_before)),
        "tariff_after": f"{budget.tenant}@{budget.effective_from.isoformat()} (proposed)",
        "test_year": {
            "start": min(u.rating.period_start for u in usages),
            "end": max(u.rating.period_end for u in usages),
            "account_periods": len(usages),
            "accounts": len(accounts),
        },
        "rates": [
            {"setting": r.setting, "before": r.before, "after": r.after, "unit": r.unit} for r in result.rates
        ],
        "determinants": result.determinants,
        "funds": funds,
        "penalties_not_rate_revenue": penalties / years,
        "classes": by_class,
        "largest_changes": [
            {
                "account_id": account_id,
                "class": a.user_class,
                "before": a.before,
                "after": a.after,
                "change": a.after - a.before,
                "change_percent": _percent(a.after - a.before, a.before),
            }
            for account_id, a in changes
        ],
    }


def _percent(change: Decimal, base: Decimal) -> Decimal | None:
    if not base:
        return None
    return (change * HUNDRED / base).quantize(Decimal("0.1"), ROUND_HALF_UP)


def _typical(members: list[_Account], tenant: str) -> dict[str, Any] | None:
    """The class's typical customer: a full-year account of median use (kgal, or ERUs for
    stormwater); its bill per period before and after (the year's average)."""
    if not members:
        return None
    most = max(a.periods for a in members)
    full = [a for a in members if a.periods == most]

    def use(a: _Account) -> Decimal:
        return a.eru if tenant == STORMWATER else a.kgal

    ordered = sorted(full, key=use)
    median = statistics.median_low([use(a) for a in ordered])
    pick = next(a for a in ordered if use(a) == median)
    periods = Decimal(pick.periods)
    return {
        "use_per_period": (use(pick) / periods).quantize(Decimal("0.01"), ROUND_HALF_UP),
        "use_unit": "ERU" if tenant == STORMWATER else "kgal",
        "bill_before": (pick.before / periods).quantize(Decimal("0.01"), ROUND_HALF_UP),
        "bill_after": (pick.after / periods).quantize(Decimal("0.01"), ROUND_HALF_UP),
        "change_percent": _percent(pick.after - pick.before, pick.before),
    }
