"""What each rule's notice says: the request built from the facts its event carries.

One function per row of RULES.md's notices table. Each takes plain values (dates,
Decimals, recipients), so the handlers map any producer's event onto them and the
content a rule requires is checked here, in one place, by the tests.
"""

from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from common.dates import add_months
from common.money import CENT
from notices.domain.documents import BillDocument, CombinedBillDocument
from notices.domain.model import NoticeRequest, Recipient, Rule, money


def bill_notice(doc: BillDocument, recipient: Recipient, trigger: str) -> NoticeRequest:
    """N-BILL: the bill itself; the PDF is attached to the email or mailed. A bill that
    leaves the account in credit says so: a credit balance, nothing due (never a negative
    amount "due")."""
    balance = _balance(doc.amount_due, doc.due_date)
    return NoticeRequest(
        rule=Rule.BILL,
        tenant=doc.tenant,
        account_id=doc.account_id,
        recipient=recipient,
        trigger=trigger,
        subject=f"Your bill {doc.printed_number}: {balance}",
        content={
            "balance": balance[:1].upper() + balance[1:],
            "bill_id": doc.printed_number,
            "period_start": doc.period_start.isoformat(),
            "period_end": doc.period_end.isoformat(),
            "due_date": doc.due_date.isoformat(),
            "amount_due": money(doc.amount_due),
            "total": money(doc.total),
            "lines": [
                {"rule_id": line.rule_id, "description": line.description, "amount": money(line.amount)}
                for line in doc.lines
            ],
            "annual_notice": doc.annual_notice or "",
        },
        attach_bill_pdf=True,
        dated=doc.bill_date,
    )


FUND_NAMES = {
    "om": "operation and maintenance",
    "replacement": "equipment replacement",
    "debt": "debt service",
}


def funds_text(funds: dict[str, Decimal]) -> str:
    """A bill's or line's funds as printed: ``operation and maintenance $39.60``."""
    return "; ".join(f"{FUND_NAMES.get(fund, fund)} {money(amount)}" for fund, amount in funds.items())


def _balance(amount_due: Decimal, due_date: date) -> str:
    """What a bill asks: a credit balance with nothing due, nothing due, or the amount by its date."""
    if amount_due < 0:
        return f"a credit balance of {money(-amount_due)}, nothing due"
    if amount_due == 0:
        return "nothing due"
    return f"{money(amount_due)} due {due_date.isoformat()}"


def combined_bill_notice(doc: CombinedBillDocument, recipient: Recipient, trigger: str) -> NoticeRequest:
    """N-BILL for a Pleasant Prairie customer's combined bill (PP-CWU-BILLING): one notice,
    a section per utility with that bill's number, lines (rule ID, quantity x rate), totals,
    due date and funds, then the amount to remit. A section in credit says so and adds
    nothing to what is due (its credit stays on its own account)."""
    balance = _balance(doc.amount_due, doc.due_date)
    sections = []
    for section in doc.sections:
        sections.append(
            {
                "tenant": section.tenant,
                "account_id": section.account_id,
                "bill_id": section.printed_number,
                "period_start": section.period_start.isoformat(),
                "period_end": section.period_end.isoformat(),
                "bill_date": section.bill_date.isoformat(),
                "due_date": section.due_date.isoformat(),
                "lines": [
                    {
                        "rule_id": line.rule_id,
                        "description": line.description,
                        "derivation": _derivation(line.quantity, line.unit, line.rate),
                        "amount": money(line.amount),
                        "funds": funds_text(line.funds),
                    }
                    for line in section.lines
                ],
                "total": money(section.total),
                "previous_balance": money(section.previous_balance),
                "payments_since": money(section.payments_since),
                "amount_due": money(section.amount_due),
                "balance": _balance(section.amount_due, section.due_date),
                "funds": funds_text(section.funds()),
            }
        )
    return NoticeRequest(
        rule=Rule.BILL,
        tenant=doc.tenant,
        account_id=doc.account_id,
        recipient=recipient,
        trigger=trigger,
        subject=f"Your combined sewer and stormwater bill {doc.period_start:%B %Y}: {balance}",
        content={
            "combined": True,
            "balance": balance[:1].upper() + balance[1:],
            "bill_id": doc.printed_number,
            "period_start": doc.period_start.isoformat(),
            "period_end": doc.period_end.isoformat(),
            "amount_due": money(doc.amount_due),
            "due_date": doc.due_date.isoformat(),
            "sections": sections,
        },
        attach_bill_pdf=True,
        dated=max(s.bill_date for s in doc.sections),
    )


def _derivation(quantity: Decimal | None, unit: str, rate: Decimal | None) -> str:
    if quantity is None or rate is None:
        return ""
    return f"{quantity} {unit} x {rate}".replace("  ", " ")


def disconnection_notice(
    *,
    tenant: str,
    account_id: str,
    recipient: Recipient,
    trigger: str,
    service_address: str,
    bill_id: str,
    bill_date: date,
    due_date: date,
    amount_due: Decimal,
    notice_date: date,
    late_charge: Decimal | None = None,
) -> NoticeRequest:
    """GR-OVERDUE with what Wis. Admin. Code PSC 185.37 requires of a disconnection notice.

    ``bill_id`` is the bill number as printed on the bill. Service may be disconnected
    unless paid or arranged within 10 days of the notice (GR-OVERDUE), and never before the
    bill's due date (GR-OVERDUE, RULES.md): the date after which it may be disconnected is
    the later of the notice date + 10 days and the due date. The letter is dated the
    notice date. The amount due says whether it includes the late charge: ``late_charge``
    is the GR-LATE charge included in ``amount_due``, None when it includes none (billing's
    unpaid amount is the bill's charges only).
    """
    from datetime import timedelta

    disconnect_after = max(notice_date + timedelta(days=10), due_date)
    if late_charge:
        amount_note = f"includes the late charge of {money(late_charge)}"
    else:
        amount_note = "does not include late charges"
    return NoticeRequest(
        rule=Rule.GR_OVERDUE,
        tenant=tenant,
        account_id=account_id,
        recipient=recipient,
        trigger=trigger,
        subject=f"Disconnection notice: {money(amount_due)} overdue on account {account_id}",
        content={
            "service_address": service_address,
            "bill_id": bill_id,
            "bill_date": bill_date.isoformat(),
            "due_date": due_date.isoformat(),
            "amount_due": money(amount_due),
            "amount_note": amount_note,
            "disconnect_after": disconnect_after.isoformat(),
        },
        dated=notice_date,
    )


def disconnection_withdrawn_notice(
    *,
    tenant: str,
    account_id: str,
    recipient: Recipient,
    trigger: str,
    service_address: str,
    bill_id: str,
    bill_date: date,
    eligible_on: date,
    ended_on: date,
    never_held: bool,
    reason: str,
    arrangement_id: str | None,
    dated: date | None = None,
) -> NoticeRequest:
    """GR-OVERDUE: the disconnection notice sent for a bill is withdrawn, because the bill
    was paid (a payment dated before the disconnection date counts, however late it was
    posted) or a payment arrangement was made; service will not be disconnected for it."""
    why = "a payment arrangement was made" + (f" ({arrangement_id})" if arrangement_id else "")
    if reason == "paid":
        why = "the bill is paid"
    since = (
        f"it should not have been sent: {why} before {eligible_on.isoformat()}"
        if never_held
        else f"{why} on or before {ended_on.isoformat()}"
    )
    return NoticeRequest(
        rule=Rule.GR_OVERDUE,
        tenant=tenant,
        account_id=account_id,
        recipient=recipient,
        trigger=trigger,
        subject=(
            f"Disconnection notice withdrawn: bill {bill_id} on account {account_id}"
            if bill_id
            else f"Disconnection notice withdrawn: your bill of {bill_date.isoformat()} on account {account_id}"
        ),
        content={
            "withdrawn": True,
            "service_address": service_address,
            "bill_id": bill_id,
            "bill_date": bill_date.isoformat(),
            "eligible_on": eligible_on.isoformat(),
            "why": since,
        },
        dated=dated,
    )


def delinquency_notice(
    *,
    tenant: str,
    account_id: str,
    recipient: Recipient,
    trigger: str,
    bill_id: str,
    bill_date: date,
    delinquent_on: date,
    principal: Decimal,
    penalty_so_far: Decimal,
) -> NoticeRequest:
    """PP-CWU-DELINQUENT with the penalty so far and how it grows (PP-CWU-PENALTY: 1% of
    the delinquent principal on the day it became delinquent and on each monthly
    anniversary of that day while unpaid). Dated the day it became delinquent; the amount
    now due says that it includes the penalty (the late charge) so far, or none."""
    monthly = (principal * Decimal("0.01")).quantize(CENT, ROUND_HALF_UP)
    months_charged = (penalty_so_far / monthly).to_integral_value() if monthly else Decimal(0)
    next_on = add_months(delinquent_on, int(months_charged) if months_charged > 0 else 1)
    return NoticeRequest(
        rule=Rule.PP_DELINQUENT,
        tenant=tenant,
        account_id=account_id,
        recipient=recipient,
        trigger=trigger,
        subject=f"Delinquency notice: bill {bill_id or 'of ' + bill_date.isoformat()} is past due",
        content={
            "bill_id": bill_id,
            "bill_date": bill_date.isoformat(),
            "delinquent_on": delinquent_on.isoformat(),
            "principal": money(principal),
            "penalty_so_far": money(penalty_so_far),
            "amount_due": money(principal + penalty_so_far),
            "monthly_penalty": money(monthly),
            "next_penalty_on": next_on.isoformat(),
            "amount_note": (
                f"includes the late charge (PP-CWU-PENALTY) of {money(penalty_so_far)}"
                if penalty_so_far > 0
                else "does not include late charges"
            ),
        },
        dated=delinquent_on,
    )


def tax_roll_notices(
    *,
    tenant: str,
    account_id: str,
    owner: Recipient,
    occupant: Recipient | None,
    trigger: str,
    parcel_id: str,
    service_address: str,
    year: int,
    noticed_on: date,
    arrears: Decimal,
) -> list[NoticeRequest]:
    """X-TAXROLL (PP-CWU-LIEN, GR-TAXROLL): to the owner of record and to the occupant."""
    rule = Rule.GR_TAXROLL if tenant == "grafton-sewer" else Rule.PP_LIEN
    penalty = (arrears * Decimal("0.10")).quantize(CENT, ROUND_HALF_UP)
    content = {
        "parcel_id": parcel_id,
        "service_address": service_address,
        "year": str(year),
        "noticed_on": noticed_on.isoformat(),
        "arrears": money(arrears),
        "penalty": money(penalty),
        "total_if_unpaid": money(arrears + penalty),
    }
    recipients = [owner] + ([occupant] if occupant is not None and occupant.name != owner.name else [])
    return [
        NoticeRequest(
            rule=rule,
            tenant=tenant,
            account_id=account_id,
            recipient=recipient,
            trigger=trigger,
            subject=f"Unpaid charges on parcel {parcel_id} will go on the {year} tax roll",
            content=content,
            dated=noticed_on,
        )
        for recipient in recipients
    ]


def credit_revocation_notice(
    *,
    tenant: str,
    account_id: str,
    recipient: Recipient,
    trigger: str,
    parcel_id: str,
    credit_percent: Decimal,
    noticed_on: date,
    effective_on: date,
    reason: str,
) -> NoticeRequest:
    """PP-CWU-CREDIT-REVOKE: written notice at least 30 days before the revocation."""
    if (effective_on - noticed_on).days < 30:
        raise ValueError("a credit revocation notice must precede the revocation by at least 30 days")
    return NoticeRequest(
        rule=Rule.CREDIT_REVOKE,
        tenant=tenant,
        account_id=account_id,
        recipient=recipient,
        trigger=trigger,
        subject=f"Proposed revocation of the stormwater credit on parcel {parcel_id}",
        content={
            "parcel_id": parcel_id,
            "credit_percent": str(credit_percent),
            "noticed_on": noticed_on.isoformat(),
            "effective_on": effective_on.isoformat(),
            "reason": reason,
        },
        dated=noticed_on,
    )


def delivery_notice(
    *,
    rule: Rule,
    tenant: str,
    account_id: str,
    recipient: Recipient,
    trigger: str,
    subject: str,
    content: dict[str, str],
    deadline: date | None = None,
    dated: date | None = None,
) -> NoticeRequest:
    """Satellite deliveries (PP-SEW-SAT-SAMPLE, PP-SEW-SAT-FLOW), report reminders
    (PP-SEW-REPORT) and decision letters (PP-CWU-RECONSIDER, PP-CWU-APPEAL)."""
    return NoticeRequest(
        rule=rule,
        tenant=tenant,
        account_id=account_id,
        recipient=recipient,
        trigger=trigger,
        subject=subject,
        content=content,
        deadline=deadline,
        dated=dated,
    )
