"""The bill document a customer receives (N-BILL), as data: pure, no rendering.

Built from billing's ``BillIssued`` (event-carried state), rendered by
``notices.rendering`` into the PDF and the email. Money fields are Decimals already rounded
by billing (X-MONEY); the document never recomputes a charge, so what the customer reads
is what the ledger holds.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from pydantic import BaseModel, ConfigDict


class BillLine(BaseModel):
    model_config = ConfigDict(frozen=True)

    rule_id: str
    description: str
    quantity: Decimal | None = None
    unit: str = ""
    rate: Decimal | None = None
    amount: Decimal


class MeterRead(BaseModel):
    """One meter's reads behind the bill (billing's ``IssuedRead``): previous and present
    register readings with their dates where billing has them, the consumption and its
    quality (an estimate is marked on the bill)."""

    model_config = ConfigDict(frozen=True)

    meter_id: str | None = None
    previous_read_on: date | None = None
    previous_reading: str | None = None
    present_read_on: date | None = None
    present_reading: str | None = None
    quality: str = "actual"  # actual, estimated, prorated, customer
    consumption_gal: Decimal

    @property
    def estimated(self) -> bool:
        return self.quality == "estimated"


class UsagePoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    period_start: date
    volume_gal: Decimal


class BillDocument(BaseModel):
    model_config = ConfigDict(frozen=True)

    tenant: str
    account_id: str
    bill_id: str  # billing's id of the bill (the portal's routes use it)
    period_start: date
    period_end: date
    bill_date: date
    due_date: date
    customer_name: str
    service_address: str
    mailing_lines: tuple[str, ...]
    zip: str
    lines: tuple[BillLine, ...]
    total: Decimal
    previous_balance: Decimal = Decimal("0")
    payments_since: Decimal = Decimal("0")
    amount_due: Decimal
    reads: tuple[MeterRead, ...] = ()
    usage: tuple[UsagePoint, ...] = ()  # up to the last 13 periods, oldest first
    estimated: bool = False
    annual_notice: str | None = None  # SU-ANNUAL-NOTICE text, once a year on a regular bill
    number: str = ""  # the bill number printed on it (billing's bill_number), else bill_id

    @property
    def printed_number(self) -> str:
        return self.number or self.bill_id

    @property
    def credit(self) -> bool:
        """The account is in credit after this bill: nothing is due."""
        return self.amount_due < 0

    def usage_last_13(self) -> tuple[UsagePoint, ...]:
        return tuple(sorted(self.usage, key=lambda u: u.period_start)[-13:])
