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
    funds: dict[str, Decimal] = {}  # the amount by fund as billing posts it (empty: not carried)


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
    parcel_id: str | None = None  # the parcel a stormwater bill charges (PP-CWU-ERU)
    impervious_sqft: Decimal | None = None  # the parcel's impervious area, where carried

    @property
    def printed_number(self) -> str:
        return self.number or self.bill_id

    @property
    def credit(self) -> bool:
        """The account is in credit after this bill: nothing is due."""
        return self.amount_due < 0

    def usage_last_13(self) -> tuple[UsagePoint, ...]:
        return tuple(sorted(self.usage, key=lambda u: u.period_start)[-13:])

    @property
    def sections(self) -> tuple[BillDocument, ...]:
        """The bills this document carries: itself (a combined document carries several)."""
        return (self,)

    def funds(self) -> dict[str, Decimal]:
        """The bill's charges by fund (GR-FUNDS, X-FUNDS), summed over the lines that carry
        their funds; a line that carries none counts in no fund (never guessed here)."""
        totals: dict[str, Decimal] = {}
        for line in self.lines:
            for fund, amount in line.funds.items():
                totals[fund] = totals.get(fund, Decimal(0)) + amount
        return dict(sorted(totals.items()))


class CombinedBillDocument(BaseModel):
    """PP-CWU-BILLING: one document for a Pleasant Prairie customer's sewer and stormwater
    bills of one period. Each section is one utility's bill exactly as issued (its own
    number, lines, totals, due date and funds); nothing is netted between them: a credit on
    one account pays nothing of the other (each utility keeps its own ledger and funds), so
    the amount to remit adds only the sections that have an amount due."""

    model_config = ConfigDict(frozen=True)

    sections: tuple[BillDocument, ...]  # sewer first, then stormwater (see combined.ordered)
    customer_name: str
    service_address: str
    mailing_lines: tuple[str, ...]
    zip: str

    @property
    def first(self) -> BillDocument:
        return self.sections[0]

    @property
    def tenant(self) -> str:
        return self.first.tenant

    @property
    def account_id(self) -> str:
        return self.first.account_id

    @property
    def bill_id(self) -> str:
        return self.first.bill_id

    @property
    def period_start(self) -> date:
        return self.first.period_start

    @property
    def period_end(self) -> date:
        return self.first.period_end

    @property
    def printed_number(self) -> str:
        return " + ".join(s.printed_number for s in self.sections)

    @property
    def amount_due(self) -> Decimal:
        """What the customer remits: the sum of the sections' amounts due, a credit counting
        as nothing due (it stays on its own account)."""
        return sum((max(s.amount_due, Decimal(0)) for s in self.sections), Decimal(0))

    @property
    def due_date(self) -> date:
        """The earliest due date of a section with an amount due (each is printed too)."""
        owing = [s.due_date for s in self.sections if s.amount_due > 0]
        return min(owing or [s.due_date for s in self.sections])

    @property
    def annual_notice(self) -> str | None:
        return None  # SU-ANNUAL-NOTICE is Sullivan's; a combined bill is Pleasant Prairie's
