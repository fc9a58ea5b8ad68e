"""Stormwater credits (PP-CWU-CREDIT) and their revocation (PP-CWU-CREDIT-REVOKE).

Lifecycle: ``submitted`` (the owner's application, with a registered professional
engineer's documentation; the review fee is charged) -> ``under_review`` -> ``approved``
(with the TSS removal percent) or ``denied``; an approved credit may be ``revoked``.

- Nonresidential parcels only (the data in force, overrides included).
- Credit percent = TSS removal percent - the Engineer's limit (tariff, example 80%), capped
  at the tariff's cap (30%). Nothing above the cap can be approved; a removal at or below
  the limit earns no credit and is denied, not approved at 0%.
- Effective from the approval date, never retroactive: the approval is dated the day it is
  decided (``today``), whatever the application's date.
- Revocation only after a written notice at least 30 days ahead: the notice is dated the
  day the revocation is decided (``today``) and the revocation date must be on or after
  ``today + 30 days``; a closer date is refused naming both dates. The notice request goes
  to the notices service (``CreditRevocationProposed``) and billing learns the revocation
  with its future date (``CreditChanged`` status ``revoked``, effective that day).
- Inspection records are kept on approved credits (periodic inspections of the practice).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Literal

from common.errors import FieldError
from stormwater.domain.parcels import ParcelState, TariffView
from stormwater.events import CreditChanged, CreditRevocationProposed, CreditStatus, FeeCharged

NOTICE_DAYS = 30
ZERO = Decimal(0)
HUNDRED = Decimal(100)
MAX_TEXT = 2_000


class CreditRefused(FieldError):
    """A credit action the rules do not allow (names the field; HTTP 409/400)."""


class CreditConflict(CreditRefused):
    """The credit is not in a state that allows the action (HTTP 409)."""


@dataclass(frozen=True)
class Documentation:
    """The registered professional engineer's documentation of the practice."""

    engineer_name: str
    engineer_license: str
    document_ref: str
    practice: str

    def __post_init__(self) -> None:
        for name in ("engineer_name", "engineer_license", "document_ref", "practice"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise CreditRefused(f"documentation.{name}", "is required (PP-CWU-CREDIT)")
            if len(value) > MAX_TEXT:
                raise CreditRefused(f"documentation.{name}", f"longer than {MAX_TEXT} characters")


@dataclass(frozen=True)
class Inspection:
    inspected_on: date
    inspector: str
    result: Literal["satisfactory", "deficient"]
    notes: str = ""


@dataclass(frozen=True)
class Credit:
    tenant: str
    credit_id: str
    parcel_id: str
    owner_name: str
    status: CreditStatus
    submitted_on: date
    documentation: Documentation
    review_fee: Decimal
    version: int = 1
    tss_removal_percent: Decimal | None = None
    credit_percent: Decimal = ZERO
    engineer_limit_percent: Decimal | None = None
    cap_percent: Decimal | None = None
    effective_from: date | None = None
    decided_on: date | None = None
    reason: str = ""
    revocation_notice_on: date | None = None
    revocation_date: date | None = None
    inspections: tuple[Inspection, ...] = field(default=())

    def percent_on(self, on: date) -> Decimal:
        """The credit percent in force on ``on`` (0 before approval and from revocation)."""
        if self.effective_from is None or on < self.effective_from:
            return ZERO
        if self.revocation_date is not None and on >= self.revocation_date:
            return ZERO
        return self.credit_percent


@dataclass(frozen=True)
class CreditStep:
    """A credit's new version and the events that say what changed."""

    credit: Credit
    changed: CreditChanged
    fee: FeeCharged | None = None
    notice: CreditRevocationProposed | None = None


def credit_id_for(tenant: str, parcel_id: str, documentation: Documentation, submitted_on: date) -> str:
    """The same application filed twice the same day is the same credit (idempotent)."""
    text = "|".join((tenant, parcel_id, documentation.document_ref, submitted_on.isoformat()))
    return "CR-" + hashlib.sha256(text.encode()).hexdigest()[:12]


def _changed(credit: Credit, now: datetime, effective_from: date) -> CreditChanged:
    return CreditChanged(
        occurred_at=now,
        tenant=credit.tenant,
        parcel_id=credit.parcel_id,
        credit_id=credit.credit_id,
        status=credit.status,
        effective_from=effective_from,
        credit_percent=credit.credit_percent if credit.status == "approved" else ZERO,
        tss_removal_percent=credit.tss_removal_percent,
        engineer_limit_percent=credit.engineer_limit_percent,
        cap_percent=credit.cap_percent,
        reason=credit.reason,
        rule_id="PP-CWU-CREDIT-REVOKE" if credit.status == "revoked" else "PP-CWU-CREDIT",
    )


def apply_for_credit(
    parcel: ParcelState | None,
    documentation: Documentation,
    *,
    tenant: str,
    parcel_id: str,
    tariff: TariffView,
    open_credits: list[Credit],
    now: datetime,
) -> CreditStep:
    """PP-CWU-CREDIT: an application with the engineer's documentation and the review fee."""
    if parcel is None:
        raise CreditRefused("parcel_id", f"no parcel {parcel_id} is known to the stormwater utility")
    use = parcel.data.use
    if use != "nonresidential":
        raise CreditRefused(
            "parcel.use", f"credits are for nonresidential parcels only; {parcel_id} is {use}"
        )
    today = now.date()
    credit_id = credit_id_for(tenant, parcel_id, documentation, today)
    pending = [
        c for c in open_credits if c.status in ("submitted", "under_review") and c.credit_id != credit_id
    ]
    if pending:
        raise CreditConflict("parcel_id", f"credit {pending[0].credit_id} is already {pending[0].status}")
    credit = Credit(
        tenant=tenant,
        credit_id=credit_id,
        parcel_id=parcel_id,
        owner_name=parcel.owner_name,
        status="submitted",
        submitted_on=today,
        documentation=documentation,
        review_fee=tariff.credit_review_fee,
    )
    fee = FeeCharged(
        occurred_at=now,
        tenant=tenant,
        fee_id=f"CRF-{credit_id}",
        parcel_id=parcel_id,
        kind="credit_review",
        rule_id="PP-CWU-CREDIT",
        amount=tariff.credit_review_fee,
        charged_on=today,
        tariff_version=tariff.version_id,
        description="Stormwater credit application review fee",
        details={"credit_id": credit_id, "document_ref": documentation.document_ref},
    )
    return CreditStep(credit=credit, changed=_changed(credit, now, today), fee=fee)


def _require(credit: Credit, *allowed: CreditStatus) -> None:
    if credit.status not in allowed:
        raise CreditConflict(
            "status", f"credit {credit.credit_id} is {credit.status}; this needs {' or '.join(allowed)}"
        )


def start_review(credit: Credit, *, now: datetime) -> CreditStep:
    _require(credit, "submitted")
    new = replace(credit, status="under_review", version=credit.version + 1)
    return CreditStep(credit=new, changed=_changed(new, now, now.date()))


def credit_percent_for(tss_removal_percent: Decimal, tariff: TariffView) -> Decimal:
    """PP-CWU-CREDIT: removal over the Engineer's limit, capped (92% with limit 80 -> 12%)."""
    over = tss_removal_percent - tariff.credit_engineer_limit_percent
    return min(max(over, ZERO), tariff.credit_cap_percent)


def approve(
    credit: Credit, *, tss_removal_percent: Decimal, reason: str, tariff: TariffView, now: datetime
) -> CreditStep:
    """Approved from today on (never retroactive, PP-CWU-CREDIT)."""
    _require(credit, "under_review")
    if not ZERO <= tss_removal_percent <= HUNDRED:
        raise CreditRefused("tss_removal_percent", f"must be between 0 and 100, got {tss_removal_percent}")
    percent = credit_percent_for(tss_removal_percent, tariff)
    if percent <= 0:
        raise CreditRefused(
            "tss_removal_percent",
            f"{tss_removal_percent}% TSS removal does not exceed the Engineer's limit of "
            f"{tariff.credit_engineer_limit_percent}%: no credit is earned; deny the application",
        )
    today = now.date()
    new = replace(
        credit,
        status="approved",
        version=credit.version + 1,
        tss_removal_percent=tss_removal_percent,
        credit_percent=percent,
        engineer_limit_percent=tariff.credit_engineer_limit_percent,
        cap_percent=tariff.credit_cap_percent,
        effective_from=today,
        decided_on=today,
        reason=reason,
    )
    return CreditStep(credit=new, changed=_changed(new, now, today))


def deny(credit: Credit, *, reason: str, now: datetime) -> CreditStep:
    _require(credit, "submitted", "under_review")
    if not reason.strip():
        raise CreditRefused("reason", "a denial states its reason")
    today = now.date()
    new = replace(credit, status="denied", version=credit.version + 1, decided_on=today, reason=reason)
    return CreditStep(credit=new, changed=_changed(new, now, today))


def record_inspection(credit: Credit, inspection: Inspection) -> Credit:
    _require(credit, "approved")
    if not inspection.inspector.strip():
        raise CreditRefused("inspector", "is required")
    return replace(credit, version=credit.version + 1, inspections=(*credit.inspections, inspection))


def earliest_revocation(notice_on: date) -> date:
    return notice_on + timedelta(days=NOTICE_DAYS)


def revoke(credit: Credit, *, revocation_date: date, reason: str, now: datetime) -> CreditStep:
    """PP-CWU-CREDIT-REVOKE: written notice today, revocation at least 30 days later."""
    _require(credit, "approved")
    if not reason.strip():
        raise CreditRefused("reason", "a revocation states the material change in its basis")
    notice_on = now.date()
    earliest = earliest_revocation(notice_on)
    if revocation_date < earliest:
        days = (revocation_date - notice_on).days
        raise CreditRefused(
            "revocation_date",
            f"{revocation_date.isoformat()} is {days} days after the written notice of "
            f"{notice_on.isoformat()}; a credit may be revoked only after at least {NOTICE_DAYS} days' "
            f"notice, on or after {earliest.isoformat()} (PP-CWU-CREDIT-REVOKE)",
        )
    new = replace(
        credit,
        status="revoked",
        version=credit.version + 1,
        reason=reason,
        revocation_notice_on=notice_on,
        revocation_date=revocation_date,
    )
    notice = CreditRevocationProposed(
        occurred_at=now,
        tenant=credit.tenant,
        parcel_id=credit.parcel_id,
        credit_id=credit.credit_id,
        owner_name=credit.owner_name,
        notice_date=notice_on,
        revocation_date=revocation_date,
        reason=reason,
    )
    return CreditStep(credit=new, changed=_changed(new, now, revocation_date), notice=notice)
