"""Grafton's septage haulers (pure): GR-SEPTAGE-PERMIT and GR-SEPTAGE-CHARGE.

A hauler needs a permit naming the hauler, its address and every disposal unit (make,
model and licence number) with liability insurance of at least $100,000 on file. A
disposal is charged only when its unit is on a permit; anything else is refused, never
charged (RULES.md: "Disposal without a valid permit is refused").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from billing.domain.rating import rate_septage
from billing.domain.rating.output import line_to_contract
from common.errors import PermanentError
from common.tariffs import GraftonTariff

TENANT = "grafton-sewer"
PERMIT_RULE = "GR-SEPTAGE-PERMIT"
CHARGE_RULE = "GR-SEPTAGE-CHARGE"
MIN_INSURANCE = Decimal("100000.00")


class SeptageRefused(PermanentError):
    """A permit or disposal the rules refuse; the message starts with the field at fault."""


@dataclass(frozen=True, slots=True)
class Unit:
    make: str
    model: str
    licence_number: str


@dataclass(frozen=True, slots=True)
class Permit:
    permit_id: str
    name: str
    address: str
    units: tuple[Unit, ...]
    insurance_amount: Decimal
    account_id: str | None = None  # the hauler's billing account, where it has one

    def to_json(self) -> dict[str, Any]:
        return {
            "permit_id": self.permit_id,
            "name": self.name,
            "address": self.address,
            "units": [
                {"make": u.make, "model": u.model, "licence_number": u.licence_number} for u in self.units
            ],
            "insurance_amount": str(self.insurance_amount),
            "account_id": self.account_id,
            "rule_id": PERMIT_RULE,
        }


def check_permit(permit: Permit) -> Permit:
    """GR-SEPTAGE-PERMIT: refused without a name, an address, at least one unit, each unit's
    make, model and licence number, or insurance of at least $100,000."""
    for field_name in ("name", "address"):
        if not str(getattr(permit, field_name)).strip():
            raise SeptageRefused(f"{field_name}: is required ({PERMIT_RULE})")
    if not permit.units:
        raise SeptageRefused(f"units: at least one disposal unit is required ({PERMIT_RULE})")
    seen: set[str] = set()
    for i, unit in enumerate(permit.units):
        for field_name in ("make", "model", "licence_number"):
            if not str(getattr(unit, field_name)).strip():
                raise SeptageRefused(f"units[{i}].{field_name}: is required ({PERMIT_RULE})")
        if unit.licence_number in seen:
            raise SeptageRefused(f"units[{i}].licence_number: {unit.licence_number!r} is listed twice")
        seen.add(unit.licence_number)
    if permit.insurance_amount < MIN_INSURANCE:
        raise SeptageRefused(
            f"insurance_amount: {permit.insurance_amount} is below the $100,000.00 "
            f"liability insurance {PERMIT_RULE} requires"
        )
    return permit


def permit_of(values: Mapping[str, Any]) -> Permit:
    return Permit(
        permit_id=str(values["permit_id"]),
        name=str(values["name"]),
        address=str(values["address"]),
        units=tuple(
            Unit(str(u["make"]), str(u["model"]), str(u["licence_number"])) for u in values.get("units") or ()
        ),
        insurance_amount=Decimal(str(values["insurance_amount"])),
        account_id=values.get("account_id") or None,
    )


@dataclass(frozen=True, slots=True)
class Disposal:
    reference: str
    permit_id: str
    licence_number: str
    gallons: Decimal
    disposed_on: date


def charge_disposal(disposal: Disposal, permit: Permit | None, tariff: GraftonTariff) -> dict[str, Any]:
    """The GR-SEPTAGE-CHARGE line of a permitted disposal (rule, quantity, rate, amount and
    derivation); refused for an unknown permit or a unit the permit does not list."""
    if permit is None:
        raise SeptageRefused(f"permit_id: no septage hauler permit {disposal.permit_id!r} ({PERMIT_RULE})")
    if disposal.licence_number not in {u.licence_number for u in permit.units}:
        raise SeptageRefused(
            f"licence_number: unit {disposal.licence_number!r} is not on permit {permit.permit_id} "
            f"({PERMIT_RULE})"
        )
    line = rate_septage(disposal.gallons, tariff)
    if line is None:
        raise SeptageRefused("gallons: a disposal of zero gallons has nothing to charge")
    return line_to_contract(line)
