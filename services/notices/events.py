"""Events published by notices (the contract other services import; additive changes only)."""

from __future__ import annotations

from datetime import date

from common.events import Event

SOURCE = "sewerbill.notices"


class NoticeSent(Event):
    """A notice went out on one channel (email accepted by SES, or letter queued for print)."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("notice_id",)

    tenant: str
    account_id: str
    notice_id: str
    rule: str
    channel: str
    recipient_role: str
    reference: str


class NoticeFailed(Event):
    """A send failed; it is retried, and listed in the failed-notices report meanwhile."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("notice_id", "attempts")

    tenant: str
    account_id: str
    notice_id: str
    rule: str
    channel: str
    attempts: int
    error: str


class PrintBatchAssembled(Event):
    """The day's mailed notices as one PDF and a manifest for the print vendor (claim check)."""

    SOURCE = SOURCE
    BUSINESS_KEY = ("day",)

    day: date
    letters: int
    bucket: str
    pdf_key: str
    manifest_key: str
