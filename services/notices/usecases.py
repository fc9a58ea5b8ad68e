"""Notices' use cases: an incoming event -> the notices its rule requires, delivered once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from billing.events import BillAdjusted, BillDelinquent, BillIssued, BillOverdue, TaxRollNoticed
from common.clock import Clock
from common.errors import PermanentError, TransientError
from common.events import Event
from common.tariffs import TariffBook
from metering.events import SatelliteFlowReady
from notices.domain.delivery import Delivery, SendFailed, deliver
from notices.intake import (
    Contacts,
    NoAddress,
    Planned,
    plan_adjustment_memo,
    plan_appeal_letter,
    plan_bill,
    plan_credit_revocation,
    plan_delinquent,
    plan_overdue,
    plan_reconsideration_letter,
    plan_report_reminder,
    plan_satellite_flow,
    plan_satellite_results,
    plan_tax_roll,
)
from sampling.events import AnnualReportReminderDue, SatelliteResultsDelivered
from stormwater.events import AppealDecided, CreditRevocationProposed, ReconsiderationDecided

# detail-type -> event class; the queue's rule lets only these through.
CONSUMED: dict[str, type[Event]] = {
    cls.detail_type(): cls
    for cls in (
        BillIssued,
        BillOverdue,
        BillDelinquent,
        BillAdjusted,
        TaxRollNoticed,
        CreditRevocationProposed,
        ReconsiderationDecided,
        AppealDecided,
        SatelliteFlowReady,
        SatelliteResultsDelivered,
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


def annual_rate_notice(book: TariffBook, event: BillIssued) -> str | None:
    """SU-ANNUAL-NOTICE: the rate, and the part of this bill's use charge for treatment."""
    if event.tenant != "sullivan-sewer":
        return None
    tariff: Any = book.in_force(event.tenant, event.period_start)
    rate = tariff.use_rate_per_kgal.value
    share = tariff.treatment_portion.value
    use = sum((line.amount for line in event.lines if line.rule_id == "SU-USE"), Decimal(0))
    portion = (use * share).quantize(Decimal("0.01"), ROUND_HALF_UP)
    return (
        f"The sewer use charge is ${rate} per 1,000 gallons (tariff {tariff.version_id}). "
        f"{share * 100:.0f}% of it pays for wastewater treatment: ${portion} of this bill's "
        f"sewer use charge of ${use:.2f}."
    )


def handle_event(
    event: Event,
    *,
    contacts: Contacts,
    ports: dict[str, Any],
    clock: Clock,
    book: TariffBook,
    attempt: int = 1,
) -> Outcome:
    now: datetime = clock.now()
    today = _local_day(now)
    try:
        planned = _plan(event, contacts, book)
    except NoAddress as exc:
        raise UnaddressableNotice(str(exc)) from exc
    sent = already = 0
    for request in planned.requests:
        try:
            delivery: Delivery = deliver(
                request, now=now, today=today, bill=planned.bill, attempt=attempt, **ports
            )
        except SendFailed as exc:
            raise TransientError(str(exc)) from exc
        sent += len(delivery.sent)
        already += len(delivery.already_sent)
    if isinstance(event, BillIssued) and planned.bill is not None and planned.bill.annual_notice:
        contacts.annual_notice_sent(event.tenant, event.account_id, event.bill_date.year)
    return Outcome(event=type(event).__name__, sent=sent, already_sent=already)


def _plan(event: Event, contacts: Contacts, book: TariffBook) -> Planned:
    planners: dict[type[Event], Callable[[Any], Planned]] = {
        BillIssued: lambda e: plan_bill(e, contacts, annual_rate_notice(book, e)),
        BillOverdue: lambda e: plan_overdue(e, contacts),
        BillDelinquent: lambda e: plan_delinquent(e, contacts),
        BillAdjusted: lambda e: plan_adjustment_memo(e, contacts),
        TaxRollNoticed: plan_tax_roll,
        CreditRevocationProposed: lambda e: plan_credit_revocation(e, contacts),
        ReconsiderationDecided: lambda e: plan_reconsideration_letter(e, contacts),
        AppealDecided: lambda e: plan_appeal_letter(e, contacts),
        SatelliteFlowReady: lambda e: plan_satellite_flow(e, contacts),
        SatelliteResultsDelivered: lambda e: plan_satellite_results(e, contacts),
        AnnualReportReminderDue: lambda e: plan_report_reminder(e, contacts),
    }
    return planners[type(event)](event)


def _local_day(now: datetime) -> date:
    from zoneinfo import ZoneInfo

    return now.astimezone(ZoneInfo("America/Chicago")).date()
