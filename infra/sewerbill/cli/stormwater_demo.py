"""The stormwater part of ``sewerbill local demo`` (issue 11), kept apart from the main demo.

A GIS extract with three parcels (residential, commercial, agricultural exempt) is uploaded
under gis/; stormwater determines their ERUs and publishes them; the commercial parcel's
owner applies for a credit that the Engineer reviews and approves through the staff routes;
the owner then reads the parcel's ERU breakdown.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

TENANT = "pleasant-prairie-stormwater"
EXTRACT = (
    "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft,woods_sqft,excluded_sqft,farmstead\n"
    f"{TENANT},DEMO-R1,Ann Home,residential,15100,1999.71,,,\n"
    f"{TENANT},DEMO-C1,Lakeview Commerce LLC,nonresidential,43560,30000,,,\n"
    f"{TENANT},DEMO-A1,Hill Farm,agricultural,871200,2000,,,\n"
)
GIS_FUNCTION = "StormwaterOnGisExtractUploadedFunction"
PUBLISHER = "StormwaterPublishOutboxFunction"


def _call(rt: Any, method: str, path: str, claims: dict[str, Any], body: Any = None) -> tuple[int, Any]:
    token = rt.mint_token(sub=str(claims["sub"]), claims=claims)
    req = urllib.request.Request(
        rt.gateway_url + path,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - loopback gateway
            answer = resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        answer = err.code, json.loads(err.read() or b"null")
    rt.drain()
    return answer


DEMO_ACCOUNTS = (
    "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,parcel_id,owner_name\n"
    f"{TENANT},PPW-DEMO-C1,Demo Commerce LLC,2 Lake Rd,2 Lake Rd,53158,2025-01-01,nonresidential,,DEMO-C1,"
    "Demo Commerce LLC\n"
)


def run(rt: Any, say: Callable[[str], None]) -> bool:
    if GIS_FUNCTION not in rt.stack.functions:
        return True
    say("[stormwater] uploading gis/demo-parcels.csv (residential, commercial, agricultural) ...")
    before = len(rt.invocations)
    began = time.perf_counter()
    rt.upload("UploadsBucket", "gis/demo-parcels.csv", EXTRACT)
    new = rt.invocations[before:]
    published = sum(i.records for i in new if i.function == PUBLISHER)
    consumers = sorted({i.function for i in new if i.function not in (GIS_FUNCTION, PUBLISHER)})
    say(
        f"      taken in and published in {time.perf_counter() - began:.2f} s: {published} event(s) to the bus"
    )
    if consumers:
        say(f"      received by {', '.join(consumers)}")
    # The 3 new parcels' determinations travel as one ERUsDetermined, beside the summary.
    ok = GIS_FUNCTION in {i.function for i in new} and published >= 2
    staff = {"sub": "demo-engineer", "role": "staff", "tenants": [TENANT]}
    owner = {"sub": "demo-owner", "role": "owner", "tenants": [TENANT], "parcels": ["DEMO-C1"]}
    # The commercial parcel's billing account: billing charges the credit's review fee to it.
    rt.upload("UploadsBucket", "accounts/demo-stormwater.csv", DEMO_ACCOUNTS)
    rt.drain()
    status, credit = _call(
        rt,
        "POST",
        f"/parcels/{TENANT}/DEMO-C1/credits",
        owner,
        {
            "engineer_name": "Pat Engineer, P.E.",
            "engineer_license": "WI-PE-41234",
            "document_ref": "Wet pond report 2025-01",
            "practice": "Wet detention pond",
        },
    )
    ok &= status == 200
    if status == 200:
        base = f"/staff/{TENANT}/parcels/DEMO-C1/credits/{credit['credit_id']}"
        _call(rt, "POST", f"{base}/review", staff)
        status, credit = _call(
            rt,
            "POST",
            f"{base}/decision",
            staff,
            {"decision": "approve", "tss_removal_percent": "92", "reason": "PE report accepted"},
        )
        ok &= status == 200
        say(
            f"      credit {credit.get('credit_id')}: {credit.get('status')} at {credit.get('credit_percent')}% "
            f"from {credit.get('effective_from')} (review fee for PPW-DEMO-C1's next bill)"
        )
    for parcel in ("DEMO-R1", "DEMO-C1", "DEMO-A1"):
        status, view = _call(rt, "GET", f"/parcels/{TENANT}/{parcel}/eru", staff)
        ok &= status == 200
        if status == 200:
            b = view["breakdown"]
            say(
                f"      {parcel}: {view['eru']} ERU{' (exempt)' if view['exempt'] else ''}, "
                f"CN {b['composite_cn']}, runoff {b['runoff_cuft']} cu ft, {b['tariff_version']}"
            )
    return bool(ok)
