"""A tenant's billing terms as plain values, read from the tariff in force (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from billing.domain.ledger import DEFAULT_ORDER
from common.tariffs import Tariff


@dataclass(frozen=True, slots=True)
class LateTerms:
    rule_id: str
    kind: str  # "late_charge" or "penalty"
    percent: Decimal
    minimum: Decimal
    first_after_days: int  # the charge falls due this many days after the bill date
    paid_within_days: int  # payments dated up to bill date + this count
    once: bool


@dataclass(frozen=True, slots=True)
class TaxRoll:
    rule_id: str
    notice_on: str
    arrears_before: str
    penalty_on: str
    penalty_percent: Decimal
    certify_on: str

    def day(self, year: int, month_day: str) -> date:
        month, day = (int(p) for p in month_day.split("-"))
        return date(year, month, day)


@dataclass(frozen=True, slots=True)
class Terms:
    tenant: str
    version_id: str
    due_days: int | None
    payment_order: tuple[str, ...]
    late_fund: str
    late: LateTerms | None
    overdue: bool  # GR-OVERDUE notice + disconnection eligibility
    delinquent: bool  # PP-CWU-DELINQUENT event
    tax_roll: TaxRoll | None


def terms_of(tariff: Tariff) -> Terms:
    bt = tariff.billing_terms
    late: LateTerms | None = None
    lc = getattr(tariff, "late_charge", None)
    if lc is not None:
        # GR-LATE / SU-LATE: "not paid within 20 days of issuance": payments dated up to
        # day 20 count; the charge falls on day 21.
        late = LateTerms(
            rule_id=lc.rule,
            kind="late_charge",
            percent=lc.percent,
            minimum=lc.minimum,
            first_after_days=lc.after_days + 1,
            paid_within_days=lc.after_days,
            once=lc.once,
        )
    delinquent_days = getattr(tariff, "delinquent_after_days", None)
    if delinquent_days is not None:
        # PP-CWU-DELINQUENT / PENALTY: unpaid 30 days after the bill date (payments dated
        # up to day 30 count); 1% on that day and on each monthly anniversary.
        late = LateTerms(
            rule_id="PP-CWU-PENALTY",
            kind="penalty",
            percent=tariff.penalty_percent_per_month.value,  # type: ignore[union-attr]
            minimum=Decimal("0"),
            first_after_days=delinquent_days.value,
            paid_within_days=delinquent_days.value,
            once=False,
        )
    tax = bt.tax_roll if bt is not None else None
    return Terms(
        tenant=tariff.tenant,
        version_id=tariff.version_id,
        due_days=bt.due_days.value
        if bt is not None and bt.due_days is not None
        else (20 if bt is None else None),
        payment_order=tuple(bt.payment_order.value) if bt is not None else DEFAULT_ORDER,
        late_fund=bt.late_fund.value if bt is not None else "om",
        late=late,
        overdue=tariff.tenant == "grafton-sewer",
        delinquent=delinquent_days is not None,
        tax_roll=TaxRoll(
            rule_id=tax.rule,
            notice_on=tax.notice_on,
            arrears_before=tax.arrears_before,
            penalty_on=tax.penalty_on,
            penalty_percent=tax.penalty_percent,
            certify_on=tax.certify_on,
        )
        if tax is not None
        else None,
    )
