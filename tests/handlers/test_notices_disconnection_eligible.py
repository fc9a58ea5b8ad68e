"""notices on billing's DisconnectionEligible (GR-OVERDUE): a fresh disconnection notice when
eligibility begins after an arrangement fails; none for the day the overdue notice announced."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime
from decimal import Decimal

from handler_support import MAIL, Stack, eventbridge_body
from pypdf import PdfReader
from test_notices_handlers import delivered, issued, log

from billing.events import DisconnectionEligible


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
