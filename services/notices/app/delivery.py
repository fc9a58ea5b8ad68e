"""Notices' use cases: an incoming event -> the notices its rule requires, delivered once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from billing.events import (
    BillAdjusted,
    BillDelinquent,
    BillIssued,
    BillOverdue,
    DisconnectionEligibilityWithdrawn,
    DisconnectionEligible,
    TaxRollNoticed,
)
from common.clock import Clock
from common.errors import PermanentError, TransientError
from common.events import Event
from common.money import round_line
from common.tariffs import TariffBook
from metering.events import SatelliteFlowReady
from notices.app.planning import (
    Contacts,
    NoAddress,
    Planned,
    announcing_trigger,
    bill_document,
    bill_recipient,
    billed_volume,
    plan_adjustment_memo,
    plan_appeal_letter,
    plan_bill,
    plan_credit_revocation,
    plan_delinquent,
    plan_disconnection_eligible,
    plan_eligibility_withdrawn,
    plan_overdue,
    plan_reconsideration_letter,
    plan_report_reminder,
    plan_satellite_flow,
    plan_satellite_reminder,
    plan_satellite_results,
    plan_tax_roll,
    recipient_of,
    trigger,
)
from notices.domain import combined
from notices.domain.combined import BillHolds, Claim, HeldBill
from notices.domain.delivery import Delivery, NoticeRecord, SendFailed, deliver
from notices.domain.documents import BillDocument, CombinedBillDocument, UsagePoint
from notices.domain.model import NoticeRequest, Recipient, Rule, channels, notice_id
from notices.domain.requests import bill_notice, combined_bill_notice
from sampling.events import AnnualReportReminderDue, SatelliteResultsDelivered, SatelliteResultsDueSoon
from stormwater.events import AppealDecided, CreditRevocationProposed, ReconsiderationDecided

# detail-type -> event class; the queue's rule lets only these through.
CONSUMED: dict[str, type[Event]] = {
    cls.detail_type(): cls
    for cls in (
        BillIssued,
        BillOverdue,
        DisconnectionEligible,
        DisconnectionEligibilityWithdrawn,
        BillDelinquent,
        BillAdjusted,
        TaxRollNoticed,
        CreditRevocationProposed,
        ReconsiderationDecided,
        AppealDecided,
        SatelliteFlowReady,
        SatelliteResultsDelivered,
        SatelliteResultsDueSoon,
        AnnualReportReminderDue,
    )
}


class UnaddressableNotice(PermanentError):
    """The notice's recipient has no address on file: rejected (recorded and visible)."""


@dataclass(frozen=True)
class Outcome:
    event: str
    sent: int
    already_sent: int
    held: int = 0  # Pleasant Prairie bills waiting for their combined document
    failed: int = 0  # held bills the release run could not send yet (retried)


def annual_rate_notice(book: TariffBook, event: BillIssued) -> str | None:
    """SU-ANNUAL-NOTICE: the rate, and the part of this bill's use charge for treatment.

    The rate told is the tariff in force when the notice goes out, on the bill date (a bill
    of a period before a rate change carries the new rate's notice); each use-charge line's
    treatment part is at the share of the version it was billed on (its rate), else of the
    version in force. A proposed version is never in a production book (the loader refuses it).
    """
    if event.tenant != "sullivan-sewer":
        return None
    tariff: Any = book.in_force(event.tenant, event.bill_date)
    rate = tariff.use_rate_per_kgal.value
    share = tariff.treatment_portion.value
    billed_on = {
        span.tariff.use_rate_per_kgal.value: span.tariff.treatment_portion.value  # type: ignore[union-attr]
        for span in book.split(event.tenant, event.period_start, event.period_end)
    }
    use = Decimal(0)
    portion = Decimal(0)
    for line in event.lines:
        if line.rule_id != "SU-USE":
            continue
        use += line.amount
        try:
            line_share = billed_on.get(Decimal(line.rate), share)
        except ArithmeticError:  # a rate the document shows in words: the version in force
            line_share = share
        portion += round_line(line.amount * line_share)
    return (
        f"The sewer use charge is ${rate} per 1,000 gallons (tariff {tariff.version_id}, in force on "
        f"{event.bill_date.isoformat()}). {share * 100:.0f}% of it pays for wastewater treatment: "
        f"${portion:.2f} of this bill's sewer use charge of ${use:.2f}."
    )


def handle_event(
    event: Event,
    *,
    contacts: Contacts,
    ports: dict[str, Any],
    clock: Clock,
    book: TariffBook,
    attempt: int = 1,
    holds: BillHolds | None = None,
) -> Outcome:
    now: datetime = clock.now()
    today = _local_day(now)
    if isinstance(event, DisconnectionEligibilityWithdrawn):
        contacts.keep_withdrawal(event)  # first: a concurrent eligibility handler sees it
        return _withdrawn(event, contacts, ports, now=now, today=today, attempt=attempt)
    if isinstance(event, DisconnectionEligible) and _withdrawal_of(event, contacts) is not None:
        return Outcome(event=type(event).__name__, sent=0, already_sent=0)  # withdrawn: none
    try:
        planned = _plan(event, contacts, book)
    except NoAddress as exc:
        raise UnaddressableNotice(str(exc)) from exc
    if isinstance(event, BillIssued) and holds is not None and isinstance(planned.bill, BillDocument):
        [request] = planned.requests
        group = combined.pairing_key(planned.bill, request.recipient, event.parcel_id)
        if group is not None:
            held = HeldBill(document=planned.bill, recipient=request.recipient, trigger=request.trigger)
            return _combine_or_hold(group, held, holds, ports, now=now, today=today, attempt=attempt)
    sent = already = 0
    for request in planned.requests:
        delivery = _deliver(request, planned.bill, ports, now=now, today=today, attempt=attempt)
        sent += len(delivery.sent)
        already += len(delivery.already_sent)
    if isinstance(event, BillIssued) and planned.bill is not None and planned.bill.annual_notice:
        contacts.annual_notice_sent(event.tenant, event.account_id, event.bill_date.year)
    if isinstance(event, DisconnectionEligible) and planned.requests:
        # Withdrawn while its notice went out (the withdrawal's handler found no notice
        # sent yet): the withdrawal letter follows it, once (the same notice id either way).
        withdrawal = _withdrawal_of(event, contacts)
        if withdrawal is not None:
            done = _withdrawn(withdrawal, contacts, ports, now=now, today=today, attempt=attempt)
            sent, already = sent + done.sent, already + done.already_sent
    return Outcome(event=type(event).__name__, sent=sent, already_sent=already)


def _withdrawal_of(
    event: DisconnectionEligible, contacts: Contacts
) -> DisconnectionEligibilityWithdrawn | None:
    return contacts.withdrawal(event.tenant, event.account_id, event.bill_id, event.eligible_on)


def _withdrawn(
    event: DisconnectionEligibilityWithdrawn,
    contacts: Contacts,
    ports: dict[str, Any],
    *,
    now: datetime,
    today: date,
    attempt: int,
) -> Outcome:
    """GR-OVERDUE: an eligibility billing withdrew. The letter withdrawing the disconnection
    notice goes (mail, and email where opted in) only where that notice was sent: the notice
    log holds it, sent, under its trigger (:func:`announcing_trigger`)."""
    announcing = announcing_trigger(event)
    announced = any(
        r.trigger == announcing and r.rule == "GR-OVERDUE" and r.status == "sent"
        for r in ports["log"].of_account(event.tenant, event.account_id)
    )
    try:
        planned = plan_eligibility_withdrawn(event, contacts, announced)
    except NoAddress as exc:
        raise UnaddressableNotice(str(exc)) from exc
    sent = already = 0
    for request in planned.requests:
        delivery = _deliver(request, None, ports, now=now, today=today, attempt=attempt)
        sent += len(delivery.sent)
        already += len(delivery.already_sent)
    return Outcome(event=type(event).__name__, sent=sent, already_sent=already)


def _deliver(
    request: NoticeRequest,
    bill: BillDocument | CombinedBillDocument | None,
    ports: dict[str, Any],
    *,
    now: datetime,
    today: date,
    attempt: int,
) -> Delivery:
    try:
        return deliver(request, now=now, today=today, bill=bill, attempt=attempt, **ports)
    except SendFailed as exc:
        raise TransientError(str(exc)) from exc


def _combine_or_hold(
    group: str,
    bill: HeldBill,
    holds: BillHolds,
    ports: dict[str, Any],
    *,
    now: datetime,
    today: date,
    attempt: int,
) -> Outcome:
    """PP-CWU-BILLING: hold a Pleasant Prairie bill for its partner, or send the group's
    combined document once both utilities' bills are in (see ``notices.domain.combined``)."""
    holds.hold(group, bill)
    decision: combined.Decision = combined.Hold()
    held: list[HeldBill] = []
    for _attempt in range(2):  # a claim lost to a concurrent handler is decided again once
        held, claim = holds.group(group)
        decision = combined.on_arrival(bill, held, claim, today)
        if not isinstance(decision, combined.Propose):
            break
        won = holds.claim(group, decision.claim)
        if won == decision.claim:
            decision = combined.Send(won)
            break
    if isinstance(decision, combined.Hold):
        return Outcome(event="BillIssued", sent=0, already_sent=0, held=1)
    if isinstance(decision, combined.Nothing):
        return Outcome(event="BillIssued", sent=0, already_sent=1)
    if isinstance(decision, combined.Alone):
        request = bill_notice(bill.document, bill.recipient, bill.trigger)
        delivery = _deliver(request, bill.document, ports, now=now, today=today, attempt=attempt)
        return Outcome(event="BillIssued", sent=len(delivery.sent), already_sent=len(delivery.already_sent))
    assert isinstance(decision, combined.Send)
    delivery = _send_claimed(group, held, decision.claim, holds, ports, now=now, today=today, attempt=attempt)
    return Outcome(event="BillIssued", sent=len(delivery.sent), already_sent=len(delivery.already_sent))


def _send_claimed(
    group: str,
    held: list[HeldBill],
    claim: Claim,
    holds: BillHolds,
    ports: dict[str, Any],
    *,
    now: datetime,
    today: date,
    attempt: int,
) -> Delivery:
    """Send the claimed document: the combined bill when both utilities' bills are in it,
    else each bill alone as an ordinary one (never a "combined" bill of one utility)."""
    bills = combined.claimed(held, claim)
    sent: list[NoticeRecord] = []
    skipped: list[str] = []
    if {b.document.tenant for b in bills} != set(combined.PAIRED_TENANTS):
        for only in bills:
            request = bill_notice(only.document, only.recipient, only.trigger)
            delivery = _deliver(request, only.document, ports, now=now, today=today, attempt=attempt)
            sent += delivery.sent
            skipped += delivery.already_sent
    else:
        document = combined.combined_document(bills)
        recipient = combined.combined_recipient(bills)
        request = combined_bill_notice(document, recipient, combined.combined_trigger(group, bills))
        delivery = _deliver(request, document, ports, now=now, today=today, attempt=attempt)
        sent, skipped = delivery.sent, delivery.already_sent
        _log_for_each_account(request, document, ports["log"])
    holds.released(group, (h.release_on for h in held))
    return Delivery(sent=sent, already_sent=skipped)


def _log_for_each_account(request: NoticeRequest, document: CombinedBillDocument, log: Any) -> None:
    """The combined notice in the notice log of every account it carries (X-AUDIT): a copy
    of the sent record under each other account, with that account's notice id. Written on
    every send or resend, so a crash between the records loses none of them."""
    for channel in channels(request.rule, request.recipient):
        record = log.get(request.tenant, request.account_id, notice_id(request, channel))
        if record is None or record.status != "sent":
            continue
        for section in document.sections[1:]:
            other = request.model_copy(update={"tenant": section.tenant, "account_id": section.account_id})
            log.record(
                replace(
                    record,
                    tenant=section.tenant,
                    account_id=section.account_id,
                    notice_id=notice_id(other, channel),
                )
            )


def release_held_bills(
    day: date,
    *,
    holds: BillHolds,
    ports: dict[str, Any],
    clock: Clock,
    mail_day: date | Callable[[], date] | None = None,
    attempt: int = 1,
) -> Outcome:
    """The release run (the print batch's morning): every group whose release day has come
    (on or before the morning after ``day``) goes out with the bills it has, combined when
    both utilities' are in, else each alone. Its letters join ``mail_day``'s print batch
    (``day``'s unless that batch is assembled already), so a mailed bill is not later than
    an unheld one of the same bill date. A group that cannot be sent now (SES refused) is
    counted in ``failed`` and the others still go; the caller retries the run. ``mail_day``
    may be a function, asked once and only if a group goes out (a morning with nothing held
    reads nothing to learn it)."""
    now = clock.now()
    sent = already = failed = 0
    mailed_on: list[date] = []

    def mail_today() -> date:
        if not mailed_on:
            mailed_on.append(mail_day() if callable(mail_day) else mail_day or day)
        return mailed_on[0]

    for group in holds.due(day + timedelta(days=1)):
        held, claim = holds.group(group)
        if not held:
            continue
        decision = combined.on_release(held, claim)
        if isinstance(decision, combined.Propose):
            won = holds.claim(group, decision.claim)
            decision = combined.Send(won) if won == decision.claim else combined.on_release(held, won)
        if not isinstance(decision, combined.Send):  # another handler sends it
            holds.released(group, (h.release_on for h in held))
            continue
        try:
            delivery = _send_claimed(
                group, held, decision.claim, holds, ports, now=now, today=mail_today(), attempt=attempt
            )
        except TransientError:
            failed += 1
            continue
        sent += len(delivery.sent)
        already += len(delivery.already_sent)
    return Outcome(event="ReleaseHeldBills", sent=sent, already_sent=already, failed=failed)


def _plan(event: Event, contacts: Contacts, book: TariffBook) -> Planned:
    planners: dict[type[Event], Callable[[Any], Planned]] = {
        BillIssued: lambda e: plan_bill(e, contacts, annual_rate_notice(book, e)),
        BillOverdue: lambda e: plan_overdue(e, contacts),
        DisconnectionEligible: lambda e: plan_disconnection_eligible(e, contacts),
        BillDelinquent: lambda e: plan_delinquent(e, contacts),
        BillAdjusted: lambda e: plan_adjustment_memo(e, contacts),
        TaxRollNoticed: plan_tax_roll,
        CreditRevocationProposed: lambda e: plan_credit_revocation(e, contacts),
        ReconsiderationDecided: lambda e: plan_reconsideration_letter(e, contacts),
        AppealDecided: lambda e: plan_appeal_letter(e, contacts),
        SatelliteFlowReady: lambda e: plan_satellite_flow(e, contacts),
        SatelliteResultsDelivered: lambda e: plan_satellite_results(e, contacts),
        SatelliteResultsDueSoon: lambda e: plan_satellite_reminder(e, contacts),
        AnnualReportReminderDue: lambda e: plan_report_reminder(e, contacts),
    }
    return planners[type(event)](event)


def _local_day(now: datetime) -> date:
    from zoneinfo import ZoneInfo

    return now.astimezone(ZoneInfo("America/Chicago")).date()


def batched(event: BillIssued, book: TariffBook) -> bool:
    """Whether a bill goes with its chunk (:func:`deliver_bills`): one that is delivered on
    its own, neither held for a combined Pleasant Prairie document nor carrying Sullivan's
    annual notice (those go one at a time, :func:`handle_event`)."""
    return event.tenant not in combined.PAIRED_TENANTS and annual_rate_notice(book, event) is None


def deliver_bills(
    events: list[BillIssued], *, ports: dict[str, Any], clock: Clock, attempt: int = 1
) -> list[Outcome | Exception]:
    """N-BILL for a chunk of bills at once (each :func:`batched`), at the cost of its work:
    the chunk's contact items and log lines read together (BatchGetItem), what the bills keep
    written together before anything is sent (contacts, printed numbers, owners, where each
    notice id is logged: TransactWriteItems), then each bill rendered and its PDF archived
    (one PutObject), each email sent and its log line written right after its send (one
    item, the line with its ``NoticeSent``: a crash between two emails sends neither again),
    and the letters put into the day's mail in one object with their log lines in
    transactions. Returns each bill's outcome, or the error that bill alone met (its email
    refused: retried; no address: rejected); an error of the chunk's own writes is raised.

    Idempotent by each notice's id, as :func:`notices.domain.delivery.deliver` is: a line
    found sent is not sent again, and everything written before the sends is the same on
    a redelivery (the usage of a period is kept once however often its bill comes)."""
    from notices.domain.delivery import bill_attachment, sent_record
    from notices.domain.model import Channel

    now = clock.now()
    today = _local_day(now)
    store: Any = ports["bills"]
    results: list[Outcome | Exception] = [Outcome(event="BillIssued", sent=0, already_sent=0) for _ in events]
    recipients = [bill_recipient(e) for e in events]
    planned: list[tuple[NoticeRequest, list[Channel]]] = []
    wanted: list[tuple[str, str, str]] = []
    for event, recipient in zip(events, recipients, strict=True):
        # The notice ids depend on the addressee and the trigger, not on the document.
        probe = NoticeRequest(
            rule=Rule.BILL,
            tenant=event.tenant,
            account_id=event.account_id,
            recipient=recipient,
            trigger=trigger(event),
            subject="",
        )
        chosen = list(channels(Rule.BILL, recipient))
        planned.append((probe, chosen))
        wanted += [(event.tenant, event.account_id, notice_id(probe, c)) for c in chosen]
    accounts = list(dict.fromkeys((e.tenant, e.account_id) for e in events))
    contacts, logged = store.read(accounts, wanted)
    # Each account's usage with this chunk's periods, in the bills' order (one write each).
    usage = {account: dict(state.usage) for account, state in contacts.items()}
    latest: dict[tuple[str, str], tuple[Recipient, str | None]] = {}
    documents: list[BillDocument] = []
    for event, recipient in zip(events, recipients, strict=True):
        account = (event.tenant, event.account_id)
        usage[account][event.period_start.isoformat()] = str(billed_volume(event))
        latest[account] = (recipient, event.parcel_id)
        points = sorted(usage[account].items())[-13:]  # the chart's 13 periods
        history = [UsagePoint(period_start=date.fromisoformat(k), volume_gal=Decimal(v)) for k, v in points]
        documents.append(bill_document(event, recipient, history, None))
    to_send: list[tuple[int, Channel, str]] = []
    for i, (probe, chosen) in enumerate(planned):
        for channel in chosen:
            nid = notice_id(probe, channel)
            found = logged.get(nid)
            if found is not None and found.status == "sent":
                results[i] = replace_outcome(results[i], already=1)
            else:
                to_send.append((i, channel, nid))
    where = [(events[i].tenant, events[i].account_id, nid) for i, _, nid in to_send]
    owners = {
        (e.tenant, e.parcel_id): (e.tenant, e.parcel_id, recipient_of(e.owner, "owner"), e.account_id)
        for e in events
        if e.owner is not None and e.parcel_id
    }
    store.keep(
        [(t, a, *latest[(t, a)], usage[(t, a)], contacts[(t, a)].version) for t, a in accounts],
        [(e.tenant, e.account_id, e.bill_id, e.bill_number) for e in events],
        owners.values(),
        where,
    )
    renderer, archive, email, mail = ports["renderer"], ports["archive"], ports["email"], ports["mail"]
    letters: list[tuple[NoticeRecord, NoticeRequest, bytes]] = []
    letter_of: list[int] = []
    for i, channel, _nid in to_send:
        document = documents[i]
        request = bill_notice(document, recipients[i], trigger(events[i]))
        if request.dated is None:
            request = request.model_copy(update={"dated": today})
        rendered = renderer.render(request)
        pdf = renderer.bill(document)
        archived = archive.store(document, pdf)
        record = replace(
            sent_record(request, channel, rendered, pdf, now=now, attempt=attempt),
            pdf_key=archived,
            text=rendered.text,
        )
        if channel is Channel.MAIL:
            letters.append((record, request, pdf))
            letter_of.append(i)
            continue
        assert request.recipient.email  # channels() only chooses email with an address
        try:
            reference = email.send(
                to=request.recipient.email,
                subject=rendered.subject,
                text=rendered.text,
                html=rendered.html,
                attachments=[bill_attachment(request, document, pdf)],
            )
        except SendFailed as exc:
            store.record_sent(replace(record, status="failed", error=str(exc)[:500]))
            results[i] = TransientError(str(exc))
            continue
        store.record_sent(replace(record, reference=reference))
        results[i] = replace_outcome(results[i], sent=1)
    if letters:
        kept = mail.letters_of(today, letters)
        # The morning's mark before the lines: once a letter is logged sent, no redelivery
        # comes back to mark its morning for the print run.
        mail.mark(today)
        store.record_letters(kept)
        for i in letter_of:
            results[i] = replace_outcome(results[i], sent=1)
    return results


def replace_outcome(outcome: Outcome | Exception, *, sent: int = 0, already: int = 0) -> Outcome | Exception:
    """``outcome`` with one more notice sent or found sent (an error stays the bill's)."""
    if isinstance(outcome, Exception):
        return outcome
    return replace(outcome, sent=outcome.sent + sent, already_sent=outcome.already_sent + already)
