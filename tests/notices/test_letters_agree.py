"""Issue 28 item 5: letters that agree with themselves (GR-OVERDUE, the notices table).

Every letter is dated; a disconnection notice never names a disconnection date before the
bill's due date, and its amount due says whether it includes the late charge; a letter
mentions a remittance stub only when one is enclosed (the bill); letters quote the printed
bill number, never billing's internal bill id or an event id.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from common.events import Event
from notices import rendering
from notices.app.delivery import CONSUMED, _plan
from notices.app.planning import plan_eligibility_withdrawn
from notices.composition import Renderer
from notices.domain.delivery import NoticeRecord, Rendered, deliver
from notices.domain.documents import UsagePoint
from notices.domain.model import NoticeRequest, Recipient
from notices.domain.requests import delinquency_notice, disconnection_notice, tax_roll_notices

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "events"
PRINTED = "No. 2026-0042"  # what the bill printed as its number (kept from BillIssued)
TODAY = date(2026, 11, 2)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
LETTER_EVENTS = (
    "BillIssued",
    "BillOverdue",
    "DisconnectionEligible",
    "DisconnectionEligibilityWithdrawn",
    "BillDelinquent",
    "BillAdjusted",
    "TaxRollNoticed",
    "CreditRevocationProposed",
    "ReconsiderationDecided",
    "AppealDecided",
    "SatelliteFlowReady",
    "SatelliteResultsDelivered",
    "AnnualReportReminderDue",
)
PERSON = Recipient(name="Ada Lovelace", address_lines=("12 Oak St", "Grafton, WI 53024"), zip="53024")


class KnownContacts:
    """Every addressee known; every bill known by its printed number."""

    def remember_bill(self, *args: Any) -> list[UsagePoint]:
        return []

    def remember_owner(self, *args: Any) -> None: ...

    def remember_bill_number(self, *args: Any) -> None: ...

    def bill_number(self, tenant: str, account_id: str, bill_id: str) -> str:
        return PRINTED

    def recipient(self, tenant: str, account_id: str) -> Recipient:
        return PERSON

    def owner(self, tenant: str, parcel_id: str) -> tuple[Recipient, str]:
        return PERSON.model_copy(update={"role": "owner"}), "ACCT-1"

    def annual_notice_due(self, *args: Any) -> bool:
        return False


class Log:
    def __init__(self) -> None:
        self.records: list[NoticeRecord] = []

    def get(self, *args: Any) -> None:
        return None

    def record(self, record: NoticeRecord) -> None:
        self.records.append(record)


class Outbox:
    def send(self, **kwargs: Any) -> str:
        return "ses-message"

    def enqueue(self, **kwargs: Any) -> str:
        return "pending/letter.pdf"


class Capturing(Renderer):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def render(self, request: NoticeRequest) -> Rendered:
        done = super().render(request)
        self.texts += [done.text, done.html]
        return done


def fixture(name: str) -> Event:
    detail = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))["detail"]
    return CONSUMED[name].model_validate(detail)


def sent_texts(event: Event) -> list[str]:
    """The text and HTML of every notice the event's rule sends, as delivered."""
    contacts = KnownContacts()
    if type(event).__name__ == "DisconnectionEligibilityWithdrawn":
        planned = plan_eligibility_withdrawn(event, contacts, announced=True)  # type: ignore[arg-type]
    else:
        planned = _plan(event, contacts, None)  # type: ignore[arg-type]
    renderer = Capturing()
    now = datetime(2026, 11, 2, 15, tzinfo=UTC)
    for request in planned.requests:
        deliver(request, log=Log(), email=Outbox(), mail=Outbox(), renderer=renderer, now=now, today=TODAY)
    assert renderer.texts, f"{type(event).__name__} sent nothing"
    return renderer.texts


def overdue_notice(notice_date: date, due_date: date, late_charge: Decimal | None = None) -> NoticeRequest:
    return disconnection_notice(
        tenant="grafton-sewer",
        account_id="GR-000123",
        recipient=PERSON,
        trigger="BillOverdue#grafton-sewer#GR-000123#GR-000123-2026-01-01",
        service_address="12 Oak St",
        bill_id=PRINTED,
        bill_date=date(2026, 1, 5),
        due_date=due_date,
        amount_due=Decimal("94.50"),
        notice_date=notice_date,
        late_charge=late_charge,
    )


def test_gr_overdue_disconnection_date_is_never_before_the_due_date() -> None:
    # Issued 2026-01-05, overdue 20 days later (01-25): notice + 10 days is 02-04, but the
    # bill is due 04-01, so the notice names 04-01 (never a date before the due date).
    request = overdue_notice(date(2026, 1, 25), date(2026, 4, 1))
    text = rendering.render(request).text
    assert request.content["disconnect_after"] == "2026-04-01"
    assert "by 2026-04-01, your sewer service may be disconnected after 2026-04-01" in text
    assert "2026-02-04" not in text
    # Due before notice + 10 days: the 10 days of GR-OVERDUE hold.
    assert overdue_notice(date(2026, 1, 25), date(2026, 1, 20)).content["disconnect_after"] == "2026-02-04"


def test_gr_overdue_amount_due_says_whether_it_includes_the_late_charge() -> None:
    without = rendering.render(overdue_notice(date(2026, 1, 25), date(2026, 1, 20))).text
    assert "Amount due: $94.50 (this amount does not include late charges)" in without
    included = rendering.render(overdue_notice(date(2026, 1, 25), date(2026, 1, 20), Decimal("2.75"))).text
    assert "Amount due: $94.50 (this amount includes the late charge of $2.75)" in included


def test_pp_cwu_delinquent_amount_due_says_it_includes_the_penalty() -> None:
    def amount_line(penalty: str) -> str:
        request = delinquency_notice(
            tenant="pleasant-prairie-stormwater",
            account_id="PPS-0007",
            recipient=PERSON,
            trigger="BillDelinquent#x",
            bill_id=PRINTED,
            bill_date=date(2026, 9, 1),
            delinquent_on=date(2026, 10, 1),
            principal=Decimal("40.00"),
            penalty_so_far=Decimal(penalty),
        )
        [line] = [x for x in rendering.render(request).text.splitlines() if x.startswith("Amount now due")]
        return line

    assert (
        amount_line("0.40")
        == "Amount now due: $40.40 (this amount includes the late charge (PP-CWU-PENALTY) of $0.40)"
    )
    assert amount_line("0") == "Amount now due: $40.00 (this amount does not include late charges)"


def test_n_bill_a_letter_mentions_a_remittance_stub_only_when_one_is_enclosed() -> None:
    # The disconnection notice, the delinquency notice and the tax-roll notice enclose no
    # stub (a letter, not the bill); they used to say "by mail ... with the remittance stub".
    for name in ("BillOverdue", "BillDelinquent", "TaxRollNoticed", "DisconnectionEligible"):
        for text in sent_texts(fixture(name)):
            assert "stub" not in text.lower(), name
    # The bill encloses it (its PDF, mailed or attached, ends with the stub).
    assert all("remittance stub" in text for text in sent_texts(fixture("BillIssued")))


@pytest.mark.parametrize("name", LETTER_EVENTS)
def test_gr_overdue_every_letter_kind_carries_its_date(name: str) -> None:
    event = fixture(name)
    for text in sent_texts(event):
        assert re.search(r"Date: \d{4}-\d{2}-\d{2}", text), (name, text)


def test_the_letter_date_is_the_notices_own_day() -> None:
    request = overdue_notice(date(2026, 1, 25), date(2026, 4, 1))
    assert "Date: 2026-01-25" in rendering.render(request).text
    [owner_notice] = tax_roll_notices(
        tenant="grafton-sewer",
        account_id="GR-1",
        owner=PERSON,
        occupant=None,
        trigger="TaxRollNoticed#x",
        parcel_id="P-1",
        service_address="12 Oak St",
        year=2026,
        noticed_on=date(2026, 10, 15),
        arrears=Decimal("100.00"),
    )
    assert "Date: 2026-10-15" in rendering.render(owner_notice).text


@pytest.mark.parametrize("name", LETTER_EVENTS)
def test_n_bill_letters_quote_the_printed_bill_number_never_an_internal_id(name: str) -> None:
    event = fixture(name)
    internal = getattr(event, "bill_id", None)
    for text in sent_texts(event):
        if internal:
            assert internal not in text, (name, text)
        assert not UUID.search(text), (name, UUID.search(text))
        assert event.event_id not in text
    if name in ("BillOverdue", "DisconnectionEligible", "BillDelinquent", "ReconsiderationDecided"):
        assert any(PRINTED in text for text in sent_texts(event)), name
