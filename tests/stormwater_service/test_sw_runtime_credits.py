"""The whole credit lifecycle through the HTTP API on the local runtime (PP-CWU-CREDIT,
PP-CWU-CREDIT-REVOKE): application with its review fee, review, approval effective the day
it is decided, an inspection, and a revocation refused at 29 days' notice, accepted at 30."""

from __future__ import annotations

from datetime import timedelta

import pytest

from conftest import STAFF, TENANT, Captured, call, owner
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

EXTRACT = (
    "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft\n"
    f"{TENANT},CR-C1,Pond Plaza LLC,nonresidential,87120,60000\n"
    f"{TENANT},CR-R1,Ann Home,residential,15100,1999.71\n"
)
DOCS = {
    "engineer_name": "Pat Engineer, P.E.",
    "engineer_license": "WI-PE-41234",
    "document_ref": "Wet pond design report 2026-08",
    "practice": "Wet detention pond treating the whole parking lot",
}


def test_a_credit_from_application_to_revocation(rt: LocalRuntime, captured: Captured) -> None:
    rt.upload("UploadsBucket", "gis/credits.csv", EXTRACT)
    captured.take()
    base = f"/parcels/{TENANT}/CR-C1"
    staff = f"/staff/{TENANT}/parcels/CR-C1/credits"

    # Residential parcels get no credit; only the owner (or staff) may apply.
    status, body = call(rt, "POST", f"/parcels/{TENANT}/CR-R1/credits", owner("CR-R1"), DOCS)
    assert status == 400 and body["error"]["message"].startswith("parcel.use: credits are for nonresidential")
    status, _ = call(rt, "POST", f"{base}/credits", owner("CR-R1"), DOCS)
    assert status == 403

    status, credit = call(rt, "POST", f"{base}/credits", owner("CR-C1"), DOCS)
    assert status == 200 and credit["status"] == "submitted"
    credit_id = credit["credit_id"]
    events = captured.take()
    (fee,) = [e["detail"] for e in events if e["detail-type"] == "FeeCharged"]
    assert (fee["kind"], fee["amount"], fee["rule_id"]) == ("credit_review", "100.00", "PP-CWU-CREDIT")
    assert [e["detail"]["status"] for e in events if e["detail-type"] == "CreditChanged"] == ["submitted"]

    # The owner cannot decide their own credit.
    status, _ = call(rt, "POST", f"{staff}/{credit_id}/review", owner("CR-C1"))
    assert status == 403
    # Approval needs the review first.
    status, body = call(
        rt,
        "POST",
        f"{staff}/{credit_id}/decision",
        STAFF,
        {"decision": "approve", "tss_removal_percent": "92"},
    )
    assert status == 409
    assert call(rt, "POST", f"{staff}/{credit_id}/review", STAFF)[0] == 200

    # A week later the Engineer approves: 92% TSS removal - the 80% limit = 12%, from that day on.
    rt.clock.advance(by=timedelta(days=7))
    approved_on = rt.clock.now.date()
    status, credit = call(
        rt,
        "POST",
        f"{staff}/{credit_id}/decision",
        STAFF,
        {"decision": "approve", "tss_removal_percent": "92", "reason": "pond inspected, PE report accepted"},
    )
    assert status == 200 and (credit["status"], credit["credit_percent"]) == ("approved", "12")
    changed = [e["detail"] for e in captured.take("CreditChanged")]
    assert [(c["status"], c["credit_percent"], c["effective_from"]) for c in changed] == [
        ("under_review", "0", changed[0]["effective_from"]),
        ("approved", "12", approved_on.isoformat()),  # never retroactive to the application
    ]

    status, credit = call(
        rt,
        "POST",
        f"{staff}/{credit_id}/inspections",
        STAFF,
        {
            "inspected_on": approved_on.isoformat(),
            "inspector": "J. Inspector",
            "result": "deficient",
            "notes": "outlet structure removed",
        },
    )
    assert status == 200 and credit["inspections"][0]["result"] == "deficient"

    # Revocation: 29 days' notice is refused with the dates, 30 days is accepted.
    today = rt.clock.now.date()
    too_soon = today + timedelta(days=29)
    status, body = call(
        rt,
        "POST",
        f"{staff}/{credit_id}/revocation",
        STAFF,
        {"revocation_date": too_soon.isoformat(), "reason": "outlet removed; no longer treats runoff"},
    )
    assert status == 400
    message = body["error"]["message"]
    assert message.startswith("revocation_date:") and "29 days" in message
    assert (today + timedelta(days=30)).isoformat() in message
    assert captured.take() == []

    on_time = today + timedelta(days=30)
    status, credit = call(
        rt,
        "POST",
        f"{staff}/{credit_id}/revocation",
        STAFF,
        {"revocation_date": on_time.isoformat(), "reason": "outlet removed; no longer treats runoff"},
    )
    assert status == 200 and credit["status"] == "revoked"
    events = captured.take()
    (notice,) = [e["detail"] for e in events if e["detail-type"] == "CreditRevocationProposed"]
    assert (notice["notice_date"], notice["revocation_date"]) == (today.isoformat(), on_time.isoformat())
    assert notice["owner_name"] == "Pond Plaza LLC"
    (revoked,) = [e["detail"] for e in events if e["detail-type"] == "CreditChanged"]
    assert (revoked["status"], revoked["credit_percent"], revoked["effective_from"]) == (
        "revoked",
        "0",
        on_time.isoformat(),
    )
    assert rt.dead_letters == []

    # The owner sees it all with the ERU breakdown.
    status, view = call(rt, "GET", f"{base}/eru", owner("CR-C1"))
    assert status == 200 and view["credits"][0]["status"] == "revoked"
    assert view["breakdown"]["use"] == "nonresidential" and view["eru"] == view["history"][-1]["eru"]


def test_pp_cwu_credit_the_review_fee_reaches_the_parcels_account_once(
    rt: LocalRuntime, captured: Captured
) -> None:
    """The application filed through the route charges the tariff's review fee (100.00) to
    the billing account on the parcel (stormwater names only the parcel): a line of that
    account's next bill citing PP-CWU-CREDIT, on its ledger once."""
    from datetime import UTC, datetime

    account = "PPS-CR2"
    rt.upload(
        "UploadsBucket",
        "gis/credits-2.csv",
        "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft\n"
        f"{TENANT},CR-C2,Mill Pond LLC,nonresidential,87120,60000\n",
    )
    rt.upload(
        "UploadsBucket",
        "accounts/credits-2.csv",
        "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,parcel_id,owner_name\n"
        f"{TENANT},{account},Mill Pond LLC,5 Mill Rd,5 Mill Rd,53158,2026-10-01,nonresidential,,CR-C2,Mill Pond LLC\n",
    )
    rt.drain()
    captured.take()
    status, credit = call(rt, "POST", f"/parcels/{TENANT}/CR-C2/credits", owner("CR-C2"), DOCS)
    assert status == 200 and credit["status"] == "submitted"
    (fee,) = [e["detail"] for e in captured.take() if e["detail-type"] == "FeeCharged"]
    assert (fee["account_id"], fee["amount"], fee["rule_id"]) == (None, "100.00", "PP-CWU-CREDIT")

    # The cycle of 2026-11-01 bills October with the fee on it.
    rt.clock.advance(to=datetime(2026, 11, 1, 18, tzinfo=UTC))
    rt.drain()
    status, ledger = call(rt, "GET", f"/staff/{TENANT}/accounts/{account}/ledger", STAFF)
    assert status == 200, ledger
    fees = [e for e in ledger["entries"] if e["rule_id"] == "PP-CWU-CREDIT" and e["kind"] == "charge"]
    assert [e["amount"] for e in fees] == ["100.00"]
    assert rt.dead_letters == []
