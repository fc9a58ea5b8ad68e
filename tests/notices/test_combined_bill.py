"""PP-CWU-BILLING: a Pleasant Prairie customer with a sewer and a stormwater account gets one
combined bill document a month, each utility's bill its own section (pure domain rules).

Figures (tests/notices/pp_bills.py): sewer 14.10 + 4 kgal x 4.49 = 17.96 -> 32.06; stormwater
2.00 + 1.00 ERU x 6.00 -> 8.00; both billed 2026-10-01, due 2026-10-21.
"""

from __future__ import annotations

import io
from datetime import date
from decimal import Decimal
from typing import Any

from pp_bills import SEWER, STORMWATER, pp_bill
from pypdf import PdfReader

from billing.events import BillIssued
from notices.app.planning import plan_bill, trigger
from notices.domain import combined
from notices.domain.combined import Alone, Claim, HeldBill, Hold, Nothing, Propose, Send
from notices.domain.documents import UsagePoint
from notices.domain.model import Channel, channels
from notices.domain.requests import combined_bill_notice
from notices.rendering import bill_pdf, render

BILLED = date(2026, 10, 1)


class NoHistory:
    """Contacts that keep nothing (the pairing does not depend on them)."""

    def remember_bill(self, *args: Any) -> list[UsagePoint]:
        return []

    def remember_owner(self, *args: Any) -> None: ...

    def remember_bill_number(self, *args: Any) -> None: ...


def held(event: BillIssued) -> HeldBill:
    planned = plan_bill(event, NoHistory(), None)  # type: ignore[arg-type]
    assert planned.bill is not None
    return HeldBill(document=planned.bill, recipient=planned.requests[0].recipient, trigger=trigger(event))


def group_of(event: BillIssued) -> str | None:
    bill = held(event)
    return combined.pairing_key(bill.document, bill.recipient, event.parcel_id)


def test_one_parcel_one_bill_recipient_and_one_month_make_one_group() -> None:
    sewer = group_of(pp_bill(SEWER, "S-1"))
    assert sewer is not None
    # The same customer written differently in the two utilities' files is the same customer.
    assert (
        group_of(
            pp_bill(STORMWATER, "W-1", name="ADA  LOVELACE", address="12 Oak St.; Pleasant Prairie WI 53158")
        )
        == sewer
    )
    # Another parcel, another bill recipient (the owner billed for stormwater, the tenant for
    # sewer), another month: other groups.
    assert group_of(pp_bill(STORMWATER, "W-1", parcel="PP-91-4-122-0200")) != sewer
    assert group_of(pp_bill(STORMWATER, "W-1", name="Oak Street Rentals LLC")) != sewer
    assert group_of(pp_bill(STORMWATER, "W-1", period_start=date(2026, 10, 1))) != sewer


def test_a_bill_that_cannot_have_a_partner_is_never_held() -> None:
    # A sewer account without a parcel in the accounts file, and the other utilities' bills.
    assert group_of(pp_bill(SEWER, "S-1", parcel=None)) is None
    grafton = pp_bill(SEWER, "G-1").model_copy(update={"tenant": "grafton-sewer"})
    assert group_of(grafton) is None


def test_the_first_bill_waits_and_the_second_claims_the_combined_document_once() -> None:
    sewer, storm = held(pp_bill(SEWER, "S-1")), held(pp_bill(STORMWATER, "W-1"))
    assert combined.on_arrival(sewer, [sewer], None, BILLED) == Hold()
    decision = combined.on_arrival(storm, [sewer, storm], None, BILLED)
    both = Claim(members=tuple(sorted((sewer.member, storm.member))), by=storm.trigger)
    assert decision == Propose(both)
    # Redeliveries: the claimer resends the same document (the notice log skips what went),
    # the other bill sends nothing; a second sewer account of the same customer on the parcel
    # arriving after the document went is an ordinary bill.
    assert combined.on_arrival(storm, [sewer, storm], both, BILLED) == Send(both)
    assert combined.on_arrival(sewer, [sewer, storm], both, BILLED) == Nothing()
    late = held(pp_bill(SEWER, "S-2"))
    assert combined.on_arrival(late, [sewer, storm, late], both, BILLED) == Alone()
    # Sections: sewer first, then stormwater, whichever arrived first.
    assert [b.document.tenant for b in combined.claimed([storm, sewer], both)] == [SEWER, STORMWATER]


def test_a_bill_whose_partner_has_not_come_by_the_release_day_goes_alone() -> None:
    sewer = held(pp_bill(SEWER, "S-1"))
    assert sewer.release_on == date(2026, 10, 2)  # the day after the bill date
    alone = Claim(members=(sewer.member,), by=combined.RELEASE)
    assert combined.on_release([sewer], None) == Propose(alone)
    assert combined.on_release([sewer], alone) == Send(alone)  # the release run retried
    other = Claim(members=(sewer.member,), by="BillIssued#x")
    assert combined.on_release([sewer], other) == Nothing()
    # Its partner, later: the group went without it, so it goes alone at once.
    storm = held(pp_bill(STORMWATER, "W-1"))
    assert combined.on_arrival(storm, [sewer, storm], alone, date(2026, 10, 3)) == Alone()
    # A bill handled after its own release day (a late redelivery) is not held again.
    assert combined.on_arrival(sewer, [sewer], None, date(2026, 10, 2)) == Propose(
        Claim(members=(sewer.member,), by=sewer.trigger)
    )


def test_the_amount_due_adds_each_utilitys_and_never_nets_a_credit_between_them() -> None:
    sewer, storm = held(pp_bill(SEWER, "S-1")), held(pp_bill(STORMWATER, "W-1"))
    document = combined.combined_document([storm, sewer])
    # 32.06 + 8.00 = 40.06, due 2026-10-21.
    assert [s.amount_due for s in document.sections] == [Decimal("32.06"), Decimal("8.00")]
    assert (document.amount_due, document.due_date) == (Decimal("40.06"), date(2026, 10, 21))
    assert [s.funds() for s in document.sections] == [{"om": Decimal("32.06")}, {"om": Decimal("8.00")}]
    # A stormwater credit of 10.00 leaves -10.00 + 8.00 = -2.00 on that account (a credit
    # balance): it stays there, and the customer remits the sewer's 32.06 only.
    credit = held(pp_bill(STORMWATER, "W-1", previous_balance="-10.00"))
    with_credit = combined.combined_document([sewer, credit])
    assert with_credit.sections[1].amount_due == Decimal("-2.00")
    assert with_credit.amount_due == Decimal("32.06")


def test_the_combined_bill_goes_by_email_only_where_both_accounts_opted_in_with_one_address() -> None:
    sewer = held(pp_bill(SEWER, "S-1", opted_in=True))
    storm = held(pp_bill(STORMWATER, "W-1", opted_in=True))
    assert channels(
        combined_bill_notice_of([sewer, storm]).rule, combined.combined_recipient([sewer, storm])
    ) == (Channel.EMAIL,)
    paper = held(pp_bill(STORMWATER, "W-1", opted_in=False))
    assert channels(
        combined_bill_notice_of([sewer, paper]).rule, combined.combined_recipient([sewer, paper])
    ) == (Channel.MAIL,)
    elsewhere = held(pp_bill(STORMWATER, "W-1", opted_in=True, email="ada@work.example.org"))
    assert combined.combined_recipient([sewer, elsewhere]).email_opt_in is False


def combined_bill_notice_of(bills: list[HeldBill]) -> Any:
    document = combined.combined_document(bills)
    return combined_bill_notice(
        document, combined.combined_recipient(bills), combined.combined_trigger("g", bills)
    )


def test_the_combined_pdf_and_email_carry_both_bills_each_with_its_lines_totals_and_funds() -> None:
    bills = [held(pp_bill(SEWER, "S-1")), held(pp_bill(STORMWATER, "W-1"))]
    document = combined.combined_document(bills)
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(bill_pdf(document))).pages)
    for phrase in (
        "Village of Pleasant Prairie: combined utility bill",
        "Ada Lovelace",
        "12 Oak St",
        # The sewer utility's bill, its lines with rule IDs and quantity x rate, its totals.
        "Village of Pleasant Prairie Sewer Utility",
        "Bill PPS-202609-S-1",
        "Account S-1",
        "PP-SEW-SVC",
        "PP-SEW-VOL",
        "4 kgal",
        "4.49",
        "$17.96",
        "Funds of Village of Pleasant Prairie Sewer Utility: operation and maintenance $32.06",
        # The stormwater utility's bill.
        "Village of Pleasant Prairie Clean Water Utility",
        "Bill PPW-202609-W-1",
        "PP-CWU-BASE",
        "PP-CWU-ERU",
        "1.00 ERU",
        "Funds of Village of Pleasant Prairie Clean Water Utility: operation and maintenance $8.00",
        "Due date October 21, 2026",  # issue 34: US dates on the PDF (the email keeps ISO)
        "$32.06 due October 21, 2026",
        "$8.00 due October 21, 2026",
        # One amount to remit: 32.06 + 8.00.
        "Total amount due $40.06",
        "REMITTANCE STUB (combined bill)",
    ):
        assert phrase in text, phrase
    notice = combined_bill_notice_of(bills)
    email = render(notice)
    assert notice.subject == "Your combined sewer and stormwater bill September 2026: $40.06 due 2026-10-21"
    for phrase in (
        "Village of Pleasant Prairie Sewer Utility: account S-1, bill PPS-202609-S-1",
        "PP-SEW-VOL  Volume charge (4 kgal x 4.49): $17.96 [operation and maintenance $17.96]",
        "Village of Pleasant Prairie Clean Water Utility: account W-1, bill PPW-202609-W-1",
        "PP-CWU-ERU  Stormwater charge (1.00 ERU x 6.00): $6.00",
        "Amount due to Village of Pleasant Prairie Clean Water Utility: $8.00 due 2026-10-21",
        "Total amount due: $40.06, due 2026-10-21.",
    ):
        assert phrase in email.text, phrase
    assert "PPW-202609-W-1" in email.html and "$40.06" in email.html
