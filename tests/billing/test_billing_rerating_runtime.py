"""On the local runtime (the real template.yaml on moto server): a stormwater ERU
re-determined in mid-December is prorated on the December bill (X-PERIOD), and a Grafton
read corrected after billing is one adjustment that billing publishes as ``BillAdjusted``
and notices mails to the customer as a memo (X-IMMUTABLE), once, through the bus."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from billing_support import publish, staff_get

from metering.events import ConsumptionDetermined
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
HEADER = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,parcel_id,owner_name\n"
ACCOUNTS = HEADER + (
    "grafton-sewer,GR-1,Ann,1 Main St,1 Main St; Grafton WI 53024,53024,2027-07-01,residential,5/8,GP-1,Ann\n"
    "pleasant-prairie-stormwater,PPW-1,Dee,9 Lake Rd,9 Lake Rd,53158,2027-11-01,residential,,PP-P-9,Dee\n"
)


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2027, 12, 31, 12, tzinfo=UTC),
        # A stage of its own: its tables never meet another module's runtime.
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": "billing-rerate"},
        stack_name="billing-rerate",
    ) as runtime:
        yield runtime


def eru(sequence: int, effective_from: str, value: str) -> dict[str, Any]:
    detail: dict[str, Any] = json.loads((REPO / "tests/fixtures/events/ERUDetermined.json").read_text())[
        "detail"
    ]
    detail.update(
        {
            "event_id": f"00000000-0000-4000-8000-00000000000{sequence}",
            "tenant": "pleasant-prairie-stormwater",
            "parcel_id": "PP-P-9",
            "sequence": sequence,
            "effective_from": effective_from,
            "eru": value,
            "exempt": False,
        }
    )
    detail["breakdown"]["use"] = "residential"
    return detail


def q4(gallons: int, *, estimated: bool) -> ConsumptionDetermined:
    return ConsumptionDetermined(
        occurred_at=datetime(2027, 12, 31, 12, tzinfo=UTC),
        tenant="grafton-sewer",
        account_id="GR-1",
        period_start=date(2027, 10, 1),
        period_end=date(2028, 1, 1),
        volume_gal=gallons,
        quality="estimated" if estimated else "actual",
        estimated=estimated,
        source_file="reads/2027-q4.csv",
    )


def test_a_mid_month_eru_is_prorated_and_a_rerating_memo_reaches_the_customer(rt: LocalRuntime) -> None:
    rt.upload("UploadsBucket", "accounts/2027.csv", ACCOUNTS)
    publish(rt, q4(23000, estimated=True))
    # PP-P-9: 3.00 ERU from 2027-11-01, re-determined 2.00 from Monday 2027-12-13 (each twice).
    for detail in (eru(1, "2027-11-01", "3.00"), eru(2, "2027-12-13", "2.00")) * 2:
        rt.put_event("sewerbill.stormwater", "ERUDetermined", detail, bus="EventBus")
        rt.drain()

    # Saturday 2028-01-01: Grafton bills Q4 2027, the Clean Water Utility December.
    rt.clock.advance(to=datetime(2028, 1, 1, 13, tzinfo=UTC))
    bills = staff_get(
        rt, "/staff/pleasant-prairie-stormwater/accounts/PPW-1/bills", "pleasant-prairie-stormwater"
    )
    [december] = [b for b in bills["bills"] if b["period"]["start"] == "2027-12-01"]
    # December has 31 days: base 2.00; 3.00 ERU x 12/31 x 6.00 = 6.967 -> 6.97;
    # 2.00 ERU x 19/31 x 6.00 = 7.354 -> 7.35. Total 16.32 (on the end value alone: 14.00).
    assert [(ln["rule_id"], ln["amount"]) for ln in december["lines"]] == [
        ("PP-CWU-BASE", "2.00"),
        ("PP-CWU-ERU", "6.97"),
        ("PP-CWU-ERU", "7.35"),
    ]
    assert [ln["details"].get("derivation") for ln in december["lines"][1:]] == [
        "3.00 ERU x 12/31 days x $6.00",
        "2.00 ERU x 19/31 days x $6.00",
    ]
    assert december["total"] == "16.32"

    # X-IMMUTABLE: GR-1's estimated 23,000 gal Q4 (194.50) is read at 20,000, delivered twice:
    # one credit memo of 3 kgal x 6.50 = 19.50 on the bill, published once and mailed once.
    rt.clock.advance(to=datetime(2028, 1, 10, 14, tzinfo=UTC))
    publish(rt, q4(20000, estimated=False))
    publish(rt, q4(20000, estimated=False))
    ledger = staff_get(rt, "/staff/grafton-sewer/accounts/GR-1/ledger", "grafton-sewer")["entries"]
    assert sorted((e["fund"], e["amount"]) for e in ledger if e["kind"] == "adjustment") == [
        ("om", "-17.16"),
        ("replacement", "-2.34"),
    ]
    notices = staff_get(rt, "/staff/grafton-sewer/accounts/GR-1/notices", "grafton-sewer")["notices"]
    memos = [n for n in notices if n["rule_id"] == "X-IMMUTABLE"]
    assert [(n["channel"], n["status"]) for n in memos] == [("mail", "sent")]
    # Nothing was refused; the staff list answers through the gateway.
    refused = staff_get(rt, "/staff/grafton-sewer/rerating/refused", "grafton-sewer")
    assert refused == {"refused": [], "next_cursor": None}

    # X-IMMUTABLE, X-PERIOD: on Mon 01-10 the Engineer's override sets PP-P-9 at 4.00 ERU
    # from Mon 2027-12-20, a day of December, billed already (delivered twice). December is
    # rated again: 3.00 x 12/31 x 6.00 = 6.97; 2.00 x 7/31 x 6.00 = 2.709 -> 2.71;
    # 4.00 x 12/31 x 6.00 = 9.290 -> 9.29; + 2.00 = 20.97 against the 16.32 billed: one
    # debit memo of 4.65 on the December bill, which stays as issued.
    override = eru(3, "2027-12-20", "4.00") | {"cause": "manual_override", "cause_ref": "OV-9"}
    for _ in range(2):
        rt.put_event("sewerbill.stormwater", "ERUDetermined", override, bus="EventBus")
        rt.drain()
    sw = "pleasant-prairie-stormwater"
    sw_ledger = staff_get(rt, f"/staff/{sw}/accounts/PPW-1/ledger", sw)["entries"]
    assert [(e["kind"], e["amount"], e["bill_id"]) for e in sw_ledger if e["kind"] == "adjustment"] == [
        ("adjustment", "4.65", december["bill_id"])
    ]
    again = staff_get(rt, f"/staff/{sw}/accounts/PPW-1/bills", sw)["bills"]
    assert [b["total"] for b in again if b["period"]["start"] == "2027-12-01"] == ["16.32"]
    sw_notices = staff_get(rt, f"/staff/{sw}/accounts/PPW-1/notices", sw)["notices"]
    assert [(n["rule_id"], n["status"]) for n in sw_notices if n["rule_id"] == "X-IMMUTABLE"] == [
        ("X-IMMUTABLE", "sent")
    ]
    assert rt.dead_letters == []
