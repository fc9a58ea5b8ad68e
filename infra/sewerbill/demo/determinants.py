"""Twelve months of billing determinants of the demo utility (issue 35's rate study), as a
determinants export: one line per account and billing period, ``{"account_id", "class",
"scenario"}``, where ``scenario`` is a CONTRACTS.md ``preview`` document.

Built from the generator's own choices (``sewerbill.demo.generator.Plan``: the accounts,
their use per period, their lab results and parcels), without running the stack: the same
year ``sewerbill local demo`` bills. Strength is that of the account's latest sample before
the period's end (X-PERIOD, GR-REASSIGN); a Sullivan violation day is a sampled day in the
period with BOD at or above the threshold (SU-BOD900); a period's total RECs are the REC
units of the accounts active in it (SU-REC).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from typing import Any

from common.dates import add_months
from common.tariffs import PPSewerTariff, SullivanTariff, TariffBook
from sewerbill.demo.generator import GR, PP, PPW, SU, Plan, _parcel, _samples

# The demo's accounts by the user classes of the rate study's report.
CLASSES = {
    GR: {
        "residential": "residential",
        "unmetered": "residential",
        "commercial": "commercial",
        "unmetered_commercial": "commercial",
        "septage_hauler": "commercial",
        "industrial": "industrial",
    },
    SU: {
        "residential": "residential",
        "duplex": "residential",
        "commercial": "commercial",
        "industrial": "industrial",
    },
    PPW: {"residential": "residential", "farmstead": "residential", "vacant": "nonresidential"},
    PP: {
        "residential": "residential",
        "residential_lm": "residential",
        "multifamily": "residential",
        "apartments": "nonresidential",
        "commercial": "nonresidential",
        "industrial": "industrial",
        "satellite": "satellite",
    },
}
STRENGTH_KEYS = {
    GR: ("bod", "tss", "phosphorus", "tkn"),
    SU: ("bod", "tss", "phosphorus"),
    PP: ("bod", "tss", "phosphorus", "fog"),
}


def demo_determinants(
    tenant: str, book: TariffBook, *, size: int = 300, seed: int = 1, start: date, months: int = 12
) -> Iterator[dict[str, Any]]:
    """The demo's determinants export of ``tenant`` for ``months`` from ``start``."""
    plan = Plan(size, seed, start, months, book)
    samples = [s for s in _samples(plan) if s["tenant"] == tenant]
    for s, e in plan.periods[tenant]:
        accounts = [plan.account(tenant, i) for i in plan.account_ids(tenant)]
        active = [a for a in accounts if a.active_in(s, e)]
        total_recs = _total_recs(active, book.in_force(tenant, s)) if tenant == SU else None
        for a in active:
            user_class = CLASSES[tenant].get(a.kind, a.klass)
            period = {"start": s.isoformat(), "end": e.isoformat()}
            if tenant == PPW:
                row = _parcel(plan, a.index)
                parcel = {"use": row[3], "area_sqft": row[4], "impervious_sqft": row[5]}
                if row[6]:
                    parcel["woods_sqft"] = row[6]
                if row[7]:
                    parcel["excluded_sqft"] = row[7]
                scenario: dict[str, Any] = {"tenant": tenant, "period": period, "parcel": parcel}
                yield {"account_id": a.account_id, "class": user_class, "scenario": scenario}
                continue
            account: dict[str, Any] = {"class": a.klass}
            if a.meter_size is not None:
                account["meter_size"] = a.meter_size
            scenario = {"tenant": tenant, "period": period, "account": account}
            served = (max(s, a.opened_on), min(e, a.closed_on or e))
            if a.metered:
                scenario["water_gallons"] = str(plan.gallons(a, *served))
            elif tenant == GR:
                scenario["estimated_gallons"] = str(a.estimated_gallons or 0)
            if tenant == PP:
                _pp_fields(plan, a, s, e, samples, scenario, book)
                yield {"account_id": a.account_id, "class": user_class, "scenario": scenario}
                continue
            strength, violation_days = _strength(samples, a.account_id, s, e, tenant, book)
            if strength and a.metered:
                scenario["strength"] = strength
            if tenant == SU:
                account["dwelling_units"] = a.dwelling_units
                if a.rec_units is not None:
                    account["rec_units"] = str(a.rec_units)
                scenario["total_recs"] = str(total_recs)
                if violation_days:
                    scenario["bod900_violation_days"] = violation_days
            yield {"account_id": a.account_id, "class": user_class, "scenario": scenario}


def _total_recs(active: list[Any], tariff: Any) -> Decimal:
    assert isinstance(tariff, SullivanTariff)
    per_dwelling = tariff.rec_units_residential_per_dwelling.value
    return sum(
        (a.rec_units if a.rec_units is not None else a.dwelling_units * per_dwelling for a in active),
        Decimal(0),
    )


def _strength(
    samples: list[dict[str, Any]], account_id: str, start: date, end: date, tenant: str, book: TariffBook
) -> tuple[dict[str, str], int]:
    mine = [x for x in samples if x["account_id"] == account_id and x["collected_on"] < end]
    if not mine:
        return {}, 0
    latest = max(mine, key=lambda x: x["collected_on"])
    strength = {k: v for k, v in latest["values"].items() if k in STRENGTH_KEYS[tenant]}
    days = 0
    if tenant == SU:
        tariff = book.in_force(tenant, start)
        assert isinstance(tariff, SullivanTariff)
        threshold = tariff.bod900_threshold_mg_l.value
        days = len(
            {
                x["collected_on"]
                for x in mine
                if x["collected_on"] >= start and Decimal(x["values"].get("bod", "0")) >= threshold
            }
        )
    return strength, days


def _pp_fields(
    plan: Plan,
    a: Any,
    start: date,
    end: date,
    samples: list[dict[str, Any]],
    scenario: dict[str, Any],
    book: TariffBook,
) -> None:
    """Pleasant Prairie sewer: zone and dwellings, the winter average of the most recent
    complete January-March the account was open (PP-SEW-WINTER), the samples collected in
    the period (PP-SEW-SAMPLE-COST) and, while the account is in Category B, its basis: the
    most recent exceeding result (PP-SEW-SURCHARGE, PP-SEW-CAT-B-EXIT)."""
    tariff = book.in_force(PP, start)
    assert isinstance(tariff, PPSewerTariff)
    account = scenario["account"]
    account["zone"] = a.zone
    if a.dwelling_units != 1:
        account["dwelling_units"] = a.dwelling_units
    if a.klass == "residential":
        winter_year = start.year if start.month > 3 else start.year - 1
        winter = date(winter_year, 1, 1)
        if a.opened_on <= winter:
            average = Decimal(plan.gallons(a, winter, date(winter_year, 4, 1))) / 3
            scenario["winter_average_gallons"] = str(average.quantize(Decimal("0.0001")))
    mine = sorted((x for x in samples if x["account_id"] == a.account_id), key=lambda x: x["collected_on"])
    collected = [x for x in mine if start <= x["collected_on"] < end]
    if collected:
        scenario["samples_collected"] = len(collected)
    limits = tariff.surcharge.category_a_limits.value
    exceeding = [
        x for x in mine if x["collected_on"] < end and any(
            Decimal(v) > limits[k] for k, v in x["values"].items() if k in limits
        )
    ]  # fmt: skip
    if not exceeding or a.klass == "residential":
        return
    basis = exceeding[-1]
    after = [x for x in mine if x["collected_on"] > basis["collected_on"]]
    exit_months = tariff.category_b_exit_months.value
    if after and add_months(after[0]["collected_on"], exit_months) < end:
        return  # back in Category A by the period's end
    scenario["strength"] = {k: v for k, v in basis["values"].items() if k in STRENGTH_KEYS[PP]}
