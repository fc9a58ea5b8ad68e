"""X-TAXROLL end to end through billing's handlers (moto in-process, a run every day):
notice on October 15, 10% on November 2 for what is unpaid after November 1, the list
certified on November 16 and moved off the account. An owner change in between leaves
the arrears on the parcel (GR-TAXROLL): the notice goes to the owner of record."""

from __future__ import annotations

import json
from datetime import date, timedelta

from handler_support import Stack
from test_billing_flow import ACCOUNTS, HEADER, assess, consume, flow, of, run_cycle, upload  # noqa: F401
from test_billing_staff_api import call


def test_the_tax_roll_timeline_with_an_owner_change(flow: Stack) -> None:  # noqa: F811
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    consume(flow, "GR-1", 23000, date(2026, 4, 1), date(2026, 7, 1))
    run_cycle(flow, "2026-07-01T11:00:00Z")  # Q2: 194.50, due 07-01
    consume(flow, "GR-1", 23000)
    day = date(2026, 7, 1)
    while day <= date(2026, 11, 20):
        if day == date(2026, 9, 1):  # the parcel is sold: a new owner of record
            upload(
                flow,
                "accounts/sale.csv",
                HEADER
                + "\ngrafton-sewer,GR-1,Ann,1 Main St,1 Main St,53024,2026-01-01,residential,5/8,GP-1,Zed\n",
            )
        if day == date(2026, 10, 1):
            run_cycle(flow, "2026-10-01T11:00:00Z")  # Q3: 194.50, due 10-01
        if day == date(2026, 11, 1):
            upload(
                flow,
                "payments/nov1.csv",
                "tenant,account_id,reference,paid_on,amount\ngrafton-sewer,GR-1,NOV1,2026-11-01,100.00\n",
            )
        if day == date(2026, 10, 20):
            # Between notice and certification the list is live.
            status, live = call("GET", "/staff/grafton-sewer/tax-roll/2026")
            assert status == 200 and live["certified_on"] is None
            assert live["entries"][0]["arrears"] == "394.84"
        assess(f"{day.isoformat()}T13:00:00Z")
        day += timedelta(days=1)

    notices = [
        json.loads(o["detail"]) for o in flow.outbox("billing") if o["detail_type"] == "TaxRollNoticed"
    ]
    # Q2 194.50 + its late charge 5.84 + Q3 194.50 = 394.84, to the owner of record (Zed).
    assert [(n["account_id"], n["arrears"], n["owner"]["name"], n["noticed_on"]) for n in notices] == [
        ("GR-1", "394.84", "Zed", "2026-10-15")
    ]
    entries = {e["entry_id"]: e for e in of(flow, "LEDGER#grafton-sewer") if e["account_id"] == "GR-1"}
    # 394.84 - 100.00 paid Nov 1 (to the noticed arrears first) = 294.84; 10% = 29.48.
    assert (entries["TAXROLL-2026-PENALTY"]["amount"], entries["TAXROLL-2026-PENALTY"]["posted_on"]) == (
        "29.48",
        "2026-11-02",
    )
    assert (entries["TAXROLL-2026-CERTIFIED"]["amount"], entries["TAXROLL-2026-CERTIFIED"]["kind"]) == (
        "-324.32",
        "tax_roll",
    )
    status, roll = call("GET", "/staff/grafton-sewer/tax-roll/2026")
    assert status == 200 and roll["certified_on"] == "2026-11-16"
    assert roll["entries"] == [
        {
            "account_id": "GR-1",
            "parcel_id": "GP-1",
            "owner_name": "Zed",
            "arrears": "294.84",
            "penalty": "29.48",
            "amount": "324.32",
        }
    ]
    [certified] = [
        json.loads(o["detail"]) for o in flow.outbox("billing") if o["detail_type"] == "TaxRollCertified"
    ]
    assert (certified["parcels"], certified["total"]) == (1, "324.32")
    # What stays on the account: Q3's late charge of Oct 22 (3% of 194.50), after the notice.
    _, ledger = call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger")
    assert ledger["balance"] == "5.84"
