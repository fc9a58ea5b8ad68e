"""What the rating engine takes in and gives back (X-MONEY, STYLE.md 9).

The input model is a set of frozen dataclasses, independent of JSON: ``scenario.py``
builds it from the CONTRACTS.md preview document, the billing service from its own
records. The output is a ``RatedBill`` of ``BillLine`` s, each rounded once; the total is
the sum of the rounded lines.

Line and bill are ``NamedTuple`` s on purpose: they are immutable and are the cheapest
records Python builds, which matters on the rating hot path (>= 50,000 bills/s).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any, Literal, NamedTuple

ZERO = Decimal(0)

AccountClass = Literal["residential", "nonresidential"]
ParcelUse = Literal["residential", "nonresidential", "agricultural", "right_of_way"]


@dataclass(frozen=True, slots=True)
class Account:
    """A sewer account as rating sees it.

    ``meter_size`` None means unmetered (GR-UNMETERED, Grafton only). ``zone`` is the
    Pleasant Prairie rate zone (``PP`` or ``LM``). ``rec_units`` None means, for a
    residential account, dwelling units x the tariff's units per dwelling (SU-REC); a
    nonresidential Sullivan account must have its REC units set (no default).
    """

    account_class: AccountClass
    zone: str | None = None
    meter_size: str | None = None
    dwelling_units: int = 1
    rec_units: Decimal | None = None


@dataclass(frozen=True, slots=True)
class ParcelPart:
    """The parcel as it stood for ``days`` consecutive days of the period (X-PERIOD).

    An ERU determination or a credit that takes effect inside the period cuts it into parts,
    oldest first; each charge of a part is its share ``days / period_days`` of the period's
    charge at the part's values, its own bill line (rounded on its own, like X-EFFECTIVE).
    ``effective_from`` is the part's first day; ``source_event_id`` the determination's event.
    """

    days: int
    use: ParcelUse
    eru: Decimal
    credit_percent: Decimal = ZERO
    eru_details: Mapping[str, Any] = field(default_factory=dict)
    effective_from: date | None = None
    source_event_id: str = ""

    @property
    def exempt(self) -> bool:
        return self.use in ("agricultural", "right_of_way")


@dataclass(frozen=True, slots=True)
class ParcelCharge:
    """A stormwater parcel with its ERU already determined by the stormwater service.

    Billing never computes ERUs: ``eru`` (rounded per PP-CWU-ERU) and ``eru_details`` (the
    determination's derivation, shown on the ERU line) come from the stormwater domain's
    contract. ``credit_percent`` is an approved PP-CWU-CREDIT percent. These are the values
    in force at the end of the period; ``parts`` (two or more, their days adding up to the
    period's) is set when an ERU or a credit changed inside the period (X-PERIOD: prorated
    by days), and then the rater bills each part.
    """

    use: ParcelUse
    eru: Decimal
    credit_percent: Decimal = ZERO
    eru_details: Mapping[str, Any] = field(default_factory=dict)
    parts: tuple[ParcelPart, ...] = ()

    @property
    def exempt(self) -> bool:
        """PP-CWU-EXEMPT: agricultural land and public right-of-way."""
        return self.use in ("agricultural", "right_of_way")


@dataclass(frozen=True, slots=True)
class RatingInput:
    """One account (or parcel) for one billing period ``[period_start, period_end)``.

    ``strength`` maps parameter (``bod``, ``tss``, ``phosphorus``, ``tkn``, ``fog``) to the
    concentration in mg/l for the period; absent parameters are normal strength.
    ``winter_average_gallons`` None means no winter history (PP-SEW-WINTER bills metered use).
    """

    tenant: str
    period_start: date
    period_end: date
    account: Account | None = None
    water_gallons: Decimal | None = None
    winter_average_gallons: Decimal | None = None
    estimated_gallons: Decimal = ZERO
    strength: Mapping[str, Decimal] = field(default_factory=dict)
    bod900_violation_days: int = 0
    samples_collected: int = 0
    total_recs: Decimal | None = None
    parcel: ParcelCharge | None = None


class BillLine(NamedTuple):
    """One charge of a bill, traced to its rule (STYLE.md 9).

    ``amount`` is rounded half-up to the cent once (``common.money.round_line``). It is
    ``quantity x rate`` unless the line says otherwise: a prorated share (X-EFFECTIVE) is
    ``quantity x rate x days / period_days``, with ``days``, ``period_days`` and the
    ``factor`` ("16/30") in ``details`` and the days in the description; a credit held to
    the cap (PP-CWU-CREDIT) carries ``held_to_cap`` and says so. ``details`` holds plain Decimals, ints,
    strings, tuples and dicts: stringified only at output.
    """

    rule_id: str
    description: str
    quantity: Decimal
    unit: str
    rate: Decimal
    amount: Decimal
    details: Mapping[str, Any]


class Note(NamedTuple):
    """A rule that applied without a charge (CONTRACTS.md ``notes``): an exempt parcel, an
    exceedance with no published rate, a credit held to the cap. A bill of 0.00 says why."""

    rule_id: str
    text: str


class RatedBill(NamedTuple):
    """A rated bill: its lines, their total (the sum of the rounded line amounts) and the
    notes of rules that applied without a charge."""

    tenant: str
    period_start: date
    period_end: date
    tariff_versions: tuple[str, ...]
    lines: tuple[BillLine, ...]
    total: Decimal
    notes: tuple[Note, ...] = ()

    @property
    def period(self) -> tuple[date, date]:
        return (self.period_start, self.period_end)
