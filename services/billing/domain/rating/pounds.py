"""Per-pound strength charges (X-POUNDS): PP-SEW-SURCHARGE, GR-HIGH, SU-SURCHARGE.

Pounds of excess = (concentration - limit) mg/l x volume in million gallons x the tenant's
factor (8.34 Pleasant Prairie and Sullivan, 8.345 Grafton), never rounded; one line per
parameter that has both a limit and a rate. At or below its limit a parameter makes no line.

A zero still says why (CONTRACTS.md ``notes``): a parameter over a limit that has no
published rate (Pleasant Prairie's FOG: the user is in Category B, PP-SEW-SURCHARGE) and an
excess whose charge rounds to 0.00 each leave a ``Note`` instead of a line.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from billing.domain.rating.model import BillLine, Note
from billing.domain.rating.output import plain
from billing.domain.rating.proration import NO_FUNDS, Plan, funds_of, line, new_line, shares
from common.money import round_line

ZERO = Decimal(0)
PARAMETER_NAMES = {"bod": "BOD", "tss": "TSS", "phosphorus": "phosphorus", "tkn": "TKN", "fog": "FOG"}


class PoundsCharge:
    """A per-pound charge over strength limits.

    Subclasses set ``RULE_ID``, ``DESCRIPTION`` (formatted with ``name`` and ``limit``),
    ``TABLE`` (the compiled rates' ``{parameter: (limit mg/l, rate per lb)}``), ``FUNDS``,
    ``UNRATED`` (a note for a parameter over a limit without a rate). The compiled rates
    also carry ``factor`` (lb per mg/l per million gallons) and ``unrated`` (``{parameter:
    limit}`` of the limits the tariff publishes no rate for).
    """

    RULE_ID = ""
    DESCRIPTION = "{name} over {limit} mg/l"
    UNRATED = "{name} {concentration} mg/l is over its limit of {limit} mg/l, which has no published rate"
    TABLE = ""
    FUNDS = NO_FUNDS

    def __init__(self) -> None:
        self._descriptions: dict[tuple[str, Decimal], str] = {}

    def description(self, param: str, limit: Decimal) -> str:
        key = (param, limit)
        text = self._descriptions.get(key)
        if text is None:
            name = PARAMETER_NAMES.get(param, param)
            text = self._descriptions[key] = self.DESCRIPTION.format(name=name, limit=limit)
        return text

    def unrated(self, plan: Plan, strength: Mapping[str, Decimal], notes: list[Note]) -> None:
        """A note for each parameter over a limit that has no rate in some version (e.g. FOG)."""
        seen: set[tuple[str, Decimal]] = set()
        for segment in plan.segments:
            for param, limit in segment.rates.unrated.items():
                concentration = strength.get(param)
                if concentration is None or concentration <= limit or (param, limit) in seen:
                    continue
                seen.add((param, limit))
                name = PARAMETER_NAMES.get(param, param)
                text = self.UNRATED.format(name=name, concentration=plain(concentration), limit=plain(limit))
                notes.append(Note(self.RULE_ID, text))

    def rounds_to_zero(
        self, param: str, limit: Decimal, pounds: Decimal, rate: Decimal, notes: list[Note]
    ) -> None:
        name = PARAMETER_NAMES.get(param, param)
        notes.append(
            Note(
                self.RULE_ID,
                f"{name} over {plain(limit)} mg/l: {plain(pounds)} lb x {rate} per lb rounds to 0.00",
            )
        )

    def lines(
        self,
        plan: Plan,
        strength: Mapping[str, Decimal],
        gallons: Decimal,
        out: list[BillLine],
        notes: list[Note],
    ) -> None:
        million_gal = gallons.scaleb(-6)
        single = plan.single
        if single is not None:  # one tariff version: no shares (hot path)
            factor = single.factor
            for param, (limit, rate) in getattr(single, self.TABLE).items():
                concentration = strength.get(param)
                if concentration is None or concentration <= limit:
                    continue
                pounds = (concentration - limit) * million_gal * factor
                amount = round_line(pounds * rate)
                if not amount:
                    self.rounds_to_zero(param, limit, pounds, rate, notes)
                    continue
                details: dict[str, Any] = {
                    "parameter": param,
                    "concentration_mg_l": concentration,
                    "limit_mg_l": limit,
                    "gallons": gallons,
                    "million_gallons": million_gal,
                    "pounds_factor": factor,
                    "pounds": pounds,
                    "tariff_versions": plan.tariff_versions,
                }
                if self.FUNDS:
                    details["funds"] = funds_of(amount, single, self.FUNDS)
                out.append(
                    new_line(
                        self.RULE_ID, self.description(param, limit), pounds, "lb", rate, amount, details
                    )
                )
            if single.unrated:
                self.unrated(plan, strength, notes)
            return
        params: dict[str, None] = {}
        for segment in plan.segments:
            params.update(dict.fromkeys(getattr(segment.rates, self.TABLE)))
        for param in params:
            concentration = strength.get(param)
            if concentration is not None:
                self._prorated(plan, param, concentration, gallons, million_gal, out, notes)
        self.unrated(plan, strength, notes)

    def _prorated(
        self,
        plan: Plan,
        param: str,
        concentration: Decimal,
        gallons: Decimal,
        million_gal: Decimal,
        out: list[BillLine],
        notes: list[Note],
    ) -> None:
        table = self.TABLE

        def quantity_rate(rates: Any) -> tuple[Decimal, Decimal]:
            limit_rate = getattr(rates, table).get(param)
            if limit_rate is None:
                return ZERO, ZERO
            excess = concentration - limit_rate[0]
            if excess <= 0:
                return ZERO, limit_rate[1]
            return excess * million_gal * rates.factor, limit_rate[1]

        for share in shares(plan, quantity_rate):
            rates = share.rates
            limit_rate = getattr(rates, table).get(param)
            if limit_rate is None or concentration <= limit_rate[0]:
                continue  # no rate, or no excess, under this version
            limit = limit_rate[0]
            details = {
                "parameter": param,
                "concentration_mg_l": concentration,
                "limit_mg_l": limit,
                "gallons": gallons,
                "million_gallons": million_gal,
                "pounds_factor": rates.factor,
                "pounds": share.quantity,
            }
            bl = line(self.RULE_ID, self.description(param, limit), "lb", share, plan.period_days, details)
            if bl is None:
                self.rounds_to_zero(param, limit, share.quantity, share.rate, notes)
            else:
                if self.FUNDS:
                    details["funds"] = funds_of(bl.amount, rates, self.FUNDS)
                out.append(bl)
