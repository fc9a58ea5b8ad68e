"""The combined Pleasant Prairie bill (PP-CWU-BILLING: "billed monthly on the combined bill").

Pleasant Prairie's sewer utility and its clean water (stormwater) utility are two tenants:
two cycles, two bills, two ledgers, two sets of funds. A customer who has an account with
each gets ONE document a month (one PDF, one email or one mailed piece) with a section per
utility, each its own bill as issued, and the amount to remit.

Which bills go together comes from data billing already carries on ``BillIssued`` (from
the accounts file, CONTRACTS.md): the same **parcel** (``parcel_id``: required of every
stormwater account, given for the sewer accounts where the tax roll is on), the same **bill
recipient** (name and mailing address, compared without case, punctuation or spacing: an
owner billed for stormwater and a tenant billed for sewer on one parcel are two customers
and get two bills) and the same **period**. No new contract column is needed.

The two cycles may run at different times, so a paired-tenant bill with a parcel is
**held** until its partner of the same group arrives or until its **release day** (the day
after the bill date: both cycles are scheduled for the same morning, so the partner, when
there is one, has normally arrived within minutes; the release day only bounds the wait
when it has not), after which it goes alone. Bills that cannot have a partner (other
tenants, a sewer account without a parcel) are never held.

Deterministic and idempotent: the first handler that sees both utilities in a group (or
the release run) writes the group's **claim** (a conditional write: one claim per group)
naming the bills the document carries; only the claimer sends it, and its retries resend
the same document (the notice log skips what was sent). A redelivered bill that is in a
claim made by another sends nothing; a bill that arrives after its group was released is
sent alone as an ordinary bill. Pure: no I/O; the use case applies the decisions.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Protocol

from notices.domain.documents import BillDocument, CombinedBillDocument
from notices.domain.model import Recipient

SEWER = "pleasant-prairie-sewer"
STORMWATER = "pleasant-prairie-stormwater"
PAIRED_TENANTS = (SEWER, STORMWATER)  # the order of the sections
HOLD_DAYS = 1  # a held bill goes alone from the day after its bill date
RELEASE = "release"  # the claimant name of the release run


@dataclass(frozen=True)
class HeldBill:
    """A paired-tenant bill waiting for its group's document (as planned from BillIssued)."""

    document: BillDocument
    recipient: Recipient
    trigger: str  # the BillIssued's trigger: its own notice when it goes alone

    @property
    def member(self) -> str:
        return f"{self.document.tenant}/{self.document.account_id}/{self.document.bill_id}"

    @property
    def release_on(self) -> date:
        return release_on(self.document)


@dataclass(frozen=True)
class Claim:
    """The group's document, decided once: the bills it carries and who sends it."""

    members: tuple[str, ...]
    by: str


@dataclass(frozen=True)
class Hold:
    """Wait for the partner (or the release day)."""


@dataclass(frozen=True)
class Propose:
    """Claim the group with these bills; the claimer then sends them."""

    claim: Claim


@dataclass(frozen=True)
class Send:
    """Send the claimed document (this handler made the claim: a first send or a retry)."""

    claim: Claim


@dataclass(frozen=True)
class Alone:
    """This bill's group was released without it: it goes as an ordinary bill."""


@dataclass(frozen=True)
class Nothing:
    """Another handler claimed the document that carries this bill and sends it."""


Decision = Hold | Propose | Send | Alone | Nothing


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def pairing_key(document: BillDocument, recipient: Recipient, parcel_id: str | None) -> str | None:
    """The group a bill belongs to: parcel, bill recipient and period; ``None`` for a bill
    that cannot be combined (another tenant, or no parcel on the account)."""
    if document.tenant not in PAIRED_TENANTS or not parcel_id:
        return None
    customer = f"{_normal(recipient.name)}|{_normal(' '.join(recipient.address_lines))}"
    raw = "|".join(
        (_normal(parcel_id), customer, document.period_start.isoformat(), document.period_end.isoformat())
    )
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def release_on(document: BillDocument) -> date:
    return document.bill_date + timedelta(days=HOLD_DAYS)


def on_arrival(bill: HeldBill, held: Sequence[HeldBill], claim: Claim | None, today: date) -> Decision:
    """What a handler does with ``bill`` (already in ``held``) given the group's claim."""
    if claim is not None:
        if bill.member not in claim.members:
            return Alone()
        return Send(claim) if claim.by == bill.trigger else Nothing()
    tenants = {h.document.tenant for h in held}
    if set(PAIRED_TENANTS) <= tenants or today >= bill.release_on:
        return Propose(Claim(members=tuple(sorted(h.member for h in held)), by=bill.trigger))
    return Hold()


def on_release(held: Sequence[HeldBill], claim: Claim | None) -> Decision:
    """What the release run does with a group whose release day has come."""
    if claim is None:
        return Propose(Claim(members=tuple(sorted(h.member for h in held)), by=RELEASE))
    return Send(claim) if claim.by == RELEASE else Nothing()


def ordered(bills: Sequence[HeldBill]) -> list[HeldBill]:
    """Sewer first, then stormwater; within a utility by account (several accounts of one
    customer on one parcel each get their section)."""
    return sorted(bills, key=lambda h: (PAIRED_TENANTS.index(h.document.tenant), h.document.account_id))


def claimed(held: Sequence[HeldBill], claim: Claim) -> list[HeldBill]:
    members = set(claim.members)
    return ordered([h for h in held if h.member in members])


def combined_document(bills: Sequence[HeldBill]) -> CombinedBillDocument:
    """The document of two or more bills of one group, addressed as the first one is."""
    first = ordered(bills)[0]
    return CombinedBillDocument(
        sections=tuple(h.document for h in ordered(bills)),
        customer_name=first.document.customer_name,
        service_address=first.document.service_address,
        mailing_lines=first.document.mailing_lines,
        zip=first.document.zip,
    )


def combined_recipient(bills: Sequence[HeldBill]) -> Recipient:
    """The group's addressee. By email only when every account opted in with the same
    address (a consent given for one utility's bills is not assumed for the other's);
    otherwise the combined bill is mailed, as the customer's bills would be."""
    first = ordered(bills)[0].recipient
    emails = {(h.recipient.email or "").strip().casefold() for h in bills}
    agreed = all(h.recipient.email_opt_in for h in bills) and len(emails) == 1 and "" not in emails
    return first if agreed else first.model_copy(update={"email_opt_in": False})


def combined_trigger(key: str, bills: Sequence[HeldBill]) -> str:
    """The combined notice's trigger: its group and the bills it carries (its notice id)."""
    return f"CombinedBill#{key}#" + "+".join(h.document.bill_id for h in ordered(bills))


class BillHolds(Protocol):
    """Where held paired-tenant bills wait (notices' own table)."""

    def hold(self, key: str, bill: HeldBill) -> None:
        """Keep ``bill`` in its group and list the group for its release day (idempotent)."""
        ...

    def group(self, key: str) -> tuple[list[HeldBill], Claim | None]:
        """The group's bills and its claim, read consistently."""
        ...

    def claim(self, key: str, claim: Claim) -> Claim:
        """Write ``claim`` unless the group has one; return the claim in force."""
        ...

    def due(self, day: date) -> list[str]:
        """The groups still listed for a release day on or before ``day``."""
        ...

    def released(self, key: str, days: Iterable[date]) -> None:
        """The group's document went (or another handler sends it): list it no more."""
        ...
