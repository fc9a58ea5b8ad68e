"""notices on billing's DisconnectionEligible (GR-OVERDUE): a fresh disconnection notice when
eligibility begins after an arrangement fails; none for the day the overdue notice announced."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from handler_support import MAIL, Stack, eventbridge_body
from pypdf import PdfReader
from test_notices_handlers import delivered, issued, log

from billing.events import DisconnectionEligibilityWithdrawn, DisconnectionEligible


def eligible(reason: str, on: date, arrangement_id: str | None = None) -> DisconnectionEligible:
    return DisconnectionEligible(
        occurred_at=datetime(2026, 12, 16, 13, tzinfo=UTC),
        tenant="grafton-sewer",
        account_id="GR-1",
        bill_id="B-GR-1",
        bill_date=date(2026, 10, 1),
        due_date=date(2026, 11, 1),
        overdue_on=date(2026, 10, 22),
        eligible_on=on,
        amount_unpaid=Decimal("25.00"),
        reason=reason,
        arrangement_id=arrangement_id,
    )


def test_a_broken_arrangement_gets_a_fresh_disconnection_notice_once(notices: Stack) -> None:
    assert delivered(eventbridge_body(issued(opted_in=False))) == {"batchItemFailures": []}
    body = eventbridge_body(eligible("arrangement_broken", date(2026, 12, 16), "ARR-1"))
    assert delivered(body) == {"batchItemFailures": []}
    assert delivered(body) == {"batchItemFailures": []}  # redelivered: sent once
    letters = [i for i in log(notices) if i["rule"] == "GR-OVERDUE"]
    assert [(i["channel"], i["status"]) for i in letters] == [("mail", "sent")]
    pdf = notices.s3.get_object(Bucket=MAIL, Key=letters[0]["reference"])["Body"].read()
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages).replace("\n", " ")
    # Dated the day it began (Wed 12-16), with its own 10 days: Sat 12-26.
    assert "Amount due: $25.00" in text and "may be disconnected after 2026-12-26" in text


def test_eligibility_the_overdue_notice_announced_sends_nothing_more(notices: Stack) -> None:
    assert delivered(eventbridge_body(issued(opted_in=False))) == {"batchItemFailures": []}
    body = eventbridge_body(eligible("notice_period_ended", date(2026, 11, 1)))
    assert delivered(body) == {"batchItemFailures": []}
    assert [i for i in log(notices) if i["rule"] == "GR-OVERDUE"] == []


# --- GR-OVERDUE: an eligibility billing withdrew (DisconnectionEligibilityWithdrawn) ----------


def withdrawn(
    on: date, *, after_overdue_notice: bool = False, never_held: bool = True
) -> DisconnectionEligibilityWithdrawn:
    return DisconnectionEligibilityWithdrawn(
        occurred_at=datetime(2026, 12, 18, 15, tzinfo=UTC),
        tenant="grafton-sewer",
        account_id="GR-1",
        bill_id="B-GR-1",
        bill_date=date(2026, 10, 1),
        due_date=date(2026, 11, 1),
        eligible_on=on,
        ended_on=on,
        never_held=never_held,
        after_overdue_notice=after_overdue_notice,
        reason="paid",
        amount_unpaid=Decimal("0.00"),
        withdrawn_on=date(2026, 12, 18),
    )


def letters(stack: Stack) -> list[dict[str, Any]]:
    return [i for i in log(stack) if i["rule"] == "GR-OVERDUE"]


def text_of(stack: Stack, record: dict[str, Any]) -> str:
    pdf = stack.s3.get_object(Bucket=MAIL, Key=record["reference"])["Body"].read()
    return " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages).replace("\n", " ")


def test_a_withdrawal_after_the_disconnection_notice_went_out_sends_one_letter_withdrawing_it(
    notices: Stack,
) -> None:
    assert delivered(eventbridge_body(issued(opted_in=False))) == {"batchItemFailures": []}
    assert delivered(eventbridge_body(eligible("arrangement_broken", date(2026, 12, 16), "ARR-1"))) == {
        "batchItemFailures": []
    }
    # Fri 12-18: a payment dated Tue 12-15 is posted: the eligibility of 12-16 never held.
    body = eventbridge_body(withdrawn(date(2026, 12, 16)))
    assert delivered(body) == {"batchItemFailures": []}
    assert delivered(body) == {"batchItemFailures": []}  # redelivered: one letter
    notice, letter = sorted(letters(notices), key=lambda i: i["at"] + i["subject"])
    assert notice["subject"].startswith("Disconnection notice:")
    assert (letter["subject"], letter["channel"], letter["status"]) == (
        "Disconnection notice withdrawn: bill GR-2026Q3-GR-1 on account GR-1",
        "mail",
        "sent",
    )
    text = text_of(notices, letter)
    assert "withdrawn: it should not have been sent: the bill is paid before 2026-12-16" in text
    assert "will not be disconnected" in text


def test_a_withdrawal_that_comes_first_means_no_disconnection_notice_and_no_letter(notices: Stack) -> None:
    assert delivered(eventbridge_body(issued(opted_in=False))) == {"batchItemFailures": []}
    # The bus delivers out of order: the withdrawal before the eligibility it withdraws.
    assert delivered(eventbridge_body(withdrawn(date(2026, 12, 16)))) == {"batchItemFailures": []}
    assert delivered(eventbridge_body(eligible("arrangement_broken", date(2026, 12, 16), "ARR-1"))) == {
        "batchItemFailures": []
    }
    assert letters(notices) == []


def test_the_overdue_notice_that_announced_the_eligibility_is_withdrawn_by_letter(notices: Stack) -> None:
    from billing.events import BillOverdue

    assert delivered(eventbridge_body(issued(opted_in=False))) == {"batchItemFailures": []}
    overdue = BillOverdue(
        occurred_at=datetime(2026, 10, 22, 13, tzinfo=UTC),
        tenant="grafton-sewer",
        account_id="GR-1",
        bill_id="B-GR-1",
        bill_date=date(2026, 10, 1),
        due_date=date(2026, 11, 1),
        overdue_on=date(2026, 10, 22),
        amount_unpaid=Decimal("25.00"),
        disconnection_eligible_on=date(2026, 11, 1),
    )
    assert delivered(eventbridge_body(overdue)) == {"batchItemFailures": []}
    # Eligible 11-01 (announced by the overdue notice: nothing more sent), then paid 11-09:
    # ended 11-10, not in error; the letter names the day.
    assert delivered(eventbridge_body(eligible("notice_period_ended", date(2026, 11, 1)))) == {
        "batchItemFailures": []
    }
    late = withdrawn(date(2026, 11, 1), after_overdue_notice=True, never_held=False).model_copy(
        update={"ended_on": date(2026, 11, 10)}
    )
    assert delivered(eventbridge_body(late)) == {"batchItemFailures": []}
    assert sorted(i["subject"] for i in letters(notices)) == [
        "Disconnection notice withdrawn: bill GR-2026Q3-GR-1 on account GR-1",
        "Disconnection notice: $25.00 overdue on account GR-1",
    ]
    [letter] = [i for i in letters(notices) if "withdrawn" in i["subject"]]
    assert "the bill is paid on or before 2026-11-10" in text_of(notices, letter)


def test_withdrawn_while_its_notice_was_going_out_the_letter_follows_it(
    notices: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two handlers run at once: the eligibility's finds no withdrawal and sends its
    notice; the withdrawal's finds no notice sent yet. The eligibility's handler looks
    again after sending and sends the letter itself."""
    from notices.adapters.aws import DynamoContacts

    assert delivered(eventbridge_body(issued(opted_in=False))) == {"batchItemFailures": []}
    real = DynamoContacts.withdrawal
    looks: list[int] = []

    def withdrawal_kept_meanwhile(self: DynamoContacts, *args: Any) -> Any:
        looks.append(1)
        if len(looks) == 1:  # the first look, before the notice: the withdrawal is not in yet
            self.keep_withdrawal(withdrawn(date(2026, 12, 16)))
            return None
        return real(self, *args)

    monkeypatch.setattr(DynamoContacts, "withdrawal", withdrawal_kept_meanwhile)
    assert delivered(eventbridge_body(eligible("arrangement_broken", date(2026, 12, 16), "ARR-1"))) == {
        "batchItemFailures": []
    }
    assert sorted(i["subject"] for i in letters(notices)) == [
        "Disconnection notice withdrawn: bill GR-2026Q3-GR-1 on account GR-1",
        "Disconnection notice: $25.00 overdue on account GR-1",
    ]
    # The withdrawal's own delivery (late) sends nothing more.
    monkeypatch.setattr(DynamoContacts, "withdrawal", real)
    assert delivered(eventbridge_body(withdrawn(date(2026, 12, 16)))) == {"batchItemFailures": []}
    assert len(letters(notices)) == 2
