"""Hostile input on the routes issue 28 added or changed, through the local runtime's
gateway (the real template.yaml on moto server): the notice by id and its PDF, the private
sewers, an account's samples (with satellite deadlines), the staff debit memo charged under
GR-TOXIC, and the PP-CWU-CREDIT application with its review fee.

Each hostile request gets a 4xx with the documented error shape (CONTRACTS.md, "HTTP API")
and no traceback, never a 5xx; a refused write stores nothing (every table of the stack is
the same item for item before and after the refusals) and publishes nothing."""

from __future__ import annotations

import http.client
import json
import urllib.parse
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from billing.events import BillsIssued
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
GR = "grafton-sewer"
PP = "pleasant-prairie-sewer"
SW = "pleasant-prairie-stormwater"
TABLES = ("MeteringTable", "SamplingTable", "StormwaterTable", "BillingTable", "NoticesTable")
HUGE = "A" * 2000


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2026, 10, 21, 14, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": "hostile-28"},
        stack_name="hostile-28",
    ) as runtime:
        yield runtime


def token(rt: LocalRuntime, role: str = "staff", tenant: str = GR, **claims: Any) -> str:
    return str(rt.mint_token(sub="tester", claims={"role": role, "tenants": [tenant], **claims}))


def send(rt: LocalRuntime, method: str, path: str, bearer: str, body: Any = None) -> tuple[int, Any, bytes]:
    """``path`` is sent exactly as given (already percent-encoded where it means to be), so
    ``../`` and ``%2F`` reach the gateway as a hostile client would send them."""
    netloc = urllib.parse.urlsplit(rt.gateway_url).netloc
    conn = http.client.HTTPConnection(netloc, timeout=60)
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    headers = {"authorization": f"Bearer {bearer}", "content-type": "application/json"}
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    raw = response.read()
    conn.close()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = None
    return response.status, parsed, raw


def refused(status: int, body: Any, raw: bytes) -> bool:
    """A 4xx with the error shape (or API Gateway's own 401), no exception text."""
    if not 400 <= status < 500 or b"Traceback" in raw or b"Error(" in raw:
        return False
    if status == 401 and body == {"message": "Unauthorized"}:
        return True
    return (
        isinstance(body, dict)
        and set(body) == {"error"}
        and set(body["error"]) == {"code", "message"}
        and bool(body["error"]["message"])
    )


def stored(rt: LocalRuntime) -> dict[str, list[Any]]:
    """Every item of every table of the stack (sorted by key), to prove a refusal stored nothing."""
    ddb = rt.client("dynamodb")
    out: dict[str, list[Any]] = {}
    for table in TABLES:
        pages = ddb.get_paginator("scan").paginate(TableName=rt.resource(table))
        items = [i for page in pages for i in page["Items"]]
        out[table] = sorted(items, key=lambda i: json.dumps(i, sort_keys=True))
    return out


def a_notice(rt: LocalRuntime) -> str:
    """A Grafton bill's notice (N-BILL), made by notices from a BillsIssued on the bus."""
    import sys

    sys.path.insert(0, str(REPO / "tests" / "handlers"))
    from handler_support import issued

    bill = issued(False, bill_id="GR-1-2026-07-01", bill_number="GR-202607-GR-1", email=None)
    chunk = BillsIssued(
        occurred_at=bill.occurred_at,
        tenant=GR,
        first_bill_id=bill.bill_id,
        last_bill_id=bill.bill_id,
        bills=(bill,),
    )
    rt.put_event(chunk.SOURCE, chunk.detail_type(), json.loads(chunk.detail_json()), bus="EventBus")
    rt.drain()
    status, log, _ = send(rt, "GET", f"/staff/{GR}/accounts/GR-1/notices", token(rt))
    assert status == 200, log
    (notice,) = log["notices"]
    return str(notice["notice_id"])


def test_x_audit_hostile_notice_ids_are_refused_4xx_and_a_real_one_still_answers(rt: LocalRuntime) -> None:
    notice_id = a_notice(rt)
    staff = token(rt)
    status, body, _ = send(rt, "GET", f"/staff/{GR}/notices/{notice_id}", staff)
    assert status == 200 and body["notice_id"] == notice_id
    hostile = [
        "..%2F..%2Faccounts%2FGR-1%2Fnotices",
        "../../accounts/GR-1/notices",
        f"..%2F{notice_id}",
        "%00",
        f"{notice_id}%00",
        HUGE,
        f"{notice_id}{HUGE}",
        "%2F",
        "a%2Fb",
        "%25",
        "%E2%80%AE" + notice_id,  # a right-to-left override before the id
        "%FF%FE",  # not UTF-8
    ]
    for raw in hostile:
        for suffix in ("", "/pdf"):
            status, body, text = send(rt, "GET", f"/staff/{GR}/notices/{raw}{suffix}", staff)
            assert refused(status, body, text), (raw, suffix, status, text[:300])
            assert len(text) < 1000  # the answer does not echo a 2,000-character id back
    # An id that cannot be a notice's (not 1-64 hex digits) is refused by the route itself
    # (400), before any table read: real DynamoDB refuses a sort key over 1,024 bytes with
    # a ValidationException, which would have been a 5xx.
    for raw in (HUGE, f"{notice_id}{HUGE}", "%25", "NOTICE-1", notice_id.upper()):
        status, body, text = send(rt, "GET", f"/staff/{GR}/notices/{raw}", staff)
        assert (status, refused(status, body, text)) == (400, True), (raw, text[:300])
    # Another tenant's notice id: Sullivan's clerk asks under Sullivan and finds nothing,
    # and under Grafton is forbidden; a customer (even of the notice's own account) is refused.
    sullivan = token(rt, tenant="sullivan-sewer")
    customer = token(rt, role="customer", accounts=["GR-1"])
    for bearer, path, code in (
        (sullivan, f"/staff/sullivan-sewer/notices/{notice_id}", 404),
        (sullivan, f"/staff/sullivan-sewer/notices/{notice_id}/pdf", 404),
        (sullivan, f"/staff/{GR}/notices/{notice_id}", 403),
        (customer, f"/staff/{GR}/notices/{notice_id}", 403),
        (customer, f"/staff/{GR}/notices/{notice_id}/pdf", 403),
        ("not-a-token", f"/staff/{GR}/notices/{notice_id}", 401),
    ):
        status, body, text = send(rt, "GET", path, bearer)
        assert (status, refused(status, body, text)) == (code, True), (path, text[:300])


def test_pp_sew_private_and_sat_sample_routes_refuse_hostile_paths_4xx(rt: LocalRuntime) -> None:
    staff = token(rt, tenant=PP)
    status, body, _ = send(rt, "GET", f"/staff/{PP}/private-sewers", staff)
    assert status == 200 and body["private_sewers"] == []
    status, body, _ = send(rt, "GET", f"/staff/{PP}/accounts/PPS-1/samples", staff)
    assert status in (200, 404), body
    for path, bearer in (
        (f"/staff/{PP}/private-sewers", token(rt, role="customer", tenant=PP, accounts=["PPS-1"])),
        (f"/staff/{GR}/private-sewers", staff),  # a tenant the token does not name
        (f"/staff/{HUGE}/private-sewers", staff),
        ("/staff/..%2F/private-sewers", staff),
        ("/staff/%00/private-sewers", staff),
        (f"/staff/{PP}/accounts/..%2F..%2Fprivate-sewers/samples", staff),
        (f"/staff/{PP}/accounts/%00/samples", staff),
        (f"/staff/{PP}/accounts/{HUGE}/samples", staff),
        (f"/staff/{PP}/accounts/PPS%231/samples", staff),  # '#': the table's key separator
        (f"/staff/{PP}/accounts/PPS-1/samples", token(rt, role="customer", tenant=PP, accounts=["PPS-1"])),
    ):
        status, body, text = send(rt, "GET", path, bearer)
        assert refused(status, body, text), (path, status, text[:300])


def test_gr_toxic_and_pp_cwu_credit_refusals_store_nothing(rt: LocalRuntime) -> None:
    """A debit memo under GR-TOXIC with a missing, wrong-typed, huge or nested basis, a
    negative amount; a credit application with missing, wrong-typed, huge or extra fields,
    for another's parcel: each refused 4xx, and no table changes."""
    before = stored(rt)
    staff = token(rt)
    memo = {
        "bill_id": "GR-1-2026-07-01",
        "amount": "1840.00",
        "reason": "cadmium at the plant",
        "approver": "Utility Director",
        "reference": "TOX-1",
        "rule_id": "GR-TOXIC",
        "basis": {"pollutant": "cadmium", "added_cost": "1840.00", "document": "WWTP invoice 2026-114"},
    }
    basis = memo["basis"]
    assert isinstance(basis, dict)
    hostile_memos: list[Any] = [
        {**memo, "basis": None},
        {**memo, "basis": {}},
        {k: v for k, v in memo.items() if k != "basis"},
        {**memo, "basis": "cadmium 1840.00"},
        {**memo, "basis": ["cadmium", "1840.00"]},
        {**memo, "basis": {**basis, "added_cost": 1840}},
        {**memo, "basis": {**basis, "added_cost": "1e3"}},
        {**memo, "basis": {**basis, "added_cost": "1839.99"}},  # not the amount charged
        {**memo, "basis": {**basis, "pollutant": HUGE}},
        {**memo, "basis": {**basis, "pollutant": {"name": {"deeper": ["cadmium"]}}}},
        {**memo, "basis": {**basis, "extra": "x"}},
        {**memo, "basis": {k: v for k, v in basis.items() if k != "document"}},
        {**memo, "amount": "-1840.00", "basis": {**basis, "added_cost": "-1840.00"}},
        {**memo, "amount": "-1840.00"},
        {**memo, "amount": 1840},
        {**memo, "amount": "NaN"},
        {**memo, "amount": "1e9"},
        {**memo, "rule_id": "GR-LATE"},
        {**memo, "rule_id": "PP-CWU-CREDIT"},
        {**memo, "rule_id": HUGE},
        {**memo, "reference": "../TOX-1"},
        {**memo, "bill_id": "GR-1-2026-07-01%00"},
        {**memo, "bill_id": "NO-SUCH-BILL"},
        [memo],
    ]
    for body in hostile_memos:
        status, answer, text = send(rt, "POST", f"/staff/{GR}/accounts/GR-1/adjustments", staff, body)
        assert refused(status, answer, text), (body, status, text[:300])
    for bearer in (token(rt, role="customer", accounts=["GR-1"]), token(rt, tenant="sullivan-sewer")):
        status, answer, text = send(rt, "POST", f"/staff/{GR}/accounts/GR-1/adjustments", bearer, memo)
        assert (status, refused(status, answer, text)) == (403, True), text[:300]
    status, answer, text = send(rt, "POST", f"/staff/{GR}/accounts/GR-1/adjustments", staff, b"{not json")
    assert refused(status, answer, text), text[:300]

    application = {
        "engineer_name": "Pat Lee, P.E.",
        "engineer_license": "WI-PE-40123",
        "document_ref": "Lee Engineering report 2026-17",
        "practice": "wet detention pond treating the lot",
    }
    owner = token(rt, role="owner", tenant=SW, parcels=["P-OWN"])
    hostile_applications: list[Any] = [
        {},
        {k: v for k, v in application.items() if k != "engineer_license"},
        {**application, "engineer_name": 12},
        {**application, "practice": {"nested": [application]}},
        {**application, "document_ref": HUGE},
        {**application, "fee": "-50.00"},  # a field the route does not take
        [application],
        "application",
    ]
    for body in hostile_applications:
        status, answer, text = send(rt, "POST", f"/parcels/{SW}/P-OWN/credits", owner, body)
        assert refused(status, answer, text), (body, status, text[:300])
    for bearer, parcel in (
        (owner, "P-OTHER"),  # not the caller's parcel
        (token(rt, role="owner", tenant=GR, parcels=["P-OWN"]), "P-OWN"),  # another tenant's token
        (token(rt, role="staff", tenant=SW), "%00"),
        (token(rt, role="staff", tenant=SW), HUGE),
        (token(rt, role="staff", tenant=SW), "..%2F..%2Fstaff"),
        (token(rt, role="staff", tenant=SW), "P-UNKNOWN"),  # no such parcel
    ):
        status, answer, text = send(rt, "POST", f"/parcels/{SW}/{parcel}/credits", bearer, application)
        assert refused(status, answer, text), (parcel, status, text[:300])
    rt.drain()
    assert stored(rt) == before
