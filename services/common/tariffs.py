"""Effective-dated tariffs (X-EFFECTIVE): the models the domains rate with, and the book of versions.

Rate *amounts* are adopted by resolution, so they are data; rate *models* are code. The
files (`infra/tariffs/<tenant>/<effective-date>.yaml`) are read by `common.tariff_files`,
which domains never import (import-linter's pure-domains contract): this module reads no
file and imports no YAML, so a domain can take a `TariffBook` and rate with it. Every
document is validated by a pydantic model (`parse_tariff`):

- money and rates are decimal strings (a YAML float such as `45.00` unquoted is refused:
  it has already lost its exactness by the time we see it);
- every setting says whether it is a published figure or an illustrative example
  (`example: true`), so a clerk can tell which numbers are real;
- a switch for a rule that is an interpretation (PP-SEW-WINTER's winter average,
  SU-SURCHARGE) is a YAML boolean (`true`/`false`, never "yes" or 1);
- a tenant's versions are contiguous: each version's `effective_until` is the next one's
  `effective_from`, and only the newest is open-ended.

Errors name the file and the dotted field (`infra/tariffs/grafton-sewer/2025-01-01.yaml:
service_charge.value.5/8: rates must be decimal strings, got float 45.0`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    model_validator,
)

TENANTS = (
    "pleasant-prairie-sewer",
    "pleasant-prairie-stormwater",
    "grafton-sewer",
    "sullivan-sewer",
)

# Meter sizes as they are written in tariffs and on accounts (inches).
METER_SIZES = ("5/8", "3/4", "1", "1-1/2", "2", "3", "4", "6")
PARAMETERS = ("bod", "tss", "phosphorus", "tkn", "fog")


class TariffError(ValueError):
    """A tariff file or a tariff lookup is wrong. `field` is the dotted path at fault."""

    def __init__(self, message: str, *, file: str | None = None, field: str | None = None) -> None:
        self.file = file
        self.field = field
        prefix = ": ".join(p for p in (file, field) if p)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class UnknownTenant(TariffError):
    pass


class TariffNotInForce(TariffError):
    pass


def _decimal_string(value: Any) -> Decimal:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool) or not isinstance(value, str):
        raise ValueError(f"rates must be decimal strings, got {type(value).__name__} {value!r}")
    try:
        d = Decimal(value.replace(",", ""))
    except InvalidOperation:
        raise ValueError(f"not a decimal number: {value!r}") from None
    if not d.is_finite():
        raise ValueError(f"not a finite decimal: {value!r}")
    return d


Dec = Annotated[Decimal, BeforeValidator(_decimal_string)]
T = TypeVar("T")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


class Setting(_Strict, Generic[T]):
    """One tariff setting: its value, whether it is only an example, and the rule it serves."""

    value: T
    example: bool
    rule: str | None = None
    note: str | None = None


Param = Literal["bod", "tss", "phosphorus", "tkn", "fog"]
Meter = Literal["5/8", "3/4", "1", "1-1/2", "2", "3", "4", "6"]


class LateCharge(_Strict):
    percent: Dec
    minimum: Dec = Decimal("0")
    after_days: int
    once: bool
    per_month: bool = False
    example: bool
    rule: str


class MeteringSettings(_Strict):
    """Metering's settings (issue 9): validation bounds and the estimation window (X-PERIOD)."""

    read_window_days: Setting[int] = Field(
        description="days after a period's end before a missing read is estimated"
    )
    high_low_factor: Setting[Dec] = Field(
        description="use above factor x or below 1/factor x the account's history is flagged"
    )


class SamplingSettings(_Strict):
    """Sampling's settings of a sewer tenant (issue 10; every one optional, defaults in sampling)."""

    plausible_max_mg_l: Setting[dict[Param, Dec]] | None = None
    resample_deviation_factor: Setting[Dec] | None = None
    split_difference_percent: Setting[Dec] | None = None
    satellite_results_working_days: Setting[int] | None = None
    satellite_reminder_working_days: Setting[int] | None = None
    satellite_resample_request_days: Setting[int] | None = None
    closure_days: Setting[list[date]] | None = None
    annual_report_due: Setting[str] | None = None
    annual_report_reminder_days: Setting[list[int]] | None = None


class TaxRollTerms(_Strict):
    """X-TAXROLL (Wis. Stat. 66.0809(3)): the dates as month-day strings and the penalty."""

    rule: str
    example: bool
    notice_on: str = "10-15"
    arrears_before: str = "10-01"
    penalty_on: str = "11-01"
    penalty_percent: Dec = Decimal("10")
    certify_on: str = "11-16"


class BillingTerms(_Strict):
    """How bills fall due and are paid (X-DUE, X-TAXROLL, payment order); billing's section.

    ``due_days`` None means due on the first of the month after the period (GR-BILLING).
    ``payment_order``: within one bill, the kinds of entries a payment pays first (payments
    always go to the oldest bill first, X-ALLOCATION).
    """

    due_days: Setting[int] | None = None
    payment_order: Setting[list[str]]
    tax_roll: TaxRollTerms | None = None
    late_fund: Setting[str]
    chart_of_accounts: Setting[dict[str, str]] | None = None
    """The village's general-ledger codes for the journal (issue 35): ledger account
    (cash, receivable, tax_roll, interfund, charge, late_charge, penalty, adjustment,
    credit) to "code name"; what it leaves out keeps billing.domain.books' default."""


class _TariffBase(_Strict):
    tenant: str
    name: str
    effective_from: date
    effective_until: date | None = None
    status: Literal["adopted", "proposed"] = "adopted"
    """``proposed``: a rate study's draft (``sewerbill rates study``), not yet adopted by
    resolution. The production loader refuses it; ``TariffBook.with_proposed`` previews it."""
    adopted_by: str
    billing_period_months: Literal[1, 3]
    metering: MeteringSettings | None = None
    sampling: SamplingSettings | None = None
    billing_terms: BillingTerms | None = None

    @property
    def version_id(self) -> str:
        return f"{self.tenant}@{self.effective_from.isoformat()}"

    @model_validator(mode="after")
    def _dates_in_order(self) -> _TariffBase:
        if self.effective_until is not None and self.effective_until <= self.effective_from:
            raise ValueError("effective_until must be after effective_from")
        return self


class PPSurcharge(_Strict):
    category_a_limits: Setting[dict[Param, Dec]]
    rates_per_lb: Setting[dict[Param, Dec]]


class PPSewerTariff(_TariffBase):
    tenant: Literal["pleasant-prairie-sewer"]
    pounds_factor: Setting[Dec]
    service_charge: Setting[dict[str, dict[Meter, Dec]]]
    meter_size_aliases: dict[Meter, Meter] = Field(default_factory=dict)
    volume_rate_per_kgal: Setting[dict[str, Dec]]
    surcharge: PPSurcharge
    winter_months: Setting[list[int]]
    winter_average_applies: Setting[StrictBool]
    """PP-SEW-WINTER switch: the winter average is published practice, not ordinance."""
    sample_cost_per_sample: Setting[Dec]
    category_b_exit_months: Setting[int]
    max_residential_units: Setting[int]

    @property
    def zones(self) -> tuple[str, ...]:
        return tuple(self.service_charge.value)

    @model_validator(mode="after")
    def _zones_agree(self) -> PPSewerTariff:
        if set(self.service_charge.value) != set(self.volume_rate_per_kgal.value):
            raise ValueError("service_charge and volume_rate_per_kgal must list the same zones")
        return self


class StormCredit(_Strict):
    engineer_limit_percent: Setting[Dec]
    cap_percent: Setting[Dec]
    review_fee: Setting[Dec]


class PPStormwaterTariff(_TariffBase):
    tenant: Literal["pleasant-prairie-stormwater"]
    base_charge: Setting[Dec]
    eru_rate: Setting[Dec]
    impervious_cn: Setting[Dec]
    pervious_cn: Setting[Dec]
    woods_cn: Setting[Dec]
    design_storm_in: Setting[Dec]
    standard_area_sqft: Setting[Dec]
    standard_impervious_percent: Setting[Dec]
    residential_allowance_sqft: Setting[Dec]
    eru_decimal_places: Setting[int]
    project_evaluation_fee: Setting[Dec]
    credit: StormCredit
    appeal_fee: Setting[Dec]
    delinquent_after_days: Setting[int]
    penalty_percent_per_month: Setting[Dec]


class GraftonTariff(_TariffBase):
    tenant: Literal["grafton-sewer"]
    pounds_factor: Setting[Dec]
    service_charge: Setting[dict[Meter, Dec]]
    volume_rate_per_kgal: Setting[Dec]
    normal_limits: Setting[dict[Param, Dec]]
    high_strength_rates_per_lb: Setting[dict[Param, Dec]]
    unmetered_flat_charge: Setting[Dec]
    unmetered_included_kgal: Setting[Dec]
    septage_rate_per_kgal: Setting[Dec]
    replacement_fund_share: Setting[Dec]
    late_charge: LateCharge


class SullivanTariff(_TariffBase):
    tenant: Literal["sullivan-sewer"]
    pounds_factor: Setting[Dec]
    use_rate_per_kgal: Setting[Dec]
    annual_debt_retirement: Setting[Dec]
    rec_units_residential_per_dwelling: Setting[Dec]
    normal_limits: Setting[dict[Param, Dec]]
    surcharge_applies: Setting[StrictBool]
    """SU-SURCHARGE switch: the ordinance imposes no surcharge in words (an interpretation)."""
    surcharge_rates_per_lb: Setting[dict[Param, Dec]]
    bod900_threshold_mg_l: Setting[Dec]
    bod900_penalty_per_day: Setting[Dec]
    replacement_fund_share: Setting[Dec]
    treatment_portion: Setting[Dec]
    late_charge: LateCharge


Tariff = PPSewerTariff | PPStormwaterTariff | GraftonTariff | SullivanTariff
_MODELS: dict[str, type[_TariffBase]] = {
    "pleasant-prairie-sewer": PPSewerTariff,
    "pleasant-prairie-stormwater": PPStormwaterTariff,
    "grafton-sewer": GraftonTariff,
    "sullivan-sewer": SullivanTariff,
}


def _loc(loc: tuple[Any, ...]) -> str:
    # Drop pydantic's internal validator tags (e.g. 'function-before[...]') from the path.
    parts = [str(p) for p in loc if not (isinstance(p, str) and ("[" in p and "]" in p))]
    return ".".join(parts)


def parse_tariff(raw: Any, *, file: str) -> Tariff:
    """Validate one tariff document; errors name the file and the field."""
    if not isinstance(raw, dict):
        raise TariffError("a tariff file must be a mapping", file=file)
    tenant = raw.get("tenant")
    if tenant not in _MODELS:
        raise TariffError(f"unknown tenant {tenant!r}", file=file, field="tenant")
    try:
        return _MODELS[tenant].model_validate(raw)  # type: ignore[return-value]
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            msg = "required field is missing"
        raise TariffError(msg, file=file, field=_loc(err["loc"]) or None) from None


@dataclass(frozen=True)
class TariffSpan:
    """The part [start, end) of a billing period during which one tariff version is in force."""

    tariff: Tariff
    start: date
    end: date
    period_days: int

    @property
    def days(self) -> int:
        return (self.end - self.start).days

    @property
    def fraction(self) -> Decimal:
        """This version's share of the period (X-EFFECTIVE); exact, never rounded."""
        return Decimal(self.days) / Decimal(self.period_days)


class TariffBook:
    """Every version of every tenant's tariff, checked for contiguity."""

    def __init__(self, versions: dict[str, list[Tariff]]) -> None:
        self._versions = {t: sorted(v, key=lambda x: x.effective_from) for t, v in versions.items()}

    @property
    def tenants(self) -> tuple[str, ...]:
        return tuple(self._versions)

    def versions(self, tenant: str) -> list[Tariff]:
        try:
            return list(self._versions[tenant])
        except KeyError:
            raise UnknownTenant(f"unknown tenant {tenant!r}", field="tenant") from None

    def __iter__(self) -> Iterator[Tariff]:
        for vs in self._versions.values():
            yield from vs

    def with_proposed(self, proposed: Tariff) -> TariffBook:
        """This book with a proposed version (a rate study's draft) as the tenant's newest: the
        version in force before it ends the day it starts. For previews and the study's
        re-rating only; production loads no proposed version (``load_tariff_book``)."""
        versions = self.versions(proposed.tenant)
        newest = versions[-1]
        if proposed.effective_from <= newest.effective_from:
            raise TariffError(
                f"a proposed version must start after the newest version "
                f"({newest.effective_from.isoformat()}), got {proposed.effective_from.isoformat()}",
                field="effective_from",
            )
        closed = newest.model_copy(update={"effective_until": proposed.effective_from})
        book = dict(self._versions)
        book[proposed.tenant] = [
            *versions[:-1],
            closed,
            proposed.model_copy(update={"effective_until": None}),
        ]
        return TariffBook(book)

    def first_effective(self, tenant: str) -> date:
        return self.versions(tenant)[0].effective_from

    def in_force(self, tenant: str, on: date) -> Tariff:
        """The version of `tenant`'s tariff in force on `on`."""
        for t in reversed(self.versions(tenant)):
            if t.effective_from <= on and (t.effective_until is None or on < t.effective_until):
                return t
        raise TariffNotInForce(
            f"no tariff of {tenant} is in force on {on.isoformat()} "
            f"(first version {self.first_effective(tenant).isoformat()})",
            field="period.start",
        )

    def split(self, tenant: str, start: date, end: date) -> list[TariffSpan]:
        """Split the half-open period [start, end) at tariff version boundaries (X-EFFECTIVE)."""
        if end <= start:
            raise TariffError("the period must end after it starts", field="period.end")
        total = (end - start).days
        spans: list[TariffSpan] = []
        cursor = start
        while cursor < end:
            t = self.in_force(tenant, cursor)
            stop = end if t.effective_until is None else min(end, t.effective_until)
            spans.append(TariffSpan(tariff=t, start=cursor, end=stop, period_days=total))
            cursor = stop
        return spans
