"""From the events notices consumes to the notices they require (event-carried state).

Notices reads no other service's table. What it needs to address a notice arrives on the
events: ``BillIssued`` carries the bill recipient and the owner, so each one refreshes the
account's contacts and the parcel's owner in notices' own table (the contacts projection);
later notices about the account or parcel (a credit revocation, a decision letter) are
addressed from it. Each event type maps to the requests of its rule in RULES.md's notices
table; the bill's own usage history is kept from the bills notices has seen, for the chart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any, Protocol

from billing.events import (
    BillAdjusted,
    BillDelinquent,
    BillIssued,
    BillOverdue,
    DisconnectionEligibilityWithdrawn,
    DisconnectionEligible,
    Party,
    TaxRollNoticed,
)
from metering.events import SatelliteFlowReady
from notices.domain.documents import BillDocument, BillLine, MeterRead, UsagePoint
from notices.domain.model import NoticeRequest, Recipient, Rule, money
from notices.domain.requests import (
    bill_notice,
    credit_revocation_notice,
    delinquency_notice,
    delivery_notice,
    disconnection_notice,
    disconnection_withdrawn_notice,
    tax_roll_notices,
)
from sampling.events import AnnualReportReminderDue, SatelliteResultsDelivered, SatelliteResultsDueSoon
from stormwater.events import AppealDecided, CreditRevocationProposed, ReconsiderationDecided

ZIP = re.compile(r"\b(\d{5})(?:-\d{4})?\b")
# "(event 9b7c6d5e-...)" in billing's reasons: an event id, for staff, not for a letter.
EVENT_REF = re.compile(r"\s*\(event [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\)")


class Contacts(Protocol):
    def remember_bill(
        self,
        tenant: str,
        account_id: str,
        recipient: Recipient,
        parcel_id: str | None,
        period_start: date,
        volume_gal: Decimal,
    ) -> list[UsagePoint]:
        """Keep the account's addressee and the period's use; return its usage history."""
        ...

    def remember_owner(self, tenant: str, parcel_id: str, owner: Recipient, account_id: str) -> None: ...

    def recipient(self, tenant: str, account_id: str) -> Recipient | None: ...

    def owner(self, tenant: str, parcel_id: str) -> tuple[Recipient, str] | None: ...

    def annual_notice_due(self, tenant: str, account_id: str, year: int) -> bool: ...

    def annual_notice_sent(self, tenant: str, account_id: str, year: int) -> None: ...

    def remember_bill_number(self, tenant: str, account_id: str, bill_id: str, number: str) -> None:
        """Keep the number printed on a bill, for the letters that later name it."""
        ...

    def bill_number(self, tenant: str, account_id: str, bill_id: str) -> str | None: ...

    def keep_withdrawal(self, event: DisconnectionEligibilityWithdrawn) -> None:
        """Keep that an eligibility was withdrawn (its event), by the eligibility's key."""
        ...

    def withdrawal(
        self, tenant: str, account_id: str, bill_id: str, eligible_on: date
    ) -> DisconnectionEligibilityWithdrawn | None: ...


class NoAddress(Exception):
    """A notice whose recipient has no address on file yet (held and reported, not dropped)."""


@dataclass
class Planned:
    requests: list[NoticeRequest] = field(default_factory=list)
    bill: BillDocument | None = None


def recipient_of(party: Party, role: str) -> Recipient:
    """A billing Party as an addressee: the address split into lines, the ZIP found in it."""
    lines = tuple(
        part.strip()
        for part in re.split(r"[\n;]|,(?=\s*[A-Za-z][A-Za-z ]*,?\s*WI\b)", party.address)
        if part.strip()
    )
    found = ZIP.findall(party.address)
    return Recipient(
        role=role,
        name=party.name,
        address_lines=lines or (party.address,),
        zip=found[-1] if found else "",
        email=party.email,
        email_opt_in=party.email_opt_in,
    )


def trigger(event: Any) -> str:
    return f"{type(event).__name__}#{event.business_key()}"


def bill_recipient(event: BillIssued) -> Recipient:
    """The bill's addressee, with the premise served kept for later notices."""
    recipient = recipient_of(event.recipient, "customer")
    if event.service_address:
        recipient = recipient.model_copy(update={"service_address": event.service_address})
    return recipient


def billed_volume(event: BillIssued) -> Decimal:
    """The period's use in gallons (its kgal lines), for the usage chart."""
    return sum((_kgal(line.quantity) for line in event.lines if line.unit == "kgal"), Decimal(0)) * 1000


def plan_bill(event: BillIssued, contacts: Contacts, annual_notice: str | None) -> Planned:
    """N-BILL to the bill recipient; the first Sullivan bill of a year carries SU-ANNUAL-NOTICE."""
    recipient = bill_recipient(event)
    usage = contacts.remember_bill(
        event.tenant, event.account_id, recipient, event.parcel_id, event.period_start, billed_volume(event)
    )
    contacts.remember_bill_number(event.tenant, event.account_id, event.bill_id, event.bill_number)
    if event.owner is not None and event.parcel_id:
        contacts.remember_owner(
            event.tenant, event.parcel_id, recipient_of(event.owner, "owner"), event.account_id
        )
    due = annual_notice is not None and contacts.annual_notice_due(
        event.tenant, event.account_id, event.bill_date.year
    )
    document = bill_document(event, recipient, usage, annual_notice if due else None)
    return Planned([bill_notice(document, recipient, trigger(event))], document)


def bill_document(
    event: BillIssued, recipient: Recipient, usage: list[UsagePoint], annual_notice: str | None
) -> BillDocument:
    """The bill as the customer sees it, from its event, its addressee and its usage history."""
    return BillDocument(
        tenant=event.tenant,
        account_id=event.account_id,
        bill_id=event.bill_id,
        number=event.bill_number,
        period_start=event.period_start,
        period_end=event.period_end,
        bill_date=event.bill_date,
        due_date=event.due_date,
        customer_name=recipient.name,
        service_address=event.service_address or (event.parcel_id and f"Parcel {event.parcel_id}") or "",
        mailing_lines=recipient.address_lines,
        zip=recipient.zip,
        lines=tuple(
            BillLine(
                rule_id=line.rule_id,
                description=line.description,
                quantity=_decimal_or_none(line.quantity),
                unit=line.unit,
                rate=_decimal_or_none(line.rate),
                amount=line.amount,
                funds=dict(line.funds),
            )
            for line in event.lines
        ),
        total=event.total,
        previous_balance=event.previous_balance,
        payments_since=event.payments_since,
        amount_due=event.amount_due,
        usage=tuple(usage),
        reads=tuple(
            MeterRead(
                meter_id=read.meter_id,
                previous_read_on=read.previous_read_on,
                previous_reading=read.previous_reading,
                present_read_on=read.present_read_on,
                present_reading=read.present_reading,
                quality="estimated" if read.estimated else read.quality,
                consumption_gal=read.consumption_gal,
            )
            for read in event.reads
        ),
        estimated=event.estimated or any(read.estimated for read in event.reads),
        annual_notice=annual_notice,
        parcel_id=event.parcel_id,
    )


def plan_overdue(event: BillOverdue, contacts: Contacts) -> Planned:
    recipient = _known(contacts.recipient(event.tenant, event.account_id), event)
    notice_date = event.disconnection_eligible_on.fromordinal(
        event.disconnection_eligible_on.toordinal() - 10
    )
    return Planned(
        [
            disconnection_notice(
                **_common(event, recipient),
                service_address=_service_address(recipient),
                bill_id=printed_number(contacts, event),
                bill_date=event.bill_date,
                due_date=event.due_date,
                amount_due=event.amount_unpaid,
                notice_date=notice_date,
            )
        ]
    )


def plan_disconnection_eligible(event: DisconnectionEligible, contacts: Contacts) -> Planned:
    """GR-OVERDUE again: eligibility that begins on the day of the overdue notice's 10 days
    was announced by that notice (nothing more to send); eligibility that begins later (a
    payment arrangement broken, cancelled or ended with the bill unpaid, a payment reversed)
    gets a fresh disconnection notice dated that day, with its own 10 days (PSC 185.37)."""
    if event.reason == "notice_period_ended":
        return Planned([])
    recipient = _known(contacts.recipient(event.tenant, event.account_id), event)
    return Planned(
        [
            disconnection_notice(
                **_common(event, recipient),
                service_address=_service_address(recipient),
                bill_id=printed_number(contacts, event),
                bill_date=event.bill_date,
                due_date=event.due_date,
                amount_due=event.amount_unpaid,
                notice_date=event.eligible_on,
            )
        ]
    )


def announcing_trigger(event: DisconnectionEligibilityWithdrawn) -> str:
    """The trigger of the notice that announced the eligibility withdrawn: the overdue
    notice for the one that began when its 10 days ran out, else its own disconnection
    notice (``DisconnectionEligible``, same business key)."""
    if event.after_overdue_notice:
        return f"BillOverdue#{event.tenant}#{event.account_id}#{event.bill_id}"
    return f"DisconnectionEligible#{event.business_key()}"


def plan_eligibility_withdrawn(
    event: DisconnectionEligibilityWithdrawn, contacts: Contacts, announced: bool
) -> Planned:
    """GR-OVERDUE: a withdrawn eligibility gets no disconnection notice; where the notice
    that announced it was sent (``announced``), the customer gets a letter withdrawing it,
    on the channels of a disconnection notice. Otherwise nothing is sent."""
    if not announced:
        return Planned([])
    recipient = _known(contacts.recipient(event.tenant, event.account_id), event)
    return Planned(
        [
            disconnection_withdrawn_notice(
                **_common(event, recipient),
                service_address=_service_address(recipient),
                bill_id=printed_number(contacts, event),
                bill_date=event.bill_date,
                eligible_on=event.eligible_on,
                ended_on=event.ended_on,
                never_held=event.never_held,
                reason=event.reason,
                arrangement_id=event.arrangement_id,
                dated=event.withdrawn_on,
            )
        ]
    )


def plan_delinquent(event: BillDelinquent, contacts: Contacts) -> Planned:
    recipient = _known(contacts.recipient(event.tenant, event.account_id), event)
    return Planned(
        [
            delinquency_notice(
                **_common(event, recipient),
                bill_id=printed_number(contacts, event),
                bill_date=event.bill_date,
                delinquent_on=event.delinquent_on,
                principal=event.amount_delinquent,
                penalty_so_far=event.penalty,
            )
        ]
    )


def plan_adjustment_memo(event: BillAdjusted, contacts: Contacts) -> Planned:
    """X-IMMUTABLE: a credit or debit memo on an issued bill, to the bill's recipient (as a
    bill goes: email where opted in, else mail), naming the bill, the amount by fund and why."""
    recipient = _known(contacts.recipient(event.tenant, event.account_id), event)
    what = "Credit memo" if event.memo == "credit" else "Debit memo"

    def public(text: str) -> str:
        """Billing's words for the customer: the printed bill number for the internal id, and
        no event ids (they name nothing the customer has)."""
        text = EVENT_REF.sub("", text)
        if event.reverses_entry_id:  # a ledger entry's id: the charge it names, in words
            text = text.replace(event.reverses_entry_id, f"the late charge on bill {event.bill_number}")
        return text.replace(event.bill_id, event.bill_number)

    content = {
        "bill": event.bill_number,
        "period": f"{event.period_start.isoformat()} to {event.period_end.isoformat()}",
        "memo": f"{event.memo} of {money(abs(event.amount))}",
        "posted on": event.posted_on.isoformat(),
        **{f"fund {line.fund}": money(line.amount) for line in event.lines},
        "reason": public(event.reason),
        "reference": event.reference.replace(event.bill_id, event.bill_number),
    }
    if event.kind == "rerating" and event.from_volume_gal is not None and event.to_volume_gal is not None:
        content["consumption"] = f"{event.from_volume_gal} gal re-determined as {event.to_volume_gal} gal"
    if event.kind == "reversal" and event.reverses_entry_id:
        content["late charge reduced"] = f"the late charge on bill {event.bill_number}"
    if event.derivation and event.derivation != event.reason:
        content["derivation"] = public(event.derivation)
    if event.rule_ids:
        content["rules"] = ", ".join(event.rule_ids)
    if event.basis:  # a charge under a rule of the ordinance (GR-TOXIC): the rule and its basis
        content["charged under"] = event.rule_id
        content["basis"] = "; ".join(f"{k.replace('_', ' ')} {v}" for k, v in event.basis.items())
    return Planned(
        [
            delivery_notice(
                rule=Rule.ADJUSTMENT,
                **_common(event, recipient),
                subject=f"{what} on your bill {event.bill_number}: {money(event.amount)}",
                content=content,
                dated=event.posted_on,
            )
        ]
    )


def plan_tax_roll(event: TaxRollNoticed) -> Planned:
    owner = recipient_of(event.owner, "owner")
    occupant = recipient_of(event.occupant, "occupant")
    return Planned(
        tax_roll_notices(
            tenant=event.tenant,
            account_id=event.account_id,
            owner=owner,
            occupant=occupant,
            trigger=trigger(event),
            parcel_id=event.parcel_id,
            service_address=_service_address(occupant),
            year=event.year,
            noticed_on=event.noticed_on,
            arrears=event.arrears,
        )
    )


def plan_credit_revocation(event: CreditRevocationProposed, contacts: Contacts) -> Planned:
    known = contacts.owner(event.tenant, event.parcel_id)
    if known is None:
        raise NoAddress(f"no owner address on file for parcel {event.parcel_id} of {event.tenant}")
    owner, account_id = known
    return Planned(
        [
            credit_revocation_notice(
                **_common(event, owner, account_id=event.account_id or account_id),
                parcel_id=event.parcel_id,
                credit_percent=Decimal(0),
                noticed_on=event.notice_date,
                effective_on=event.revocation_date,
                reason=event.reason,
            )
        ]
    )


def plan_reconsideration_letter(event: ReconsiderationDecided, contacts: Contacts) -> Planned:
    known = contacts.owner(event.tenant, event.parcel_id)
    recipient = known[0] if known else _known(contacts.recipient(event.tenant, event.account_id), event)
    outcome = {
        "denied": "denied",
        "no_change": "no change (the difference is not more than 10%)",
        "changed": "changed",
    }
    return Planned(
        [
            delivery_notice(
                rule=Rule.RECONSIDER,
                **_common(event, recipient),
                subject=f"Decision on your reconsideration request {event.reconsideration_id}",
                content={
                    "parcel": event.parcel_id,
                    "bill": printed_number(contacts, event) or "the bill you asked to reconsider",
                    "decided on": event.decided_on.isoformat(),
                    "decision": outcome[event.outcome],
                    "reason": event.reason,
                    "ERUs before": str(event.eru_before),
                    "ERUs found": str(event.eru_found),
                    "credit to your account": f"${event.refund_amount:.2f}",
                    "appeal": f"You may appeal to the Village Board until {event.appeal_by.isoformat()} (PP-CWU-APPEAL).",
                },
                dated=event.decided_on,
            )
        ]
    )


def plan_appeal_letter(event: AppealDecided, contacts: Contacts) -> Planned:
    """PP-CWU-APPEAL: the Village Board's decision, mailed to the appellant (the parcel's
    owner, who asked for the reconsideration), like the reconsideration decision letter."""
    known = contacts.owner(event.tenant, event.parcel_id)
    if known is None:
        raise NoAddress(f"no owner address on file for parcel {event.parcel_id} of {event.tenant}")
    owner, account_id = known
    votes = f"{event.votes_to_reverse} to reverse, {event.votes_to_uphold} to uphold"
    outcome = {
        "reversed": "the reconsideration decision is reversed (a majority of the members voting)",
        "upheld": "the reconsideration decision stands (no majority of the members voting to reverse it)",
    }
    return Planned(
        [
            delivery_notice(
                rule=Rule.APPEAL,
                **_common(event, owner, account_id=account_id),
                subject=f"Village Board decision on your appeal {event.appeal_id}",
                content={
                    "appeal": event.appeal_id,
                    "reconsideration": event.reconsideration_id,
                    "parcel": event.parcel_id,
                    "hearing": event.hearing_date.isoformat(),
                    "votes": votes,
                    "decision": f"{event.outcome}: {outcome[event.outcome]}",
                },
                dated=event.hearing_date,
            )
        ]
    )


def plan_satellite_results(event: SatelliteResultsDelivered, contacts: Contacts) -> Planned:
    """PP-SEW-SAT-SAMPLE: the certified results to the satellite system, due by ``due_on``."""
    recipient = _known(contacts.recipient(event.tenant, event.account_id), event)
    content = {
        "sample": event.sample_id,
        "sampled on": event.sampled_on.isoformat(),
        **{
            f"{result.parameter} (mg/l)": (result.reported or str(result.value))
            + (f", {result.lab}" if result.lab else "")
            + (f", analysed {result.analysed_on.isoformat()}" if result.analysed_on else "")
            for result in event.results
        },
        "certified results released on": event.delivered_on.isoformat(),
        "resample": "You may request a resample within 3 days of receiving this result (PP-SEW-SAT-RESAMPLE).",
    }
    return Planned(
        [
            delivery_notice(
                rule=Rule.SAT_SAMPLE,
                **_common(event, recipient),
                subject=f"Certified lab results for sample {event.sample_id} of {event.sampled_on.isoformat()}",
                content=content,
                deadline=event.due_on,
                dated=event.delivered_on,
            )
        ]
    )


def plan_satellite_reminder(event: SatelliteResultsDueSoon, contacts: Contacts) -> Planned:
    """PP-SEW-SAT-SAMPLE: the daily run's reminder that a satellite sample's certified
    results are due by ``due_on`` (18 working days after it was taken), emailed to the
    satellite system and logged under its account, once per sample."""
    recipient = _known(contacts.recipient(event.tenant, event.account_id), event)
    content = {
        "sample": event.sample_id,
        "sampled on": event.sampled_on.isoformat(),
        "certified results due by": f"{event.due_on.isoformat()} (18 working days after sampling)",
    }
    if event.reminded_on is not None:
        content["reminder of"] = event.reminded_on.isoformat()
    return Planned(
        [
            delivery_notice(
                rule=Rule.SAT_SAMPLE,
                **_common(event, recipient),
                subject=f"Reminder: certified lab results for sample {event.sample_id} of "
                f"{event.sampled_on.isoformat()} are due by {event.due_on.isoformat()}",
                content=content,
                deadline=event.due_on,
            )
        ]
    )


def plan_satellite_flow(event: SatelliteFlowReady, contacts: Contacts) -> Planned:
    """PP-SEW-SAT-FLOW: the month's flow data to the satellite system, due by ``provide_by``."""
    if event.account_id is None:
        raise NoAddress(f"flow monitor {event.meter_id} of {event.tenant} has no satellite account")
    recipient = _known(contacts.recipient(event.tenant, event.account_id), event)
    return Planned(
        [
            delivery_notice(
                rule=Rule.SAT_FLOW,
                **_common(event, recipient),
                subject=f"Monthly flow data for {event.month} (flow monitor {event.meter_id})",
                content={
                    "month": event.month,
                    "flow monitor": event.meter_id,
                    "volume (gallons)": str(event.volume_gal),
                    "days with data": str(event.days_with_data),
                    "downloaded on": event.downloaded_on.isoformat(),
                },
                deadline=event.provide_by,
            )
        ]
    )


def plan_report_reminder(event: AnnualReportReminderDue, contacts: Contacts) -> Planned:
    """PP-SEW-REPORT: remind a discharger who has not filed the annual report."""
    recipient = _known(contacts.recipient(event.tenant, event.account_id), event)
    return Planned(
        [
            delivery_notice(
                rule=Rule.REPORT,
                **_common(event, recipient),
                subject=f"Reminder: your {event.year} annual discharger report is due {event.due_on.isoformat()}",
                content={
                    "report": f"annual summary of sampling results and maintenance for {event.year}",
                    "due on": event.due_on.isoformat(),
                },
                deadline=event.due_on,
                dated=event.reminder_on,
            )
        ]
    )


def _common(event: Any, recipient: Recipient, *, account_id: str | None = None) -> dict[str, Any]:
    """What every planned notice names alike: the tenant, the account it is logged under
    (the event's, unless the addressee was found through another), the addressee and the
    trigger that makes the notice once per event (its business key)."""
    return {
        "tenant": event.tenant,
        "account_id": event.account_id if account_id is None else account_id,
        "recipient": recipient,
        "trigger": trigger(event),
    }


def printed_number(contacts: Contacts, event: Any) -> str:
    """The number printed on the event's bill (kept from its ``BillIssued``); "" when that
    bill was never seen here: a letter then names the bill by its date, never by billing's
    internal ``bill_id``."""
    return contacts.bill_number(event.tenant, event.account_id, event.bill_id) or ""


def _known(recipient: Recipient | None, event: Any) -> Recipient:
    if recipient is None:
        raise NoAddress(f"no address on file for account {event.account_id} of {event.tenant}")
    return recipient


def _service_address(recipient: Recipient) -> str:
    """The premise served as the last bill gave it; the mailing address where none was given."""
    return recipient.service_address or ", ".join(recipient.address_lines)


def _kgal(quantity: str) -> Decimal:
    value = _decimal_or_none(quantity)
    return value if value is not None else Decimal(0)


def _decimal_or_none(text: str) -> Decimal | None:
    try:
        return Decimal(text) if text not in ("", None) else None
    except ArithmeticError:
        return None
