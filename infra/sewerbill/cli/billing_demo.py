"""A small fixed 2025 data set for the portal tests (tests/portal/conftest.py): three accounts
loaded, a stormwater parcel's ERU published, so a February cycle issues bills. (It was part
of the old tour ``sewerbill local demo`` was; the demo is now a generated year, issue 32.)"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ACCOUNTS = (
    "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,zone,meter_size,parcel_id,"
    "email,email_opt_in\n"
    'pleasant-prairie-sewer,PP-0001,Ada Demo,1 Lake Rd,"1 Lake Rd, Pleasant Prairie, WI 53158",53158,2025-01-01,residential,PP,5/8,,'
    "ada@example.org,true\n"
    'pleasant-prairie-sewer,PP-0002,Ben Demo,2 Lake Rd,"2 Lake Rd, Pleasant Prairie, WI 53158",53158,2025-01-01,residential,PP,5/8,,,\n'
    'pleasant-prairie-stormwater,PPW-0001,Ada Demo,1 Lake Rd,"1 Lake Rd, Pleasant Prairie, WI 53158",53158,2025-01-01,residential,,,PP-P-0001,,\n'
)
FIXTURE = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "events" / "ERUDetermined.json"


def _get(rt: Any, path: str, tenant: str) -> dict[str, Any]:
    token = rt.mint_token(sub="demo-clerk", claims={"role": "staff", "tenants": [tenant]})
    req = urllib.request.Request(rt.gateway_url + path, headers={"authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - loopback gateway
        result: dict[str, Any] = json.loads(resp.read())
    return result


def load_accounts(rt: Any, bucket: str, say: Callable[[str], None]) -> None:
    """Before the cycle: the accounts file, and the stormwater parcel's ERU (as the stormwater
    service would publish it)."""
    say("      billing: uploading accounts/demo.csv (2 sewer accounts, 1 stormwater parcel) ...")
    rt.upload(bucket, "accounts/demo.csv", ACCOUNTS)
    if FIXTURE.exists():
        eru = json.loads(FIXTURE.read_text())["detail"]
        eru.update(
            {
                "tenant": "pleasant-prairie-stormwater",
                "parcel_id": "PP-P-0001",
                "effective_from": "2025-01-01",
                "eru": "1.00",
                "exempt": False,
            }
        )
        eru["breakdown"]["use"] = "residential"
        rt.put_event("sewerbill.stormwater", "ERUDetermined", eru, bus="EventBus")
        rt.drain()


def after_cycle(rt: Any, bucket: str, say: Callable[[str], None]) -> bool:
    """After the February cycle: show the bills, post a payment, pass the delinquency day."""
    ok = True
    billed: set[str] = set()
    for tenant, account in (  # the sewer accounts' January use comes from metering's demo reads
        ("pleasant-prairie-sewer", "PP-0001"),
        ("pleasant-prairie-sewer", "PP-0002"),
        ("pleasant-prairie-stormwater", "PPW-0001"),
    ):
        bills = _get(rt, f"/staff/{tenant}/accounts/{account}/bills", tenant)["bills"]
        for b in bills:
            lines = ", ".join(f"{ln['rule_id']} {ln['amount']}" for ln in b["lines"])
            say(f"      bill {b['bill_number']}: {lines} = {b['total']}, due {b['due_date']}")
        if bills:
            billed.add(account)
        else:
            say(f"      {account}: no bill yet (held until its consumption is determined)")
        ok &= bool(bills) or tenant == "pleasant-prairie-sewer"
    say(
        "      billing: lockbox payments/demo.csv pays 68.00 on PP-0001 "
        + (
            "(its bill, 2 cents over: kept as a credit balance) ..."
            if "PP-0001" in billed
            else "(no bill yet: the whole payment stands as a credit balance on the account) ..."
        )
    )
    paid_on = rt.clock.now.date().isoformat()  # the bank's file lists payments already received
    rt.upload(
        bucket,
        "payments/demo.csv",
        f"tenant,account_id,reference,paid_on,amount\npleasant-prairie-sewer,PP-0001,DEMO-1,{paid_on},68.00\n",
    )
    balance = _get(rt, "/staff/pleasant-prairie-sewer/accounts/PP-0001/ledger", "pleasant-prairie-sewer")[
        "balance"
    ]
    say(f"      PP-0001 balance after the payment: {balance}")
    target = datetime(2025, 3, 4, 14, tzinfo=UTC)
    say(f"      advancing to {target:%Y-%m-%d} (the stormwater bill's delinquency day, PP-CWU-PENALTY) ...")
    rt.clock.advance(to=target)
    entries = _get(
        rt, "/staff/pleasant-prairie-stormwater/accounts/PPW-0001/ledger", "pleasant-prairie-stormwater"
    )["entries"]
    penalties = [e for e in entries if e["kind"] == "penalty"]
    for e in penalties:
        say(f"      penalty {e['rule_id']} {e['amount']} on {e['posted_on']} (bill {e['bill_id']})")
    ok &= bool(penalties)
    return ok
