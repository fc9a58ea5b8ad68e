"""Each notice carries what its rule requires (RULES.md notices table), checked item by item."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from notices.domain.model import Channel, Recipient, Rule, channels, notice_id
from notices.domain.requests import (
    bill_notice,
    credit_revocation_notice,
    delinquency_notice,
    disconnection_notice,
    tax_roll_notices,
)
from notices.rendering import render


def test_the_disconnection_notice_carries_every_item_psc_185_37_requires(paper: Recipient) -> None:
    request = disconnection_notice(
        tenant="grafton-sewer",
        account_id="GR-1001",
        recipient=paper,
        trigger="BillOverdue#GR-2026Q3-000001",
        service_address="1200 Wisconsin Ave, Grafton WI",
        bill_id="GR-2026Q3-000001",
        bill_date=date(2026, 10, 1),
        due_date=date(2026, 11, 1),
        amount_due=Decimal("194.50"),
        notice_date=date(2026, 10, 21),  # day 20 after issue (GR-OVERDUE: no sooner)
    )
    text = render(request).text
    required = {
        "customer name": "Grace Hopper",
        "customer address": "1 Navy Way",
        "service address": "Service address: 1200 Wisconsin Ave, Grafton WI",
        "amount due": "Amount due: $194.50",
        "the reason": "Reason: your sewer bill GR-2026Q3-000001",
        # notice 2026-10-21 + 10 days (GR-OVERDUE) = 2026-10-31, before the due date
        # 2026-11-01: never before the due date (GR-OVERDUE), so 2026-11-01
        "date after which service may be disconnected": "may be disconnected after 2026-11-01",
        "how to pay": "How to pay:",
        "how to dispute": "To dispute this bill",
        "deferred payment agreement": "deferred payment agreement",
        "utility telephone": "(262) 555-0175",
        "21 days on serious illness": "service will continue for up to 21 days",
        "statement of serious illness": "statement of serious illness",
        "right to contact the PSC": "right to contact the Public Service Commission of Wisconsin",
    }
    missing = [item for item, phrase in required.items() if phrase not in text]
    assert missing == []


def test_the_delinquency_notice_states_the_penalty_so_far_and_how_it_grows(paper: Recipient) -> None:
    # 120.00 delinquent since 2026-03-03 with two months' penalty: 2 x 1% x 120.00 = 2.40.
    request = delinquency_notice(
        tenant="pleasant-prairie-stormwater",
        account_id="PPS-9",
        recipient=paper,
        trigger="BillDelinquent#B-1",
        bill_id="B-1",
        bill_date=date(2026, 2, 1),
        delinquent_on=date(2026, 3, 3),
        principal=Decimal("120.00"),
        penalty_so_far=Decimal("2.40"),
    )
    text = render(request).text
    assert "Penalty so far: $2.40" in text
    assert "Amount now due: $122.40" in text
    assert "1% per month or part of a month ($1.20 each month on $120.00)" in text
    # Two charged (03-03 and 04-03): the next falls on 2026-05-03.
    assert "The next 1% is added on 2026-05-03" in text


def test_the_tax_roll_notice_goes_to_owner_and_occupant_with_the_ten_percent(paper: Recipient) -> None:
    owner = Recipient(
        role="owner", name="Landlord LLC", address_lines=("9 Main St", "Grafton, WI 53024"), zip="53024"
    )
    occupant = paper.model_copy(update={"role": "occupant"})
    notices = tax_roll_notices(
        tenant="grafton-sewer",
        account_id="GR-1001",
        owner=owner,
        occupant=occupant,
        trigger="TaxRollNoticeDue#2026#GR-1001",
        parcel_id="P-77",
        service_address="1200 Wisconsin Ave",
        year=2026,
        noticed_on=date(2026, 10, 15),
        arrears=Decimal("194.55"),
    )
    assert [n.recipient.role for n in notices] == ["owner", "occupant"]
    assert {n.rule for n in notices} == {Rule.GR_TAXROLL}
    text = render(notices[0]).text
    # 10% of 194.55 = 19.455 -> 19.46 half-up; 194.55 + 19.46 = 214.01.
    assert "$194.55" in text and "10% ($19.46)" in text and "($214.01)" in text
    assert "November 1, 2026" in text and "November 16, 2026" in text
    assert "A change of owner or occupant does not reduce" in text


def test_a_credit_revocation_notice_needs_30_days(paper: Recipient) -> None:
    kwargs = dict(
        tenant="pleasant-prairie-stormwater",
        account_id="PPS-1",
        recipient=paper,
        trigger="CreditRevocationProposed#P-1",
        parcel_id="P-1",
        credit_percent=Decimal("12"),
        noticed_on=date(2026, 3, 1),
        reason="the detention pond was filled",
    )
    try:
        credit_revocation_notice(effective_on=date(2026, 3, 30), **kwargs)  # type: ignore[arg-type]
    except ValueError:
        pass
    else:
        raise AssertionError("29 days' notice was accepted")
    request = credit_revocation_notice(effective_on=date(2026, 3, 31), **kwargs)  # type: ignore[arg-type]
    assert "effective 2026-03-31" in render(request).text


def test_html_bodies_escape_customer_data(grafton_bill, opted_in) -> None:  # type: ignore[no-untyped-def]
    html = render(bill_notice(grafton_bill, opted_in, "BillIssued#x")).html
    assert "Ada &lt;Lovelace&gt; &amp; Co" in html
    assert "<Lovelace>" not in html


def test_channels_follow_the_notices_table(opted_in: Recipient, paper: Recipient) -> None:
    assert channels(Rule.BILL, opted_in) == (Channel.EMAIL,)
    assert channels(Rule.BILL, paper) == (Channel.MAIL,)
    # Legal notices always by mail, and by email too where opted in.
    assert channels(Rule.GR_OVERDUE, opted_in) == (Channel.MAIL, Channel.EMAIL)
    assert channels(Rule.PP_LIEN, paper) == (Channel.MAIL,)
    # Satellite deliveries by email; mailed when no address is on file rather than lost.
    assert channels(Rule.SAT_SAMPLE, opted_in.model_copy(update={"email_opt_in": False})) == (Channel.EMAIL,)
    assert channels(Rule.SAT_FLOW, paper) == (Channel.MAIL,)


def test_a_notice_id_is_one_per_rule_recipient_trigger_and_channel(grafton_bill, opted_in, paper) -> None:  # type: ignore[no-untyped-def]
    a = bill_notice(grafton_bill, opted_in, "BillIssued#1")
    assert notice_id(a, Channel.EMAIL) == notice_id(
        bill_notice(grafton_bill, opted_in, "BillIssued#1"), Channel.EMAIL
    )
    assert notice_id(a, Channel.EMAIL) != notice_id(a, Channel.MAIL)
    assert notice_id(a, Channel.EMAIL) != notice_id(
        bill_notice(grafton_bill, opted_in, "BillIssued#2"), Channel.EMAIL
    )
    assert notice_id(a, Channel.MAIL) != notice_id(
        bill_notice(grafton_bill, paper, "BillIssued#1"), Channel.MAIL
    )
