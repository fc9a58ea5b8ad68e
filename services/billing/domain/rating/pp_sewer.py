"""Pleasant Prairie sanitary sewer (``pleasant-prairie-sewer``): monthly bills.

Charge models (RULES.md): PP-SEW-SVC, PP-SEW-VOL (with PP-SEW-WINTER), PP-SEW-SURCHARGE,
PP-SEW-SAMPLE-COST. Rates come from the tariff version(s) in force (X-EFFECTIVE).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from billing.domain.rating.errors import InvalidScenario, RateNotPublished
from billing.domain.rating.model import BillLine, Note, RatingInput
from billing.domain.rating.pounds import PoundsCharge
from billing.domain.rating.proration import Charge, Plan
from common.tariffs import PPSewerTariff

TENANT = "pleasant-prairie-sewer"
ONE = Decimal(1)
ZERO = Decimal(0)


class PPSewerRates:
    """One PP sewer tariff version, compiled to plain Decimals for the hot path."""

    __slots__ = (
        "version_id",
        "zones",
        "service",
        "volume",
        "limits",
        "surcharge",
        "unrated",
        "factor",
        "sample_cost",
        "winter_average",
    )

    def __init__(self, tariff: PPSewerTariff) -> None:
        self.version_id = tariff.version_id
        self.zones = tariff.zones
        # Flattened: (zone, meter) -> monthly charge. A meter absent from a zone's table is
        # "not published" (TARIFFS.md "—"), never zero.
        service: dict[tuple[str, str], Decimal] = {}
        for zone, table in tariff.service_charge.value.items():
            for meter, rate in table.items():
                service[(zone, meter)] = rate
            # 2015: 3/4" was not published and is charged as 5/8" (meter_size_aliases).
            for alias, target in tariff.meter_size_aliases.items():
                if alias not in table and target in table:
                    service[(zone, alias)] = table[target]
        self.service = service
        self.volume: dict[str, Decimal] = dict(tariff.volume_rate_per_kgal.value)
        self.limits: dict[str, Decimal] = {
            str(p): v for p, v in tariff.surcharge.category_a_limits.value.items()
        }
        rates = tariff.surcharge.rates_per_lb.value
        self.surcharge: dict[str, tuple[Decimal, Decimal]] = {
            p: (self.limits[p], rates[p]) for p in rates if p in self.limits
        }
        # FOG has a Category A limit but no per-pound rate: no surcharge line, a note.
        self.unrated: dict[str, Decimal] = {p: v for p, v in self.limits.items() if p not in rates}
        self.factor: Decimal = tariff.pounds_factor.value
        self.sample_cost: Decimal = tariff.sample_cost_per_sample.value
        self.winter_average: bool = tariff.winter_average_applies.value


def _zone_error(rule_id: str, zone: str, rates: PPSewerRates) -> RateNotPublished:
    return RateNotPublished(
        "account.zone",
        f"tenant {TENANT} publishes no {rule_id} rate for zone {zone!r} in tariff version {rates.version_id} "
        "(never billed as zero)",
    )


class PPServiceCharge(Charge):
    """PP-SEW-SVC: monthly charge by rate zone and meter size."""

    RULE_ID = "PP-SEW-SVC"
    UNIT = "month"
    RATE = "service"

    def missing(self, rates: PPSewerRates, key: tuple[str, str]) -> Exception:
        zone, meter = key
        if zone not in rates.zones:
            return _zone_error(self.RULE_ID, zone, rates)
        return RateNotPublished(
            "account.meter_size",
            f'tenant {TENANT} publishes no {self.RULE_ID} rate for zone {zone}, meter size {meter}" '
            f"in tariff version {rates.version_id} (never billed as zero)",
        )

    def describe(self, plan: Plan, key: tuple[str, str]) -> tuple[str, dict[str, Any]]:
        zone, meter = key
        return f'Monthly service charge, {meter}" meter, {zone} zone', {"zone": zone, "meter_size": meter}

    def lines(self, plan: Plan, zone: str, meter: str, out: list[BillLine]) -> None:
        key = (zone, meter)
        self.emit_periodic(out, plan, key, key)


class PPVolumeCharge(Charge):
    """PP-SEW-VOL: billed volume / 1,000 x the zone's rate per kgal (X-VOLUME; kgal not rounded).

    PP-SEW-WINTER: a residential account's billed volume is the lesser of the month's metered
    use and its winter average, when it has one (the rule is named in the line's details)
    and the tariff's ``winter_average_applies`` switch is on (published practice, not
    ordinance: RULES.md). With the switch off the metered use is billed and a note says so.
    """

    RULE_ID = "PP-SEW-VOL"
    WINTER_RULE_ID = "PP-SEW-WINTER"
    UNIT = "kgal"
    RATE = "volume"

    def __init__(self) -> None:
        self._descriptions: dict[str, str] = {}

    def missing(self, rates: PPSewerRates, key: str) -> Exception:
        return _zone_error(self.RULE_ID, key, rates)

    def lines(
        self,
        plan: Plan,
        zone: str,
        metered_gal: Decimal,
        winter_average_gal: Decimal | None,
        billed_gal: Decimal,
        out: list[BillLine],
    ) -> None:
        details: dict[str, Any] = {"zone": zone, "metered_gallons": metered_gal, "billed_gallons": billed_gal}
        if winter_average_gal is not None:
            details["winter_average_gallons"] = winter_average_gal
            details["volume_rule"] = self.WINTER_RULE_ID
        description = self._descriptions.get(zone)
        if description is None:
            description = self._descriptions[zone] = f"Volume charge per 1,000 gallons, {zone} zone"
        self.emit(out, plan, description, billed_gal.scaleb(-3), zone, details)


class PPSurcharge(PoundsCharge):
    """PP-SEW-SURCHARGE: Category B, per pound over each Category A limit, one line per parameter.

    Pounds of excess = (concentration - limit) mg/l x billed volume in million gallons x 8.34
    (X-POUNDS). Nonresidential only (residential dwellings are not sampled). A parameter
    with a limit but no rate (FOG) produces no line: the user is in Category B and the bill
    notes it.

    The concentrations are those the billing service passes: while the user is in Category B
    they are the classification's basis, the latest exceeding result (sampling's
    ``Classification.basis``), for every period until it returns to Category A.
    """

    RULE_ID = "PP-SEW-SURCHARGE"
    DESCRIPTION = "Sanitary sewer surcharge, {name} over {limit} mg/l"
    UNRATED = (
        "{name} {concentration} mg/l is over the Category A limit of {limit} mg/l: the user is in "
        "Category B, but {name} has no published surcharge rate, so no surcharge line"
    )
    TABLE = "surcharge"


class PPSampleCost(Charge):
    """PP-SEW-SAMPLE-COST: samples collected x the cost per sample, a separate line."""

    RULE_ID = "PP-SEW-SAMPLE-COST"
    UNIT = "sample"
    RATE = "sample_cost"

    def lines(self, plan: Plan, samples: int, out: list[BillLine]) -> None:
        self.emit(out, plan, "Sampling cost", Decimal(samples), None, {"samples_collected": samples})


class PPSewerRater:
    """Rates one Pleasant Prairie sewer account-month."""

    tenant = TENANT
    compile = PPSewerRates
    service = PPServiceCharge()
    volume = PPVolumeCharge()
    surcharge = PPSurcharge()
    sample_cost = PPSampleCost()

    def rate(self, inp: RatingInput, plan: Plan, notes: list[Note]) -> list[BillLine]:
        account = inp.account
        if account is None:
            raise _missing("account")
        zone = account.zone
        if zone is None:
            raise _missing("account.zone")
        meter = account.meter_size
        if meter is None:
            raise _missing("account.meter_size")
        out: list[BillLine] = []
        self.service.lines(plan, zone, meter, out)
        metered = inp.water_gallons if inp.water_gallons is not None else ZERO
        winter = inp.winter_average_gallons
        residential = account.account_class == "residential"
        if residential and winter is not None:
            # The switch of the version in force at the end of the period (X-PERIOD).
            last: PPSewerRates = plan.segments[-1].rates
            if last.winter_average:
                billed = winter if winter < metered else metered
            else:
                billed = metered
                notes.append(
                    Note(
                        self.volume.WINTER_RULE_ID,
                        f"the winter average is off in tariff version {last.version_id}: "
                        f"metered use is billed, not the lesser of it and the winter average",
                    )
                )
                winter = None
        else:
            billed = metered
            winter = None
        self.volume.lines(plan, zone, metered, winter, billed, out)
        if not residential and inp.strength:
            self.surcharge.lines(plan, inp.strength, billed, out, notes)
        if inp.samples_collected:
            self.sample_cost.lines(plan, inp.samples_collected, out)
        return out


def _missing(field: str) -> InvalidScenario:
    return InvalidScenario(field, f"is required for tenant {TENANT}")
