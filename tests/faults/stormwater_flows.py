"""The Pleasant Prairie stormwater flows of the fault harness (`fault_harness`), issue 28:

- a PP-CWU-CREDIT application filed by the parcel's owner, whose review fee (FeeCharged)
  billing keeps and puts on the account's next bill, so it reaches the account's ledger;
- a PP-CWU-RECONSIDER decision that corrects a parcel's ERU from the start of the
  reconsidered bill's period: billing re-rates that billed month (a refund, a ledger
  credit on the bill) and the next cycle bills the later month at the corrected ERU.

One nonresidential parcel, RP-1 (43,560 sq ft, 30,000 impervious: 6.54 ERU), on account
PPW-1 opened 2026-08-03; the stormwater cycle runs at 06:00 Chicago on the 1st."""

from __future__ import annotations

import json
import urllib.request
from datetime import UTC, datetime
from typing import Any

from fault_harness import Flow

from sewerbill.local import LocalRuntime

SW = "pleasant-prairie-stormwater"
PARCEL = "RP-1"
START = datetime(2026, 8, 31, 14, tzinfo=UTC)
ACCOUNTS = (
    "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,parcel_id,owner_name\n"
    f"{SW},PPW-1,Lakeview Commerce LLC,9 Lake Rd,9 Lake Rd,53158,2026-08-03,nonresidential,,{PARCEL},"
    "Lakeview Commerce LLC\n"
)
EXTRACT = (
    "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft\n"
    f"{SW},{PARCEL},Lakeview Commerce LLC,nonresidential,43560,30000\n"
)


def call(rt: LocalRuntime, method: str, path: str, body: Any, claims: dict[str, Any]) -> int:
    """An HTTP route of the stack, with a token carrying ``claims``; its status."""
    token = rt.mint_token(sub=str(claims["role"]), claims=claims)
    request = urllib.request.Request(
        rt.gateway_url + path,
        data=json.dumps(body).encode(),
        method=method,
        headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 - the local gateway
        return int(answer.status)


OWNER = {"role": "owner", "tenants": [SW], "parcels": [PARCEL]}
STAFF = {"role": "staff", "tenants": [SW]}


def _on_file(rt: LocalRuntime) -> None:
    """The parcel determined (GIS extract) and its account loaded, both kept by billing."""
    rt.upload("UploadsBucket", "gis/rp.csv", EXTRACT)
    rt.upload("UploadsBucket", "accounts/rp.csv", ACCOUNTS)


def _billed(rt: LocalRuntime) -> None:
    """August and September billed at 6.54 ERU (cycles of 09-01 and 10-01)."""
    _on_file(rt)
    rt.clock.advance(to=datetime(2026, 9, 1, 14, tzinfo=UTC))
    rt.drain()
    rt.clock.advance(to=datetime(2026, 10, 1, 14, tzinfo=UTC))
    rt.drain()


def _credit_application(rt: LocalRuntime) -> None:
    """The owner files a credit application on 09-10 (its review fee charged once); the
    10-01 cycle puts the fee on the account's bill, so it reaches the ledger."""
    rt.clock.advance(to=datetime(2026, 9, 10, 15, tzinfo=UTC))
    body = {
        "engineer_name": "Pat Lee, P.E.",
        "engineer_license": "WI-PE-40123",
        "document_ref": "Lee Engineering report 2026-17",
        "practice": "wet detention pond treating the lot",
    }
    assert call(rt, "POST", f"/parcels/{SW}/{PARCEL}/credits", body, OWNER) == 200
    rt.drain()
    rt.clock.advance(to=datetime(2026, 10, 1, 14, tzinfo=UTC))


def _filed(rt: LocalRuntime) -> None:
    """Billed for August and September; on 10-02 the owner asks to reconsider September's bill."""
    _billed(rt)
    rt.clock.advance(to=datetime(2026, 10, 2, 15, tzinfo=UTC))
    request = {
        "bill_id": "PPW-1-2026-09-01",
        "grounds": "half the lot is now lawn",
        "asserted_amount": "25.00",
    }
    assert call(rt, "POST", f"/parcels/{SW}/{PARCEL}/reconsiderations", request, OWNER) == 200


def _reconsidered(rt: LocalRuntime) -> None:
    """The Engineer finds 15,000 sq ft impervious (3.83 ERU, 41% less) on 10-05: corrected
    from 09-01, so September's bill is re-rated (a refund) and the 11-01 cycle bills October
    at 3.83 ERU."""
    rt.clock.advance(to=datetime(2026, 10, 5, 15, tzinfo=UTC))
    ids = _reconsideration_ids(rt)
    decision = {
        "outcome": "decide",
        "reason": "half the lot is now lawn",
        "found": {"impervious_sqft": "15000"},
    }
    path = f"/staff/{SW}/parcels/{PARCEL}/reconsiderations/{ids[0]}/decision"
    assert call(rt, "POST", path, decision, STAFF) == 200
    rt.drain()
    rt.clock.advance(to=datetime(2026, 11, 1, 14, tzinfo=UTC))


def _reconsideration_ids(rt: LocalRuntime) -> list[str]:
    token = rt.mint_token(sub="owner", claims=OWNER)
    request = urllib.request.Request(
        rt.gateway_url + f"/parcels/{SW}/{PARCEL}/eru", headers={"authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 - the local gateway
        view = json.loads(answer.read())
    return [r["reconsideration_id"] for r in view["reconsiderations"]]


_ALL = (
    Flow(
        "credit fee (billing keeps it)",
        "BillingOnProducerEventFunction",
        START,
        _on_file,
        _credit_application,
        gateway=True,
    ),
    Flow(
        "reconsideration (billing re-rates)",
        "BillingOnProducerEventFunction",
        START,
        _filed,
        _reconsidered,
        gateway=True,
    ),
)
FLOWS = {flow.name: flow for flow in _ALL}
