"""Events published by sampling (the contract other services import; additive changes only).

Billing keeps the strength events as a projection per account and uses them when it rates
a period (X-PERIOD: the category and concentrations in force at the end of the period):

- :class:`StrengthClassified` after every finalised result (a lab result taken in, a staff
  resample decision) and :class:`StrengthCategoryChanged` instead when the category moved
  (including the time-driven PP-SEW-CAT-B-EXIT return to A on the 24-month anniversary).
  ``effective_from`` is the date the event's category and ``basis`` apply from; for a
  period ``[start, end)`` billing uses the latest event with ``effective_from < end``.
  ``basis`` holds the concentrations (mg/l, Decimal strings) billed while the user is in
  the above-normal category (PP-SEW-SURCHARGE, GR-HIGH, SU-SURCHARGE), ``null`` in the
  normal category. ``violation_days`` counts SU-BOD900 days per billing period touched by
  the finalised result (never carried forward).
- :class:`SamplingCostCharged`: a PP-SEW-SAMPLE-COST charge billed as its own line.

Every concentration is a Decimal, serialised as a decimal string (X-MONEY's rule for
quantities: never a float).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from common.events import Event

SOURCE = "sewerbill.sampling"


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class StrengthBasis(_Part):
    """The finalised result whose concentrations billing uses (mg/l; absent: not analysed).

    ``sample_ids`` is one sample, or two when staff averaged a resample (PP-SEW-RESAMPLE).
    """

    sampled_on: date
    sample_ids: tuple[str, ...] = ()
    bod: Decimal | None = None
    tss: Decimal | None = None
    phosphorus: Decimal | None = None
    tkn: Decimal | None = None
    fog: Decimal | None = None


class CategoryPeriod(_Part):
    """One entry of the category history: the category in force from ``from_date``."""

    from_date: date
    category: str
    rule_id: str
    basis_sampled_on: date


class ExitClock(_Part):
    """PP-SEW-CAT-B-EXIT: a Category B user's 24 compliant months, running since ``started_on``.

    The user is Category A from ``returns_on`` if every sample until then is compliant; an
    exceedance stops this clock (the next event carries no clock, or a new one).
    """

    rule_id: Literal["PP-SEW-CAT-B-EXIT"] = "PP-SEW-CAT-B-EXIT"
    started_on: date
    returns_on: date
    months: int = Field(ge=1)


class Reassignment(_Part):
    """GR-REASSIGN (and Sullivan by the same reading): a change of category and its basis."""

    rule_id: str
    from_category: str | None
    to_category: str
    effective_from: date
    basis_sampled_on: date
    reason: str


class ViolationDays(_Part):
    """SU-BOD900: days in the billing period ``[period_start, period_end)`` with BOD >= 900."""

    rule_id: Literal["SU-BOD900"] = "SU-BOD900"
    period_start: date
    period_end: date
    days: int = Field(ge=0)
    dates: tuple[date, ...] = ()


class IndustrialUser(_Part):
    """SU-INDUSTRIAL determination, with the reasons recorded."""

    rule_id: Literal["SU-INDUSTRIAL"] = "SU-INDUSTRIAL"
    is_industrial: bool
    reasons: tuple[str, ...]


class StrengthClassified(Event):
    """An account's strength category after a finalised result (PP-SEW-CAT-*, GR-*, SU-*).

    Business key: tenant, account and ``trigger`` (the sample id of the finalised result,
    ``decision:<sample_id>`` for a staff resample decision, ``exit:<date>`` for the
    24-month return to Category A), so a redelivery is recognised.
    """

    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("tenant", "account_id", "trigger")

    tenant: str
    account_id: str
    trigger: str
    as_of: date
    category: str
    since: date | None
    effective_from: date
    limits_rule_id: str
    basis: StrengthBasis | None
    history: tuple[CategoryPeriod, ...] = ()
    exit_clock: ExitClock | None = None
    reassignment: Reassignment | None = None
    violation_days: tuple[ViolationDays, ...] = ()
    industrial_user: IndustrialUser | None = None


class StrengthCategoryChanged(StrengthClassified):
    """As :class:`StrengthClassified`, published instead of it when the category moved."""

    previous_category: str | None


class SamplingCostCharged(Event):
    """A billable sampling cost (PP-SEW-SAMPLE-COST), separate from the sewer service charge.

    ``kind`` ``sample`` is the tariff's per-sample cost (``quantity`` x ``rate``);
    ``lab_invoice`` passes the lab's invoice amount through (``lab_invoice_reference``).
    ``amount`` is rounded half-up to the cent once (X-MONEY).
    """

    SOURCE: ClassVar[str] = SOURCE
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("tenant", "account_id", "charge_id")

    tenant: str
    account_id: str
    charge_id: str
    rule_id: Literal["PP-SEW-SAMPLE-COST"] = "PP-SEW-SAMPLE-COST"
    kind: Literal["sample", "lab_invoice"]
    charged_on: date
    description: str
    quantity: Decimal
    rate: Decimal
    amount: Decimal
    sample_ids: tuple[str, ...] = ()
    lab_invoice_reference: str | None = None
    tariff_version: str | None = None
