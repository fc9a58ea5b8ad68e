"""What stormwater reads of billing's events, as its own input models (until billing's own
``billing.events.BillIssued`` / ``PaymentApplied`` exist; then these are replaced by imports
of that module). Fields mirror the likely contract; unknown fields are ignored, so billing
may carry more. Reconsideration windows need only these (PP-CWU-RECONSIDER).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

BILLING_SOURCE = "sewerbill.billing"


class _Input(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    occurred_at: AwareDatetime | None = None


class BillIssuedInput(_Input):
    """billing ``BillIssued``: a stormwater bill of a parcel's account."""

    tenant: str = Field(max_length=100)
    bill_id: str = Field(max_length=200)
    account_id: str = Field(max_length=200)
    parcel_id: str | None = Field(default=None, max_length=200)
    bill_date: date
    due_date: date
    total: Decimal
    period_start: date | None = None
    period_end: date | None = None


class PaymentAppliedInput(_Input):
    """billing ``PaymentApplied``: a payment applied to a bill (its date is what counts)."""

    tenant: str = Field(max_length=100)
    account_id: str = Field(max_length=200)
    bill_id: str | None = Field(default=None, max_length=200)
    paid_on: date
    amount: Decimal | None = None
