"""Grafton sewer (``grafton-sewer``): quarterly bills.

Charge models (RULES.md): GR-SVC, GR-VOL, GR-HIGH, GR-UNMETERED, GR-SEPTAGE-CHARGE, with the
fund split GR-FUNDS on each line.

Decisions (the ordinance is silent):

- GR-FUNDS: the replacement share (tariff: 12%) applies to "service and volume charges":
  GR-SVC, GR-VOL and both GR-UNMETERED lines (the flat charge is the 5/8" service charge
  plus 18 kgal of volume). High-strength (GR-HIGH) and septage (GR-SEPTAGE-CHARGE) revenue
  recovers treatment cost of the extra load: it goes wholly to O&M (``replacement`` 0.00).

GR-HIGH on an unmetered account is refused (field ``strength``): the high strength rates
are for metered service (ordinance B), so a customer found to discharge above normal
strength must be metered before it can be billed for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from billing.domain.rating.errors import InvalidScenario, RateNotPublished
from billing.domain.rating.funds import om_only, split_funds
from billing.domain.rating.model import BillLine, Note, RatingInput
from billing.domain.rating.output import plain
from billing.domain.rating.pounds import PoundsCharge
from billing.domain.rating.proration import OM_FUNDS, SPLIT_FUNDS, Charge, Plan, Segment, Share, line, shares
from common.tariffs import GraftonTariff

TENANT = "grafton-sewer"
ONE = Decimal(1)
ZERO = Decimal(0)


class GraftonRates:
    """One Grafton tariff version, compiled to plain Decimals."""

    __slots__ = (
        "version_id",
        "service",
        "volume",
        "limits",
        "high",
        "unrated",
        "factor",
        "flat",
        "included_kgal",
        "septage",
        "replacement_share",
    )

    def __init__(self, tariff: GraftonTariff) -> None:
        self.version_id = tariff.version_id
        self.service: dict[str, Decimal] = {str(m): v for m, v in tariff.service_charge.value.items()}
        self.volume: Decimal = tariff.volume_rate_per_kgal.value
        self.limits: dict[str, Decimal] = {str(p): v for p, v in tariff.normal_limits.value.items()}
        rates = tariff.high_strength_rates_per_lb.value
        self.high: dict[str, tuple[Decimal, Decimal]] = {
            p: (self.limits[p], rates[p]) for p in rates if p in self.limits
        }
        self.unrated: dict[str, Decimal] = {p: v for p, v in self.limits.items() if p not in rates}
        self.factor: Decimal = tariff.pounds_factor.value
        self.flat: Decimal = tariff.unmetered_flat_charge.value
        self.included_kgal: Decimal = tariff.unmetered_included_kgal.value
        self.septage: Decimal = tariff.septage_rate_per_kgal.value
        self.replacement_share: Decimal = tariff.replacement_fund_share.value


def _emit(
    rule_id: str,
    description: str,
    unit: str,
    share: Share,
    plan: Plan,
    details: dict[str, Any],
    out: list[BillLine],
    replacement: bool = True,
) -> None:
    bl = line(rule_id, description, unit, share, plan.period_days, details)
    if bl is not None:
        details["funds"] = (
            split_funds(bl.amount, share.rates.replacement_share) if replacement else om_only(bl.amount)
        )
        out.append(bl)


class GraftonServiceCharge(Charge):
    """GR-SVC: quarterly service charge by meter size (metered, domestic strength)."""

    RULE_ID = "GR-SVC"
    UNIT = "quarter"
    RATE = "service"
    FUNDS = SPLIT_FUNDS

    def missing(self, rates: GraftonRates, key: str) -> Exception:
        return RateNotPublished(
            "account.meter_size",
            f'tenant {TENANT} publishes no {self.RULE_ID} rate for meter size {key}" '
            f"in tariff version {rates.version_id} (never billed as zero)",
        )

    def describe(self, plan: Plan, key: str) -> tuple[str, dict[str, Any]]:
        return f'Quarterly service charge, {key}" meter', {"meter_size": key}

    def lines(self, plan: Plan, meter: str, out: list[BillLine]) -> None:
        self.emit_periodic(out, plan, meter, meter)


class GraftonVolumeCharge(Charge):
    """GR-VOL: metered gallons / 1,000 x the rate per kgal (kgal not rounded)."""

    RULE_ID = "GR-VOL"
    UNIT = "kgal"
    RATE = "volume"
    FUNDS = SPLIT_FUNDS

    def lines(self, plan: Plan, gallons: Decimal, out: list[BillLine]) -> None:
        self.emit(
            out, plan, "Volume charge per 1,000 gallons", gallons.scaleb(-3), None, {"gallons": gallons}
        )


class GraftonUnmeteredFlat(Charge):
    """GR-UNMETERED (flat part): the quarterly charge approximating 18,000 gallons."""

    RULE_ID = "GR-UNMETERED"
    UNIT = "quarter"
    RATE = "flat"
    FUNDS = SPLIT_FUNDS

    def describe(self, plan: Plan, key: None) -> tuple[str, dict[str, Any]]:
        return "Unmetered flat quarterly charge", {"included_kgal": plan.segments[0].rates.included_kgal}


class GraftonUnmetered:
    """GR-UNMETERED: a flat quarterly charge approximating 18,000 gallons, plus the estimate's
    excess over 18 kgal at the volume rate. Both lines carry this rule ID."""

    RULE_ID = "GR-UNMETERED"
    flat = GraftonUnmeteredFlat()

    def lines(self, plan: Plan, estimated_gal: Decimal, out: list[BillLine]) -> None:
        first: GraftonRates = plan.segments[0].rates
        self.flat.emit_periodic(out, plan, None, None)
        estimated_kgal = estimated_gal.scaleb(-3)
        if estimated_kgal <= first.included_kgal and len(plan.segments) == 1:
            return

        def excess(rates: GraftonRates) -> tuple[Decimal, Decimal]:
            over = estimated_kgal - rates.included_kgal
            return (over if over > 0 else ZERO), rates.volume

        for share in shares(plan, excess):
            if not share.quantity:
                continue
            excess_details = {
                "estimated_gallons": estimated_gal,
                "included_kgal": share.rates.included_kgal,
                "excess_kgal": share.quantity,
            }
            description = "Unmetered estimated volume over the flat charge, per 1,000 gallons"
            _emit(self.RULE_ID, description, "kgal", share, plan, excess_details, out)


class GraftonHighStrength(PoundsCharge):
    """GR-HIGH: per pound of excess over each GR-NORMAL limit, one line per parameter.

    Pounds = (concentration - limit) mg/l x volume in million gallons x 8.345 (X-POUNDS,
    the ordinance's parts-per-million definition). Revenue to O&M (module docstring).
    """

    RULE_ID = "GR-HIGH"
    DESCRIPTION = "High strength charge, {name} over {limit} mg/l"
    TABLE = "high"
    FUNDS = OM_FUNDS


class GraftonRater:
    """Rates one Grafton account-quarter."""

    tenant = TENANT
    compile = GraftonRates
    service = GraftonServiceCharge()
    volume = GraftonVolumeCharge()
    unmetered = GraftonUnmetered()
    high = GraftonHighStrength()

    def rate(self, inp: RatingInput, plan: Plan, notes: list[Note]) -> list[BillLine]:
        account = inp.account
        if account is None:
            raise InvalidScenario("account", f"is required for tenant {TENANT}")
        out: list[BillLine] = []
        meter = account.meter_size
        if meter is None:
            if inp.strength:
                refuse_unmetered_high_strength([seg.rates.limits for seg in plan.segments], inp.strength)
            self.unmetered.lines(plan, inp.estimated_gallons, out)
            return out
        gallons = inp.water_gallons if inp.water_gallons is not None else ZERO
        self.service.lines(plan, meter, out)
        self.volume.lines(plan, gallons, out)
        if inp.strength:
            self.high.lines(plan, inp.strength, gallons, out, notes)
        return out


def refuse_unmetered_high_strength(
    normal_limits: Iterable[Mapping[str, Decimal]], strength: Mapping[str, Decimal]
) -> None:
    """GR-HIGH: the high strength rates are for metered service; an unmetered account with
    any parameter above its GR-NORMAL limit (in any tariff version of the period) is
    refused, field ``strength``, until it is metered. Shared by the rater and the preview
    input rules."""
    for limits in normal_limits:
        for param, limit in limits.items():
            concentration = strength.get(param)
            if concentration is not None and concentration > limit:
                raise InvalidScenario(
                    "strength",
                    f"{param} {plain(concentration)} mg/l is above normal strength ({plain(limit)} mg/l, "
                    "GR-NORMAL) on an unmetered account: the high strength rates are for metered service "
                    "(GR-HIGH); meter the account first",
                )


class GraftonSeptage:
    """GR-SEPTAGE-CHARGE: a permitted hauler's disposal, per 1,000 gallons (O&M revenue)."""

    RULE_ID = "GR-SEPTAGE-CHARGE"


def rate_septage(gallons: Decimal, tariff: GraftonTariff) -> BillLine | None:
    """The GR-SEPTAGE-CHARGE line of one permitted disposal (the permit is checked by the
    caller, GR-SEPTAGE-PERMIT). ``None`` for a zero-gallon disposal."""
    if gallons < 0:
        raise InvalidScenario("gallons", f"must not be negative, got {gallons}")
    rates = GraftonRates(tariff)
    kgal = gallons.scaleb(-3)
    share = Share(kgal, rates.septage, 1, (rates.version_id,), rates)
    plan = Plan((Segment(rates, 1, rates.version_id),), 1, (rates.version_id,))
    out: list[BillLine] = []
    _emit(
        GraftonSeptage.RULE_ID,
        "Septage disposal per 1,000 gallons",
        "kgal",
        share,
        plan,
        {"gallons": gallons},
        out,
        False,
    )
    return out[0] if out else None
