"""Sullivan sewer (``sullivan-sewer``): quarterly bills.

Charge models (RULES.md): SU-USE (with the SU-FUNDS split and the SU-ANNUAL-NOTICE
treatment portion in its details), SU-REC, SU-SURCHARGE, SU-BOD900.

Decisions: SU-REC revenue is debt retirement (``funds: {"debt_retirement": amount}``);
surcharge and BOD-900 penalty revenue go to O&M (``replacement`` 0.00).

Refused (named field): a nonresidential account without REC units (``account.rec_units``:
set per account from the utility's table, no default, SU-REC); more violation days than
the period has (``bod900_violation_days``: a violation day is a sampled day in the period,
SU-BOD900). SU-SURCHARGE is an interpretation (the ordinance imposes no surcharge in
words), so the tariff's ``surcharge_applies`` switch turns it off; a bill with strength
above normal then notes that no surcharge was charged.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from billing.domain.rating.errors import InvalidScenario
from billing.domain.rating.model import BillLine, Note, RatingInput
from billing.domain.rating.output import plain
from billing.domain.rating.pounds import PoundsCharge
from billing.domain.rating.proration import OM_FUNDS, SPLIT_FUNDS, Charge, Plan, line, new_line, shares
from common.money import round_line
from common.tariffs import SullivanTariff

TENANT = "sullivan-sewer"
ZERO = Decimal(0)


class SullivanRates:
    """One Sullivan tariff version, compiled to plain Decimals."""

    __slots__ = (
        "version_id",
        "use",
        "annual_debt",
        "periods_per_year",
        "rec_residential",
        "limits",
        "surcharge",
        "surcharge_applies",
        "unrated",
        "factor",
        "bod900_per_day",
        "replacement_share",
        "treatment_share",
    )

    def __init__(self, tariff: SullivanTariff) -> None:
        self.version_id = tariff.version_id
        self.use: Decimal = tariff.use_rate_per_kgal.value
        self.annual_debt: Decimal = tariff.annual_debt_retirement.value
        self.periods_per_year = Decimal(12 // tariff.billing_period_months)
        self.rec_residential: Decimal = tariff.rec_units_residential_per_dwelling.value
        self.limits: dict[str, Decimal] = {str(p): v for p, v in tariff.normal_limits.value.items()}
        rates = tariff.surcharge_rates_per_lb.value
        self.surcharge_applies: bool = tariff.surcharge_applies.value
        # Switched off, the version has no surcharge table: its share of the period is not surcharged.
        self.surcharge: dict[str, tuple[Decimal, Decimal]] = (
            {p: (self.limits[p], rates[p]) for p in rates if p in self.limits}
            if self.surcharge_applies
            else {}
        )
        self.unrated: dict[str, Decimal] = {p: v for p, v in self.limits.items() if p not in rates}
        self.factor: Decimal = tariff.pounds_factor.value
        self.bod900_per_day: Decimal = tariff.bod900_penalty_per_day.value
        self.replacement_share: Decimal = tariff.replacement_fund_share.value
        self.treatment_share: Decimal = tariff.treatment_portion.value


def require_rec_units(residential: bool, units: Decimal | None) -> None:
    """SU-REC: a nonresidential account's REC units are set per account from the utility's
    table; there is no default (one REC for a large industrial user would under-bill it).
    Refused, field ``account.rec_units``. Shared by the rater and the preview input rules."""
    if units is None and not residential:
        raise InvalidScenario(
            "account.rec_units",
            "is required for a nonresidential account: its REC units come from the utility's "
            "table, there is no default (SU-REC)",
        )


def check_violation_days(days: int, period_days: int) -> None:
    """SU-BOD900: a violation day is a day in the period on which a sample showed BOD of 900
    mg/l or more, never carried forward, so there are at most the period's days. Refused,
    field ``bod900_violation_days``. Shared by the rater and the preview input rules."""
    if days > period_days:
        raise InvalidScenario(
            "bod900_violation_days",
            f"{days} is more than the {period_days} days of the period: a violation day is a day in "
            "the period on which a sample showed BOD of 900 mg/l or more (SU-BOD900)",
        )


class SullivanUseCharge(Charge):
    """SU-USE: gallons / 1,000 x the use rate (operation, maintenance and replacement).

    Details carry the SU-FUNDS split (replacement share 15%) and the SU-ANNUAL-NOTICE
    portion attributable to wastewater treatment (62%), each rounded half-up.
    """

    RULE_ID = "SU-USE"
    NOTICE_RULE_ID = "SU-ANNUAL-NOTICE"
    UNIT = "kgal"
    RATE = "use"
    FUNDS = SPLIT_FUNDS
    AFTER = True

    def after(self, details: dict[str, Any], amount: Decimal, rates: SullivanRates) -> None:
        details["treatment_portion"] = {
            "rule_id": SullivanUseCharge.NOTICE_RULE_ID,
            "share": rates.treatment_share,
            "amount": round_line(amount * rates.treatment_share),
        }

    def lines(self, plan: Plan, gallons: Decimal, out: list[BillLine]) -> None:
        self.emit(
            out, plan, "Sewer use charge per 1,000 gallons", gallons.scaleb(-3), None, {"gallons": gallons}
        )


class SullivanRecCharge:
    """SU-REC: REC units x (annual debt retirement / total RECs / 4) per quarter.

    The per-REC rate is not rounded (X-MONEY); the amount is computed as
    units x annual debt x days / (total RECs x 4 x period days), dividing once.
    """

    RULE_ID = "SU-REC"
    DESCRIPTION = "Residential equivalency charge (debt retirement)"

    @staticmethod
    def units(rates: SullivanRates, units: Decimal | None, residential: bool, dwellings: int) -> Decimal:
        """The account's REC units: assigned, else (residential only) dwelling units x 1.0.

        A nonresidential account has no default: one REC for a large industrial user would
        under-bill it (SU-REC), so its units must be set from the utility's table.
        """
        if units is not None:
            return units
        if not residential:
            require_rec_units(residential, units)  # raises: no nonresidential default
        return dwellings * rates.rec_residential

    def lines(
        self,
        plan: Plan,
        units: Decimal | None,
        residential: bool,
        dwellings: int,
        total_recs: Decimal,
        out: list[BillLine],
    ) -> None:
        single: SullivanRates | None = plan.single
        if single is not None:  # one tariff version: no shares (hot path)
            q = self.units(single, units, residential, dwellings)
            divisor = total_recs * single.periods_per_year
            amount = round_line(q * single.annual_debt / divisor)
            if amount:
                details: dict[str, Any] = {
                    "rec_units": q,
                    "annual_debt_retirement": single.annual_debt,
                    "total_recs": total_recs,
                    "periods_per_year": single.periods_per_year,
                    "tariff_versions": plan.tariff_versions,
                    "funds": {"debt_retirement": amount},
                }
                out.append(
                    new_line(
                        self.RULE_ID,
                        self.DESCRIPTION,
                        q,
                        "REC",
                        single.annual_debt / divisor,
                        amount,
                        details,
                    )
                )
            return

        def quantity_rate(rates: SullivanRates) -> tuple[Decimal, Decimal]:
            return (
                self.units(rates, units, residential, dwellings),
                rates.annual_debt / (total_recs * rates.periods_per_year),
            )

        for share in shares(plan, quantity_rate):
            rates: SullivanRates = share.rates
            raw = (
                share.quantity
                * rates.annual_debt
                * share.days
                / (total_recs * rates.periods_per_year * plan.period_days)
            )
            share_details: dict[str, Any] = {
                "rec_units": share.quantity,
                "annual_debt_retirement": rates.annual_debt,
                "total_recs": total_recs,
                "periods_per_year": rates.periods_per_year,
            }
            bl = line(self.RULE_ID, self.DESCRIPTION, "REC", share, plan.period_days, share_details, raw)
            if bl is not None:
                share_details["funds"] = {"debt_retirement": bl.amount}
                out.append(bl)


class SullivanSurcharge(PoundsCharge):
    """SU-SURCHARGE: per pound over each SU-NORMAL limit (X-POUNDS, factor 8.34), one line
    per parameter; O&M revenue."""

    RULE_ID = "SU-SURCHARGE"
    DESCRIPTION = "Surcharge, {name} over {limit} mg/l"
    TABLE = "surcharge"
    FUNDS = OM_FUNDS


class SullivanBod900(Charge):
    """SU-BOD900: 1,000.00 per day of violation (BOD >= 900 mg/l), added to the next bill.

    The count of violation days drives the penalty; concentrations drive only the surcharge.
    """

    RULE_ID = "SU-BOD900"
    UNIT = "day"
    RATE = "bod900_per_day"
    FUNDS = OM_FUNDS

    def lines(self, plan: Plan, days: int, out: list[BillLine]) -> None:
        details: dict[str, Any] = {"violation_days": days}
        self.emit(out, plan, "BOD 900 mg/l penalty, per day of violation", Decimal(days), None, details)


class SullivanRater:
    """Rates one Sullivan account-quarter."""

    tenant = TENANT
    compile = SullivanRates
    use = SullivanUseCharge()
    rec = SullivanRecCharge()
    surcharge = SullivanSurcharge()
    bod900 = SullivanBod900()

    def rate(self, inp: RatingInput, plan: Plan, notes: list[Note]) -> list[BillLine]:
        account = inp.account
        if account is None:
            raise InvalidScenario("account", f"is required for tenant {TENANT}")
        total_recs = inp.total_recs
        if total_recs is None or total_recs <= 0:
            raise InvalidScenario("total_recs", f"is required for tenant {TENANT} and must be above 0")
        violation_days = inp.bod900_violation_days
        if violation_days > plan.period_days:  # checked inline first: the hot path makes no call
            check_violation_days(violation_days, plan.period_days)
        gallons = inp.water_gallons if inp.water_gallons is not None else ZERO
        out: list[BillLine] = []
        self.use.lines(plan, gallons, out)
        residential = account.account_class == "residential"
        self.rec.lines(plan, account.rec_units, residential, account.dwelling_units, total_recs, out)
        if inp.strength:
            self._surcharge(plan, inp.strength, gallons, out, notes)
        if violation_days:
            self.bod900.lines(plan, violation_days, out)
        return out

    def _surcharge(
        self,
        plan: Plan,
        strength: Mapping[str, Decimal],
        gallons: Decimal,
        out: list[BillLine],
        notes: list[Note],
    ) -> None:
        single = plan.single
        if single is not None and single.surcharge_applies:  # hot path
            self.surcharge.lines(plan, strength, gallons, out, notes)
            return
        off = [segment.version_id for segment in plan.segments if not segment.rates.surcharge_applies]
        if off:
            above = [
                f"{param} {plain(concentration)} mg/l over {plain(limit)}"
                for param, limit in plan.segments[0].rates.limits.items()
                if (concentration := strength.get(param)) is not None and concentration > limit
            ]
            if above:
                notes.append(
                    Note(
                        self.surcharge.RULE_ID,
                        f"no surcharge in tariff version {', '.join(off)} (the surcharge is switched off) "
                        f"on strength above normal: {'; '.join(above)}",
                    )
                )
        if len(off) < len(plan.segments):
            self.surcharge.lines(plan, strength, gallons, out, notes)
