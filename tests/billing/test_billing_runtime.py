"""Billing through the local runtime on moto server (the real template.yaml): accounts and
lockbox uploads, cycles on the simulated clock, late charges and penalties as the clock
passes their day, the staff routes on the gateway with a minted token. Dates cross
weekends, month ends and 2028-02-29."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
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
    "grafton-sewer,GR-1,Ann,1 Main St,1 Main St,53024,2027-07-01,residential,5/8,GP-1,Ann\n"
    "grafton-sewer,GR-2,Bob,2 Main St,2 Main St,53024,2027-07-01,residential,5/8,GP-2,Bob\n"
    "grafton-sewer,GR-3,Cy,3 Main St,3 Main St,53024,2027-07-01,residential,5/8,GP-3,Cy\n"
    "pleasant-prairie-stormwater,PPW-1,Dee,9 Lake Rd,9 Lake Rd,53158,2027-12-01,residential,,PP-P-9,Dee\n"
)


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    # 2027-12-31 is a Friday; the Grafton cycle fires on Saturday 2028-01-01.
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2027, 12, 31, 12, tzinfo=UTC),
        # A stage of its own: its tables never meet another module's runtime.
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": "billing-year"},
        stack_name="billing-year",
    ) as runtime:
        yield runtime


def ledger(rt: LocalRuntime, tenant: str, account: str) -> list[dict[str, Any]]:
    return staff_get(rt, f"/staff/{tenant}/accounts/{account}/ledger", tenant)["entries"]


def test_the_billing_year_on_the_local_runtime(rt: LocalRuntime) -> None:
    rt.upload("UploadsBucket", "accounts/2027.csv", ACCOUNTS)
    for account, gallons in (("GR-1", 23000), ("GR-2", 0)):
        publish(
            rt,
            ConsumptionDetermined(
                occurred_at=datetime(2027, 12, 31, 12, tzinfo=UTC),
                tenant="grafton-sewer",
                account_id=account,
                period_start=date(2027, 10, 1),
                period_end=date(2028, 1, 1),
                volume_gal=gallons,
                source_file="reads/2027-q4.csv",
            ),
        )
    # The stormwater parcel's ERU, as the stormwater service publishes it (its fixture).
    eru = json.loads((REPO / "tests/fixtures/events/ERUDetermined.json").read_text())["detail"]
    eru.update(
        {
            "tenant": "pleasant-prairie-stormwater",
            "parcel_id": "PP-P-9",
            "effective_from": "2027-12-01",
            "eru": "3.00",
            "exempt": False,
        }
    )
    eru["breakdown"]["use"] = "residential"
    rt.put_event("sewerbill.stormwater", "ERUDetermined", eru, bus="EventBus")
    rt.drain()

    # Saturday 2028-01-01: Grafton bills Q4 2027; GR-3 has no consumption: held.
    rt.clock.advance(to=datetime(2028, 1, 1, 13, tzinfo=UTC))
    bills = staff_get(rt, "/staff/grafton-sewer/accounts/GR-1/bills", "grafton-sewer")["bills"]
    assert [(b["period"]["start"], b["total"], b["due_date"]) for b in bills] == [
        ("2027-10-01", "194.50", "2028-01-01")
    ]
    summary = staff_get(rt, "/staff/grafton-sewer/cycles/2027-10-01", "grafton-sewer")
    assert (summary["bills"], summary["held"]) == (
        2,
        [
            {
                "account_id": "GR-3",
                "reason": "no consumption for 2027-10-01..2028-01-01 from metering: "
                "waiting for a read of the account's meter",
                "who_can_supply": "metering: a read of the account's meter (reads/ file or estimate)",
            }
        ],
    )

    # GR-2's 45.00 is part paid on day 19 (Thursday 2028-01-20): 5.00 left -> the 0.50 minimum.
    lockbox = "tenant,account_id,reference,paid_on,amount\ngrafton-sewer,GR-2,LBX-1,2028-01-20,40.00\n"
    rt.clock.advance(to=datetime(2028, 1, 20, 18, tzinfo=UTC))  # the bank's file comes in that day
    rt.upload("UploadsBucket", "payments/2028-01-20.csv", lockbox)
    rt.upload("UploadsBucket", "payments/2028-01-20-again.csv", lockbox)  # posted twice: posts once
    rt.clock.advance(to=datetime(2028, 1, 21, 14, tzinfo=UTC))  # day 20: nothing yet
    assert [e for e in ledger(rt, "grafton-sewer", "GR-1") if e["kind"] == "late_charge"] == []

    # Saturday 2028-01-22, day 21: exactly one 3% late charge each (GR-LATE).
    rt.clock.advance(to=datetime(2028, 1, 22, 14, tzinfo=UTC))
    rt.clock.advance(to=datetime(2028, 2, 1, 14, tzinfo=UTC))  # and the days after: still one
    gr1 = ledger(rt, "grafton-sewer", "GR-1")
    assert [(e["amount"], e["posted_on"]) for e in gr1 if e["kind"] == "late_charge"] == [
        ("5.84", "2028-01-22")
    ]
    gr2 = ledger(rt, "grafton-sewer", "GR-2")
    assert [(e["kind"], e["amount"]) for e in gr2 if e["kind"] in ("payment", "late_charge")] == [
        ("payment", "-40.00"),
        ("late_charge", "0.50"),
    ]

    # X-IMMUTABLE: GR-1's Q4 read is corrected after billing (23,000 -> 20,000 gal), and
    # delivered twice: the bill stays as issued and one credit of 3 kgal x 6.50 = 19.50
    # (GR-FUNDS 12% per line: 2.34 replacement + 17.16 O&M) refers to it.
    corrected = ConsumptionDetermined(
        occurred_at=datetime(2028, 2, 1, 14, tzinfo=UTC),
        tenant="grafton-sewer",
        account_id="GR-1",
        period_start=date(2027, 10, 1),
        period_end=date(2028, 1, 1),
        volume_gal=20000,
        source_file="reads/2027-q4-corrected.csv",
    )
    publish(rt, corrected)
    publish(rt, corrected)
    assert sorted(
        (e["fund"], e["amount"], e["bill_id"])
        for e in ledger(rt, "grafton-sewer", "GR-1")
        if e["kind"] == "adjustment"
    ) == [("om", "-17.16", "GR-1-2027-10-01"), ("replacement", "-2.34", "GR-1-2027-10-01")]
    [q4] = staff_get(rt, "/staff/grafton-sewer/accounts/GR-1/bills", "grafton-sewer")["bills"]
    assert q4["total"] == "194.50"

    # PP stormwater: the January bill (2.00 + 3.00 ERU x 6.00 = 20.00) issued 2028-02-01,
    # unpaid: delinquent on day 30, 2028-03-02 (across 2028-02-29), 1% then and on each
    # monthly anniversary: 2028-04-02, 2028-05-02. Day 95 is 2028-05-06: 3%.
    rt.clock.advance(to=datetime(2028, 5, 6, 14, tzinfo=UTC))
    ppw = ledger(rt, "pleasant-prairie-stormwater", "PPW-1")
    jan = [e for e in ppw if e["bill_id"] == "PPW-1-2028-01-01"]
    assert sum(Decimal(e["amount"]) for e in jan if e["kind"] == "charge") == Decimal("20.00")
    assert [(e["posted_on"], e["amount"]) for e in jan if e["kind"] == "penalty"] == [
        ("2028-03-02", "0.20"),
        ("2028-04-02", "0.20"),
        ("2028-05-02", "0.20"),
    ]
    # The December 2027 bill too (issued 2028-01-01): the stormwater account opened 2027-12-01.
    assert {e["bill_id"] for e in ppw if e["kind"] == "charge"} >= {"PPW-1-2027-12-01", "PPW-1-2028-01-01"}
    assert rt.dead_letters == []
