"""Events published by billing (the contract other services import; additive changes only).

Money is a decimal string with two places ("12.30"), never a float (X-MONEY). Every event
names its business key; consumers (notices, the portal) are idempotent by it.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from common.events import Event

SOURCE = "sewerbill.billing"


class BillingCycleStarted(Event):
    """A tenant's billing cycle for the half-open period [period_start, period_end) began."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "period_start", "period_end")

    tenant: str
    period_start: date
    period_end: date
    period_months: int = Field(ge=1)
    scheduled_time: AwareDatetime


class Party(BaseModel):
    """A person a notice goes to (bill recipient, owner or occupant)."""

    model_config = ConfigDict(frozen=True)

    name: str
    address: str
    email: str | None = None
    email_opt_in: bool = False


class IssuedLine(BaseModel):
    """One line of an issued bill as the bill document shows it (derivation stays in billing)."""

    model_config = ConfigDict(frozen=True)

    rule_id: str
    description: str
    quantity: str
    unit: str
    rate: str
    amount: Decimal
    # The line's amount by fund (GR-FUNDS, SU-FUNDS, X-FUNDS), as the ledger posts it; empty
    # in details from before it was carried (additive). The bill document prints it, and the
    # combined Pleasant Prairie bill keeps each utility's funds apart with it.
    funds: dict[str, Decimal] = Field(default_factory=dict, max_length=8)


class IssuedRead(BaseModel):
    """The consumption behind a bill and, where billing has them, the meter reads that bound
    it (printed on the bill with estimates marked).

    Billing keeps metering's consumption (volume, quality) for each account and period;
    the register readings and their meter are carried when billing's consumption record
    holds metering's ``reads_used`` (else ``None``: the bill shows the consumption and its
    quality, and says the reads are not available).
    """

    model_config = ConfigDict(frozen=True)

    meter_id: str | None = None
    previous_read_on: date | None = None
    previous_reading: str | None = None
    present_read_on: date | None = None
    present_reading: str | None = None
    quality: str = "actual"  # metering's quality: actual, estimated, prorated, customer, ...
    estimated: bool = False
    consumption_gal: Decimal


class BillIssued(Event):
    """A bill was issued (X-IMMUTABLE): the notices service sends it (N-BILL).

    ``amount_due`` = ``previous_balance`` + ``total`` - ``payments_since``; ``estimated``
    is true when a read behind the bill was estimated (marked on the bill).

    schema_version 2 (issue 13): ``reads`` is new (additive; empty for a bill without
    metered consumption, and in version 1 details, which still parse); ``service_address``
    (the premise served, printed on the bill) is additive too: None in earlier details.
    Each line's ``funds`` (issue 12, additive, same version: empty in earlier details) lets
    notices print each utility's funds apart on the combined Pleasant Prairie bill.
    """

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "account_id", "period_start")

    schema_version: int = 2

    tenant: str
    account_id: str
    bill_id: str
    bill_number: str
    period_start: date
    period_end: date
    bill_date: date
    due_date: date
    lines: tuple[IssuedLine, ...]
    total: Decimal
    previous_balance: Decimal
    payments_since: Decimal
    amount_due: Decimal
    estimated: bool = False
    recipient: Party
    owner: Party | None = None
    parcel_id: str | None = None
    service_address: str | None = Field(default=None, max_length=500)
    reads: tuple[IssuedRead, ...] = Field(default=(), max_length=16)


# The most bills one ``BillsIssued`` carries; the publisher also keeps each chunk's entry
# under EventBridge's 256 KB (a bill's detail is about 1.2 KB, so a chunk holds about 200).
BILLS_PER_CHUNK_MAX = 1000


class BillsIssued(Event):
    """A chunk of issued bills of one tenant, in the order they were written: each is the
    ``BillIssued`` it would be alone (issue 7: bulk work goes in batches, and so do its
    events; a 10,000-account cycle is about 60 entries, not 10,000, on the bus and on each
    consumer's queue).

    The billing table's stream publishes it (``billing.adapters.bill_outbox``): the bill
    items of a stream batch, packed in order into entries of at most 256 KB. Consumers
    handle each bill as they handle a ``BillIssued`` (idempotent by its own business key):
    a chunk delivered twice, or two chunks sharing a bill after a retried batch is packed
    anew, change nothing. Business key: the tenant and the chunk's first and last bill.
    """

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "first_bill_id", "last_bill_id")

    tenant: str
    first_bill_id: str
    last_bill_id: str
    bills: tuple[BillIssued, ...] = Field(min_length=1, max_length=BILLS_PER_CHUNK_MAX)

    @model_validator(mode="after")
    def _one_tenant_first_to_last(self) -> BillsIssued:
        if any(bill.tenant != self.tenant for bill in self.bills):
            raise ValueError(f"every bill of a chunk is the tenant's ({self.tenant})")
        if (self.bills[0].bill_id, self.bills[-1].bill_id) != (self.first_bill_id, self.last_bill_id):
            raise ValueError("first_bill_id and last_bill_id name the chunk's first and last bills")
        return self


def chunk_bills(detail: object) -> list[tuple[str, object]]:
    """A ``BillsIssued`` detail's bills, each as ``(key, detail)``, for a consumer that
    validates and handles every bill on its own, so that one malformed bill never costs the
    others theirs: ``key`` names the bill's place and id (``bills.3 (GR-1-2026-07-01)``).
    ValueError when the detail holds no list of bills."""
    bills = detail.get("bills") if isinstance(detail, dict) else None
    if not isinstance(bills, list) or not bills:
        raise ValueError("bills: a list of at least one bill is required")
    if len(bills) > BILLS_PER_CHUNK_MAX:
        raise ValueError(f"bills: at most {BILLS_PER_CHUNK_MAX}, got {len(bills)}")
    keyed = []
    for index, bill in enumerate(bills):
        bill_id = bill.get("bill_id") if isinstance(bill, dict) else None
        keyed.append((f"bills.{index} ({str(bill_id)[:200]})" if bill_id else f"bills.{index}", bill))
    return keyed


# The most account versions one ``AccountsChanged`` carries; the publisher also keeps each
# chunk's entry under EventBridge's 256 KB (a version's detail is at most about 2.6 KB with
# every text at its longest, so 80 of them always fit).
ACCOUNTS_PER_CHUNK_MAX = 80
_TEXT = 500  # the longest name or address an account version carries on the bus


class AccountVersion(BaseModel):
    """One recorded version of an account, as other services keep it (issue 26): what
    sampling needs to take in a lab result (the account exists, its class, its service
    address as the sampling point until staff register one, satellite, SIC), what metering
    needs to take in a meter (the account exists), and the addresses and opt-ins notices
    sends to.

    ``version`` is when billing recorded the version (its ``ACCOUNT-HISTORY`` item): a
    later version of the same account has a later time, so a consumer keeps a version only
    when it is later than the one it holds, and a version delivered twice, or after a later
    one, changes nothing."""

    model_config = ConfigDict(frozen=True)

    account_id: str = Field(min_length=1, max_length=200)
    version: AwareDatetime
    opened_on: date
    closed_on: date | None = None
    account_class: Literal["residential", "nonresidential"]
    name: str = Field(max_length=_TEXT)
    service_address: str = Field(max_length=_TEXT)
    mailing_address: str = Field(max_length=_TEXT)
    zip: str = Field(max_length=20)
    email: str | None = Field(default=None, max_length=320)
    email_opt_in: bool = False
    parcel_id: str | None = Field(default=None, max_length=200)
    satellite: bool = False
    sic: str | None = Field(default=None, max_length=200)


class AccountsChanged(Event):
    """Account versions of one tenant that billing recorded (issue 26), in the order they
    were written: an account opened (its first version), changed (a later one) or closed
    (a version with ``closed_on``), from an accounts file or the staff account route.

    The billing table's stream publishes it (``billing.adapters.bill_outbox``): each
    version's history item is its own outbox (one fact, one item), so a version committed
    is published even if the writer crashes right after; the history INSERTs of a stream
    batch are packed, per run of one tenant's versions, into entries of at most
    :data:`ACCOUNTS_PER_CHUNK_MAX` versions. Consumers keep each version by its business
    key (tenant, account, version): a chunk delivered twice, or two chunks sharing versions
    after a retried batch is packed anew, change nothing. Business key: the tenant and the
    chunk's first and last versions."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "first_account_id", "first_version", "last_account_id", "last_version")

    tenant: str
    first_account_id: str
    first_version: AwareDatetime
    last_account_id: str
    last_version: AwareDatetime
    accounts: tuple[AccountVersion, ...] = Field(min_length=1, max_length=ACCOUNTS_PER_CHUNK_MAX)

    @model_validator(mode="after")
    def _first_to_last(self) -> AccountsChanged:
        first, last = self.accounts[0], self.accounts[-1]
        if (first.account_id, first.version, last.account_id, last.version) != (
            self.first_account_id,
            self.first_version,
            self.last_account_id,
            self.last_version,
        ):
            raise ValueError("first_* and last_* name the chunk's first and last versions")
        return self


def chunk_accounts(detail: object) -> list[tuple[str, object]]:
    """An ``AccountsChanged`` detail's versions, each as ``(key, detail)``, for a consumer
    that validates and keeps every version on its own (one malformed version never costs
    the others theirs): ``key`` names the version's place and account (``accounts.3 (GR-1)``).
    ValueError when the detail holds no list of versions."""
    accounts = detail.get("accounts") if isinstance(detail, dict) else None
    if not isinstance(accounts, list) or not accounts:
        raise ValueError("accounts: a list of at least one account version is required")
    if len(accounts) > ACCOUNTS_PER_CHUNK_MAX:
        raise ValueError(f"accounts: at most {ACCOUNTS_PER_CHUNK_MAX}, got {len(accounts)}")
    keyed = []
    for index, account in enumerate(accounts):
        account_id = account.get("account_id") if isinstance(account, dict) else None
        keyed.append(
            (f"accounts.{index} ({str(account_id)[:200]})" if account_id else f"accounts.{index}", account)
        )
    return keyed


class AdjustedFund(BaseModel):
    """The part of an adjustment booked to one fund (GR-FUNDS, SU-FUNDS; ``om`` otherwise)."""

    model_config = ConfigDict(frozen=True)

    fund: str
    amount: Decimal


class BillAdjusted(Event):
    """An adjustment was booked on an issued bill (X-IMMUTABLE): a credit memo (``amount``
    negative) or a debit memo, referring to the bill, which is never edited. The notices
    service sends the customer the memo.

    ``reference`` is the business key (a re-rating's is ``RERATE-<bill_id>-<nnn>``; a
    staff correction's is the staff's). ``lines`` split ``amount`` by fund (they add up to
    it). ``kind`` is ``rerating`` (the period rated again on a re-determined consumption:
    ``from_volume_gal``, ``to_volume_gal`` and the ``source_event_id`` that brought it) or
    ``correction`` (a staff memo, with its approver).

    schema_version 2 (issue 12, additive: version 1 details still parse): ``kind``
    ``reversal`` (a late charge or penalty reduced because a payment dated before it was
    posted after it was assessed, X-DUE: ``reverses_entry_id`` names the charge's entry);
    a ``rerating`` of a stormwater period whose ERU or credit changed after it was billed
    carries no volumes and names the ERU or credit event in ``source_event_id``;
    ``rule_ids`` (the rules the amount stands on) and ``derivation`` (how it was found)
    on every kind. Additive (issue 28): a staff debit memo charged under a rule of the
    tenant's ordinance (GR-TOXIC) names it in ``rule_id`` and ``rule_ids`` and carries its
    ``basis`` (for GR-TOXIC: the pollutant, the added cost and the document showing it)."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "reference")

    schema_version: int = 2

    tenant: str
    account_id: str
    bill_id: str
    bill_number: str
    period_start: date
    period_end: date
    reference: str = Field(max_length=200)
    posted_on: date
    amount: Decimal
    memo: Literal["credit", "debit"]
    lines: tuple[AdjustedFund, ...] = Field(min_length=1, max_length=8)
    reason: str = Field(max_length=2000)
    approver: str = Field(max_length=200)
    kind: Literal["rerating", "correction", "reversal"] = "correction"
    from_volume_gal: Decimal | None = None
    to_volume_gal: Decimal | None = None
    source_event_id: str | None = None
    rule_id: str = "X-IMMUTABLE"
    rule_ids: tuple[str, ...] = Field(default=(), max_length=16)
    derivation: str | None = Field(default=None, max_length=2000)
    reverses_entry_id: str | None = Field(default=None, max_length=200)
    basis: dict[str, str] | None = None


class PaymentApplied(Event):
    """A payment (or a reversal: negative ``amount``) was posted; ``suspense`` when the
    account is unknown and the money waits in suspense (never lost)."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "reference")

    tenant: str
    account_id: str
    reference: str
    paid_on: date
    amount: Decimal
    channel: str  # "api" or "lockbox"
    suspense: bool = False


class BillOverdue(Event):
    """GR-OVERDUE: unpaid 20 days after issue; the overdue notice may go. Unless paid or
    arranged by ``disconnection_eligible_on`` (10 days later), service may be disconnected."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "account_id", "bill_id")

    tenant: str
    account_id: str
    bill_id: str
    bill_date: date
    due_date: date
    overdue_on: date
    amount_unpaid: Decimal
    disconnection_eligible_on: date
    rule_id: str = "GR-OVERDUE"


class DisconnectionEligible(Event):
    """GR-OVERDUE (PSC 185): from ``eligible_on`` the account's service may be disconnected
    for ``bill_id``: unpaid 10 days after the overdue notice and not arranged.

    Published once per stretch of eligibility, on the day it starts: the day after the 10
    days of the overdue notice (``reason`` ``notice_period_ended``), or later when a
    payment arrangement covering the bill breaks (an instalment missed by its date),
    is cancelled or ends with the bill unpaid (``arrangement_broken`` /
    ``arrangement_cancelled`` / ``arrangement_ended``, with ``arrangement_id``), or a
    payment is reversed (``payment_reversed``). ``amount_unpaid`` is the bill's unpaid
    charges the day before ``eligible_on``. A day the daily assessment missed is caught up:
    the event then comes later than ``eligible_on``, which keeps the day it began. When it
    no longer holds (paid, or arranged), ``DisconnectionEligibilityWithdrawn`` with the
    same business key withdraws it.
    """

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "account_id", "bill_id", "eligible_on")

    tenant: str
    account_id: str
    bill_id: str
    bill_date: date
    due_date: date
    overdue_on: date
    eligible_on: date
    amount_unpaid: Decimal
    reason: str = Field(max_length=40)
    arrangement_id: str | None = Field(default=None, max_length=64)
    rule_id: str = "GR-OVERDUE"


class DisconnectionEligibilityWithdrawn(Event):
    """GR-OVERDUE ("unless paid or arranged"): the ``DisconnectionEligible`` with the same
    tenant, account, bill and ``eligible_on`` no longer holds from ``ended_on``: the bill
    was paid (payments count from their ``paid_on`` date, so a payment posted late may date
    from before the eligibility: ``never_held``, it was published in error) or a payment
    arrangement covering it was made (``arranged``, with ``arrangement_id``). Service must
    not be disconnected for it. Published once, by the posting of the payment or the
    arrangement that ended it, else by the next daily assessment (``withdrawn_on``).

    The notices service sends no disconnection notice for a withdrawn eligibility and, where
    it sent one (or the overdue notice that announced it), a letter withdrawing it.
    ``amount_unpaid`` is the bill's unpaid charges with the payments dated before
    ``ended_on`` (0.00 when paid)."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "account_id", "bill_id", "eligible_on")

    tenant: str
    account_id: str
    bill_id: str
    bill_date: date
    due_date: date
    eligible_on: date
    ended_on: date
    never_held: bool
    # True when it began the day the overdue notice's 10 days ran out (the eligibility the
    # overdue notice announced, DisconnectionEligible reason notice_period_ended).
    after_overdue_notice: bool
    reason: Literal["paid", "arranged"]
    arrangement_id: str | None = Field(default=None, max_length=64)
    amount_unpaid: Decimal
    withdrawn_on: date
    rule_id: str = "GR-OVERDUE"


class BillDelinquent(Event):
    """PP-CWU-DELINQUENT: unpaid 30 days after the bill date; PP-CWU-PENALTY starts."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "account_id", "bill_id")

    tenant: str
    account_id: str
    bill_id: str
    bill_date: date
    delinquent_on: date
    amount_delinquent: Decimal
    penalty: Decimal
    penalty_percent_per_month: Decimal
    rule_id: str = "PP-CWU-DELINQUENT"


class TaxRollNoticed(Event):
    """X-TAXROLL, October 15: a parcel's arrears will go on the tax roll unless paid by
    ``pay_by`` (10% is added then); one per parcel, tenant and year, to owner and occupant."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "year", "account_id")

    tenant: str
    year: int
    account_id: str
    parcel_id: str
    noticed_on: date
    arrears: Decimal
    penalty_percent: Decimal
    pay_by: date
    certify_on: date
    owner: Party
    occupant: Party
    rule_id: str


class TaxRollCertified(Event):
    """X-TAXROLL, November 16: the year's list was certified and moved off the accounts.

    The list itself is served by ``GET /staff/{tenant}/tax-roll/{year}`` (claim check).
    """

    SOURCE = SOURCE
    BUSINESS_KEY = ("tenant", "year")

    tenant: str
    year: int
    certified_on: date
    parcels: int = Field(ge=0)
    total: Decimal
    rule_id: str
