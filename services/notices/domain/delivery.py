"""Delivering a notice exactly once, on the channels its rule requires (RULES.md notices).

The use case takes its ports as parameters (STYLE 3): the notice log (the notices table),
an email sender (SES), a mail room (the day's print batch in the mail bucket) and a
renderer. Exactly once: each (rule, recipient, trigger, channel) has a notice id; a
notice already logged as sent is never sent again, however often its event arrives. A
send that fails is recorded on the log with its attempt count and raised as transient,
so the queue retries it with backoff and, after ``maxReceiveCount``, dead-letters it; the
failed-notices report lists it. Nothing is dropped silently.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from notices.domain.documents import BillDocument, CombinedBillDocument
from notices.domain.model import Channel, NoticeRequest, channels, notice_id


@dataclass(frozen=True)
class Rendered:
    subject: str
    text: str
    html: str


@dataclass(frozen=True)
class Attachment:
    filename: str
    content: bytes
    mime: str = "application/pdf"


@dataclass(frozen=True)
class NoticeRecord:
    """One line of an account's notice log (X-AUDIT, kept as long as the records)."""

    notice_id: str
    tenant: str
    account_id: str
    rule: str
    channel: str
    recipient_role: str
    recipient_name: str
    trigger: str
    subject: str
    status: str  # sent, failed
    at: datetime
    content_sha256: str
    reference: str = ""  # SES message id or the print-batch object key
    attempts: int = 1
    error: str = ""
    # The content as sent, kept for the clerk's copy (GET /staff/{tenant}/notices/{id}):
    # object keys of the text and of the PDF that ``content_sha256`` covers (text, then PDF).
    text_key: str = ""
    pdf_key: str = ""
    # The text itself, where it is kept on the log line rather than as an object (a bill's).
    text: str = ""


class NoticeLog(Protocol):
    def get(self, tenant: str, account_id: str, notice_id: str) -> NoticeRecord | None: ...

    def record(self, record: NoticeRecord) -> None: ...


class EmailSender(Protocol):
    def send(self, *, to: str, subject: str, text: str, html: str, attachments: list[Attachment]) -> str: ...


class MailRoom(Protocol):
    def enqueue(self, *, day: date, record: NoticeRecord, request: NoticeRequest, pdf: bytes) -> str: ...


class Renderer(Protocol):
    def render(self, request: NoticeRequest) -> Rendered: ...

    def letter(self, request: NoticeRequest, text: str) -> bytes: ...

    def bill(self, document: BillDocument | CombinedBillDocument) -> bytes: ...


class BillArchive(Protocol):
    def store(self, bill: BillDocument | CombinedBillDocument, pdf: bytes) -> str: ...

    def fetch(self, tenant: str, account_id: str, bill_id: str) -> bytes | None: ...


class NoticeCopies(Protocol):
    """Where the content of each sent notice is kept, so a clerk can read what it said."""

    def keep(self, record: NoticeRecord, text: str, pdf: bytes | None) -> tuple[str, str]:
        """Store the text (and the PDF, unless None: a bill's is in the archive already);
        return the object keys of the text and of the PDF stored ("" for none)."""
        ...


class SendFailed(Exception):
    """Raised by an EmailSender for a failed send; retried (the log keeps the attempts)."""


@dataclass(frozen=True)
class Delivery:
    sent: list[NoticeRecord]
    already_sent: list[str]


def deliver(
    request: NoticeRequest,
    *,
    log: NoticeLog,
    email: EmailSender,
    mail: MailRoom,
    renderer: Renderer,
    now: datetime,
    today: date,
    bill: BillDocument | CombinedBillDocument | None = None,
    attempt: int = 1,
    archive: BillArchive | None = None,
    copies: NoticeCopies | None = None,
) -> Delivery:
    """Send ``request`` on each of its channels not already sent; return what was sent.

    A request not dated by its event is dated ``today`` (the day it goes out). With
    ``copies``, the text and PDF of each notice are kept, and the log line points to them.

    A channel recorded as sent is not sent again (its log line carries its own event, so a
    crash leaves no event behind to append). An email is sent at least once, not exactly
    once: SES takes no idempotency key, so a crash between its send and its record sends it
    again on the redelivery (issue 26; tests/faults holds the case as an expected failure)."""
    if request.dated is None:
        request = request.model_copy(update={"dated": today})
    sent: list[NoticeRecord] = []
    skipped: list[str] = []
    rendered: Rendered | None = None
    pdf: bytes | None = None
    archived = ""
    for channel in channels(request.rule, request.recipient):
        nid = notice_id(request, channel)
        existing = log.get(request.tenant, request.account_id, nid)
        if existing is not None and existing.status == "sent":
            # Nothing to do again: the log line carries its own event (one item, one write).
            skipped.append(nid)
            continue
        rendered = rendered or renderer.render(request)
        if pdf is None:
            pdf = renderer.bill(bill) if bill is not None else renderer.letter(request, rendered.text)
            if bill is not None and archive is not None:
                archived = archive.store(bill, pdf)  # the customer's copy, for the portal (X-RETENTION)
        record = sent_record(request, channel, rendered, pdf, now=now, attempt=attempt)
        if copies is not None:
            text_key, pdf_key = copies.keep(record, rendered.text, None if archived else pdf)
            record = _replace(record, text_key=text_key, pdf_key=pdf_key or archived)
        if channel is Channel.EMAIL:
            assert request.recipient.email  # channels() only chooses email with an address
            attachments = [bill_attachment(request, bill, pdf)] if bill is not None else []
            try:
                reference = email.send(
                    to=request.recipient.email,
                    subject=rendered.subject,
                    text=rendered.text,
                    html=rendered.html,
                    attachments=attachments,
                )
            except SendFailed as exc:
                log.record(_replace(record, status="failed", error=str(exc)[:500]))
                raise
        else:
            reference = mail.enqueue(day=today, record=record, request=request, pdf=pdf)
        done = _replace(record, reference=reference)
        log.record(done)
        sent.append(done)
    return Delivery(sent=sent, already_sent=skipped)


def sent_record(
    request: NoticeRequest, channel: Channel, rendered: Rendered, pdf: bytes, *, now: datetime, attempt: int
) -> NoticeRecord:
    """The log line of ``request`` sent on ``channel`` (its reference still to be filled in);
    its content hash covers the text (UTF-8) followed by the PDF's bytes."""
    return NoticeRecord(
        notice_id=notice_id(request, channel),
        tenant=request.tenant,
        account_id=request.account_id,
        rule=request.rule.value,
        channel=channel.value,
        recipient_role=request.recipient.role,
        recipient_name=request.recipient.name,
        trigger=request.trigger,
        subject=rendered.subject,
        status="sent",
        at=now,
        content_sha256=hashlib.sha256(rendered.text.encode() + pdf).hexdigest(),
        attempts=attempt,
    )


def bill_attachment(
    request: NoticeRequest, bill: BillDocument | CombinedBillDocument, pdf: bytes
) -> Attachment:
    """The bill's PDF as an email carries it."""
    return Attachment(f"{_filename(request, bill)}.pdf", pdf)


def _filename(request: NoticeRequest, bill: BillDocument | CombinedBillDocument | None) -> str:
    if isinstance(bill, CombinedBillDocument):
        return "bill-" + "-and-".join(s.printed_number for s in bill.sections)
    return f"bill-{bill.printed_number}" if bill is not None else f"notice-{request.rule.value}"


def _replace(record: NoticeRecord, **changes: object) -> NoticeRecord:
    from dataclasses import replace

    return replace(record, **changes)  # type: ignore[arg-type]
