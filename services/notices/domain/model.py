"""What a notice is, who gets it and by which channel (RULES.md "Notices (all tenants)").

Pure: no AWS, no clock, no files. A :class:`NoticeRequest` is what an incoming event asks
for; :func:`channels` applies the channel column of the notices table; :func:`notice_id`
is the business key that makes a notice exactly-once: one notice per rule, recipient and
triggering event, however often the event arrives.
"""

from __future__ import annotations

import hashlib
from datetime import date
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from common.money import CENT


class Channel(StrEnum):
    EMAIL = "email"
    MAIL = "mail"


class Rule(StrEnum):
    """The notices table of RULES.md, by rule ID."""

    BILL = "N-BILL"
    GR_OVERDUE = "GR-OVERDUE"
    PP_DELINQUENT = "PP-CWU-DELINQUENT"
    PP_LIEN = "PP-CWU-LIEN"
    GR_TAXROLL = "GR-TAXROLL"
    CREDIT_REVOKE = "PP-CWU-CREDIT-REVOKE"
    SAT_SAMPLE = "PP-SEW-SAT-SAMPLE"
    SAT_FLOW = "PP-SEW-SAT-FLOW"
    REPORT = "PP-SEW-REPORT"
    RECONSIDER = "PP-CWU-RECONSIDER"
    APPEAL = "PP-CWU-APPEAL"
    ADJUSTMENT = "X-IMMUTABLE"  # a credit or debit memo on an issued bill, like a bill


# Legal notices go by mail always, and by email as well where the customer opted in.
LEGAL = frozenset(
    {
        Rule.GR_OVERDUE,
        Rule.PP_DELINQUENT,
        Rule.PP_LIEN,
        Rule.GR_TAXROLL,
        Rule.CREDIT_REVOKE,
        Rule.RECONSIDER,
        Rule.APPEAL,
    }
)
# Deliveries to satellite systems and dischargers are email notices.
EMAIL_ONLY = frozenset({Rule.SAT_SAMPLE, Rule.SAT_FLOW, Rule.REPORT})


class Recipient(BaseModel):
    """A person or body a notice is addressed to (owner, occupant, bill recipient, satellite)."""

    model_config = ConfigDict(frozen=True)

    role: str = "customer"
    name: str
    address_lines: tuple[str, ...] = ()
    zip: str = ""
    email: str | None = None
    email_opt_in: bool = False
    service_address: str | None = None  # the premise served (a bill's), for notices about it


class NoticeRequest(BaseModel):
    """One notice to one recipient, caused by one event (``trigger``)."""

    model_config = ConfigDict(frozen=True)

    rule: Rule
    tenant: str
    account_id: str
    recipient: Recipient
    trigger: str  # the triggering event's type and business key
    subject: str
    # What the templates show; values are already display strings or Decimals.
    content: dict[str, Any] = Field(default_factory=dict)
    deadline: date | None = None  # satellite deliveries (PP-SEW-SAT-*): when it is due
    # The letter's date: the day its event gives (the bill date, the notice date), else the
    # day it is delivered (``deliver`` fills it in); never read from a clock here.
    dated: date | None = None
    attach_bill_pdf: bool = False


def channels(rule: Rule, recipient: Recipient) -> tuple[Channel, ...]:
    """The channel column of the notices table for this recipient.

    N-BILL: email where the customer opted in (and has an address), else mail. Legal
    notices: mail, and email too where opted in. Satellite and report deliveries: email,
    or mail when no address is on file, so that a delivery is never silently skipped.
    """
    can_email = bool(recipient.email)
    if rule in EMAIL_ONLY:
        return (Channel.EMAIL,) if can_email else (Channel.MAIL,)
    if rule in LEGAL:
        return (Channel.MAIL, Channel.EMAIL) if can_email and recipient.email_opt_in else (Channel.MAIL,)
    return (Channel.EMAIL,) if can_email and recipient.email_opt_in else (Channel.MAIL,)


def notice_id(request: NoticeRequest, channel: Channel) -> str:
    """Exactly-once key: rule, tenant, account, recipient role and name, trigger, channel."""
    key = "|".join(
        (
            request.rule.value,
            request.tenant,
            request.account_id,
            request.recipient.role,
            request.recipient.name,
            request.trigger,
            channel.value,
        )
    )
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def money(value: Decimal | str | int) -> str:
    """Display money with a dollar sign and two places (the amount is already rounded)."""
    amount = Decimal(str(value)).quantize(CENT)
    sign = "-" if amount < 0 else ""
    return f"{sign}${abs(amount):,.2f}"
