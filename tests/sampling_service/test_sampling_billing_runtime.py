"""A lab upload changes the next issued bill: sampling -> bus -> billing -> the cycle.

Through the local runtime on moto server (the real template.yaml). Two nonresidential
Pleasant Prairie accounts are billed for January before any sample; a lab file under
lab/ then puts PP-0010 into Category B (PP-SEW-CAT-B) and leaves PP-0011 in Category A.
Billing keeps the StrengthCategoryChanged / StrengthClassified events (its projection per
account) and the February cycle, fired by its schedule on the simulated clock, bills
PP-0010 the Category B surcharge (PP-SEW-SURCHARGE) on the basis concentrations, one line
per parameter; PP-0011's bill has none.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import pytest
from runtime_support import HEADER, PP, REPO, call

from metering.events import ConsumptionDetermined
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

ACCOUNTS = (
    "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,zone,meter_size,parcel_id\n"
    f"{PP},PP-0010,Lakeside Dairy,10 Lake Rd,10 Lake Rd,53158,2024-12-01,nonresidential,PP,1,\n"
    f"{PP},PP-0011,Prairie Bakery,11 Lake Rd,11 Lake Rd,53158,2024-12-01,nonresidential,PP,1,\n"
)
LAB_FILE = HEADER + (
    # PP-0010: BOD 300 > 180, TSS 250 > 200, phosphorus 8 > 6 -> Category B (PP-SEW-CAT-B)
    f"{PP},LAB-2025-0205-10,PP-0010,2025-02-05,bod,300,mg/l,2025-02-07,Acme Labs,routine,,SM 5210B\n"
    f"{PP},LAB-2025-0205-10,PP-0010,2025-02-05,tss,250,mg/l,2025-02-07,Acme Labs,,,\n"
    f"{PP},LAB-2025-0205-10,PP-0010,2025-02-05,phosphorus,8,mg/l,2025-02-07,Acme Labs,,,\n"
    # PP-0011: every parameter at or below its limit -> Category A (the control)
    f"{PP},LAB-2025-0205-11,PP-0011,2025-02-05,bod,150,mg/l,2025-02-07,Acme Labs,routine,,SM 5210B\n"
    f"{PP},LAB-2025-0205-11,PP-0011,2025-02-05,tss,120,mg/l,2025-02-07,Acme Labs,,,\n"
    f"{PP},LAB-2025-0205-11,PP-0011,2025-02-05,phosphorus,4,mg/l,2025-02-07,Acme Labs,,,\n"
)
GALLONS = 40_000  # each account, each month: 0.04 million gallons


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    # Friday 2025-01-31; the PP sewer cycle fires 06:00 Chicago (12:00 UTC) on the 1st.
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2025, 1, 31, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": "sampling-bill"},
        stack_name="sampling-bill",
    ) as runtime:
        yield runtime


def bills(rt: LocalRuntime, account_id: str) -> dict[str, dict[str, Any]]:
    """The account's issued bills by period start, from billing's staff route."""
    token = rt.mint_token(sub="clerk", claims={"role": "staff", "tenants": [PP]})
    req = urllib.request.Request(
        f"{rt.gateway_url}/staff/{PP}/accounts/{account_id}/bills",
        headers={"authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - the local gateway
        found: list[dict[str, Any]] = json.loads(resp.read())["bills"]
    return {b["period"]["start"]: b for b in found}


def consumption(rt: LocalRuntime, account_id: str, start: date, end: date) -> None:
    """The month's use, as metering publishes it."""
    event = ConsumptionDetermined(
        occurred_at=rt.clock.now,
        tenant=PP,
        account_id=account_id,
        period_start=start,
        period_end=end,
        volume_gal=GALLONS,
        source_file="reads/pp.csv",
    )
    rt.put_event(event.SOURCE, event.detail_type(), json.loads(event.detail_json()), bus="EventBus")


def lines(bill: dict[str, Any], rule_id: str) -> list[tuple[str, str, str]]:
    return [
        (ln["details"].get("parameter", ""), ln["rate"], ln["amount"])
        for ln in bill["lines"]
        if ln["rule_id"] == rule_id
    ]


def test_a_lab_upload_putting_an_account_in_category_b_changes_its_next_bill(rt: LocalRuntime) -> None:
    rt.upload("UploadsBucket", "accounts/pp-2025.csv", ACCOUNTS)
    for account_id in ("PP-0010", "PP-0011"):
        status, _ = call(rt, "PUT", f"/staff/{PP}/sampling-points/{account_id}", {"sampling_point": "MH-1"})
        assert status == 200
        consumption(rt, account_id, date(2025, 1, 1), date(2025, 2, 1))
    rt.drain()

    # Saturday 2025-02-01: January is billed before any sample: no surcharge for either.
    rt.clock.advance(to=datetime(2025, 2, 1, 13, tzinfo=UTC))
    january = bills(rt, "PP-0010")["2025-01-01"]
    assert lines(january, "PP-SEW-SVC") and lines(january, "PP-SEW-VOL")
    assert lines(january, "PP-SEW-SURCHARGE") == []
    assert lines(bills(rt, "PP-0011")["2025-01-01"], "PP-SEW-SURCHARGE") == []

    # The lab file arrives on Monday 2025-02-10; February's use is determined.
    rt.clock.advance(to=datetime(2025, 2, 10, 15, tzinfo=UTC))
    rt.upload("UploadsBucket", "lab/2025-02.csv", LAB_FILE)
    # The lab sends the file again with one more result (other bytes, so another file): its
    # samples' costs travel again in this file's chunk, and billing keeps each once by its
    # charge id (asserted on the bill below: one PP-SEW-SAMPLE-COST line each).
    more = f"{PP},LAB-2025-0205-11,PP-0011,2025-02-05,fog,20,mg/l,2025-02-07,Acme Labs,,,\n"
    rt.upload("UploadsBucket", "lab/2025-02-corrected.csv", LAB_FILE + more)
    for account_id in ("PP-0010", "PP-0011"):
        consumption(rt, account_id, date(2025, 2, 1), date(2025, 3, 1))
    rt.drain()
    status, view = call(rt, "GET", f"/staff/{PP}/accounts/PP-0010/samples")
    assert (status, view["category"]) == (200, "B")

    # Saturday 2025-03-01: the February cycle.
    rt.clock.advance(to=datetime(2025, 3, 1, 13, tzinfo=UTC))
    february = bills(rt, "PP-0010")["2025-02-01"]
    # PP-SEW-SURCHARGE (X-POUNDS): (concentration - Category A limit) mg/l x 0.04 MG x 8.34
    # lb, at the tariff's rate per lb (infra/tariffs/pleasant-prairie-sewer/2019-10-01.yaml):
    #   BOD        (300 - 180) x 0.04 x 8.34 = 40.032 lb x 0.48 = 19.21536 -> 19.22
    #   TSS        (250 - 200) x 0.04 x 8.34 = 16.68  lb x 0.41 =  6.8388  ->  6.84
    #   phosphorus (8 - 6.0)   x 0.04 x 8.34 =  0.6672 lb x 6.86 = 4.576992 ->  4.58
    assert sorted(lines(february, "PP-SEW-SURCHARGE")) == [
        ("bod", "0.48", "19.22"),
        ("phosphorus", "6.86", "4.58"),
        ("tss", "0.41", "6.84"),
    ]
    surcharge = {
        ln["details"]["parameter"]: ln for ln in february["lines"] if ln["rule_id"] == "PP-SEW-SURCHARGE"
    }
    assert surcharge["bod"]["details"]["concentration_mg_l"] == "300"
    assert surcharge["bod"]["details"]["limit_mg_l"] == "180"
    # The sample itself is a separate line (PP-SEW-SAMPLE-COST, 85.00 in the example tariff).
    assert lines(february, "PP-SEW-SAMPLE-COST") == [("", "85.00", "85.00")]
    # The January bill, issued before the classification, is as it was.
    assert bills(rt, "PP-0010")["2025-01-01"] == january

    # The Category A control: same cycle, same sample cost, no surcharge.
    control = bills(rt, "PP-0011")["2025-02-01"]
    assert lines(control, "PP-SEW-SAMPLE-COST") == [("", "85.00", "85.00")]
    assert lines(control, "PP-SEW-SURCHARGE") == []
    assert rt.dead_letters == []
