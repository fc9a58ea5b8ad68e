"""PP-CWU-BILLING through the local runtime on moto server (the real template.yaml): accounts
uploaded, Pleasant Prairie's two cycles fire on the simulated clock and issue their bills,
and notices sends a customer with a sewer and a stormwater account on one parcel ONE combined
email (one PDF, both bills as sections) and one with a single account the ordinary bill.

The link is the accounts file's own columns: the same parcel_id and the same bill recipient.
Hand-worked (pleasant-prairie-sewer@2019-10-01, pleasant-prairie-stormwater@2023-01-01),
September 2026, billed on the cycle day 2026-10-01, due 20 days later, 2026-10-21:
- PPS-1 (nonresidential, zone PP, 5/8"), 4,000 gal: 14.10 + 4 kgal x 4.49 = 17.96 -> 32.06;
- PPW-1, parcel PP-P-1 at 1.00 ERU: 2.00 base + 1.00 x 6.00 -> 8.00; together 40.06;
- PPS-9 (another customer, sewer only, parcel PP-P-9), 10,000 gal: 14.10 + 44.90 = 59.00.
"""

from __future__ import annotations

import email
import io
import json
import urllib.request
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from metering.events import ConsumptionDetermined
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
HEADER = (
    "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,zone,meter_size,"
    "parcel_id,email,email_opt_in\n"
)
ACCOUNTS = HEADER + (
    "pleasant-prairie-sewer,PPS-1,Ada Lovelace,8600 Green Bay Rd,12 Oak St; Pleasant Prairie WI,53158,"
    "2026-09-01,nonresidential,PP,5/8,PP-P-1,ada@example.org,true\n"
    "pleasant-prairie-stormwater,PPW-1,Ada Lovelace,8600 Green Bay Rd,12 Oak St; Pleasant Prairie WI,53158,"
    "2026-09-01,residential,,,PP-P-1,ada@example.org,true\n"
    "pleasant-prairie-sewer,PPS-9,Grace Hopper,9 Navy Way,9 Navy Way; Pleasant Prairie WI,53158,"
    "2026-09-01,nonresidential,PP,5/8,PP-P-9,grace@example.org,true\n"
)


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2026, 9, 30, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": "combined-bill"},
        stack_name="combined-bill",
    ) as runtime:
        yield runtime


def raw_emails(rt: LocalRuntime) -> list[email.message.Message]:
    with urllib.request.urlopen(rt.emulator.endpoint_url + "/moto-api/data.json", timeout=10) as resp:  # noqa: S310
        data = json.loads(resp.read())
    return [email.message_from_string(m["raw_data"]) for m in data.get("ses", {}).get("RawMessage", [])]


def pdf_of(message: email.message.Message) -> str:
    [pdf] = [p.get_payload(decode=True) for p in message.walk() if p.get_content_type() == "application/pdf"]
    return " ".join(" ".join(page.extract_text().split()) for page in PdfReader(io.BytesIO(pdf)).pages)


def bills_of(rt: LocalRuntime, tenant: str, account: str) -> list[dict[str, Any]]:
    token = rt.mint_token(sub="clerk", claims={"role": "staff", "tenants": [tenant]})
    request = urllib.request.Request(
        f"{rt.gateway_url}/staff/{tenant}/accounts/{account}/bills",
        headers={"authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request, timeout=30) as resp:  # noqa: S310 - the local gateway
        bills: list[dict[str, Any]] = json.loads(resp.read())["bills"]
    return bills


def test_a_customer_with_both_accounts_gets_one_combined_email_and_one_with_a_sewer_account_its_bill(
    rt: LocalRuntime,
) -> None:
    rt.upload("UploadsBucket", "accounts/2026-09.csv", ACCOUNTS)
    for account, gallons in (("PPS-1", 4000), ("PPS-9", 10000)):
        consumption = ConsumptionDetermined(
            occurred_at=datetime(2026, 9, 30, 12, tzinfo=UTC),
            tenant="pleasant-prairie-sewer",
            account_id=account,
            period_start=date(2026, 9, 1),
            period_end=date(2026, 10, 1),
            volume_gal=gallons,
            source_file="reads/2026-09.csv",
        )
        rt.put_event(
            consumption.SOURCE, "ConsumptionDetermined", json.loads(consumption.detail_json()), bus="EventBus"
        )
    eru = json.loads((REPO / "tests/fixtures/events/ERUDetermined.json").read_text())["detail"]
    eru.update({"parcel_id": "PP-P-1", "effective_from": "2026-09-01", "eru": "1.00", "previous_eru": None})
    rt.put_event("sewerbill.stormwater", "ERUDetermined", eru, bus="EventBus")
    rt.drain()

    # 2026-10-01 06:00 in Pleasant Prairie: both utilities' cycles bill September.
    rt.clock.advance(to=datetime(2026, 10, 1, 13, tzinfo=UTC))
    assert rt.dead_letters == []
    issued = {
        a: bills_of(rt, t, a)
        for t, a in (("pleasant-prairie-sewer", "PPS-1"), ("pleasant-prairie-stormwater", "PPW-1"))
    }
    assert [(b["total"], b["amount_due"], b["due_date"]) for b in issued["PPS-1"]] == [
        ("32.06", "32.06", "2026-10-21")
    ]
    assert [(b["total"], b["amount_due"], b["due_date"]) for b in issued["PPW-1"]] == [
        ("8.00", "8.00", "2026-10-21")
    ]

    # Ada: one email, whichever cycle's bill came first; Grace's waits for a partner.
    [combined] = raw_emails(rt)
    assert combined["To"] == "ada@example.org"
    text = pdf_of(combined)
    for phrase in (
        "Village of Pleasant Prairie: combined utility bill",
        "Village of Pleasant Prairie Sewer Utility",
        "Account PPS-1",
        "4 kgal",
        "4.49",
        "$17.96",
        "PP-SEW-SVC",
        "PP-SEW-VOL",
        "Funds of Village of Pleasant Prairie Sewer Utility: operation and maintenance $32.06",
        "Village of Pleasant Prairie Clean Water Utility",
        "Account PPW-1",
        "PP-CWU-BASE",
        "PP-CWU-ERU",
        "Funds of Village of Pleasant Prairie Clean Water Utility: operation and maintenance $8.00",
        "Total amount due $40.06",  # 32.06 + 8.00
    ):
        assert phrase in text, phrase
    # Each section is its own bill, numbered by its utility (billing's bill numbers).
    assert "Bill PPS-202609-PPS-1" in text and "Bill PPW-202609-PPW-1" in text

    # 2026-10-02 05:00: Grace's bill had no partner by its release day: her ordinary bill.
    rt.clock.advance(to=datetime(2026, 10, 2, 12, tzinfo=UTC))
    assert rt.dead_letters == []
    messages = raw_emails(rt)
    assert [m["To"] for m in messages] == ["ada@example.org", "grace@example.org"]
    alone = pdf_of(messages[1])
    assert "Account PPS-9" in alone and "$59.00" in alone  # 14.10 + 10 kgal x 4.49 = 44.90
    assert "combined" not in alone and "Clean Water" not in alone
