"""OWASP API1 on the portal routes, through the local gateway on the real template: a
customer reaches only the accounts in its token, an owner only its parcels, staff only its
tenant; bad tokens get the authorizer's 401; every other 4xx is the JSON error shape."""

from __future__ import annotations

import base64
import json
import re
import time

import pytest

from conftest import call
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

SEWER, STORM = "pleasant-prairie-sewer", "pleasant-prairie-stormwater"
# Ada's ids (customer PP-0001 and PPW-0001, parcel PP-P-0001), tried by everyone else.
ADA_IDS = {
    "tenant": SEWER,
    "account_id": "PP-0001",
    "parcel_id": "PP-P-0001",
    "period_start": "2025-01-01",
    "year": "2025",
    "report": "aging",
    "credit_id": "c-1",
    "reconsideration_id": "r-1",
    "appeal_id": "a-1",
}


def _error_shape(status: int, body: bytes) -> dict[str, str]:
    doc = json.loads(body)
    assert set(doc) == {"error"}, (status, doc)
    assert set(doc["error"]) == {"code", "message"}, doc
    return dict(doc["error"])


def _portal_routes(rt: LocalRuntime) -> list[tuple[str, str]]:
    return sorted(
        {(r.method, r.path) for r in rt.stack.routes if r.authorizer is not None and r.path != "$default"}
    )


def _filled(path: str, ids: dict[str, str]) -> str:
    return re.sub(r"\{([^}+]+)\+?\}", lambda m: ids.get(m.group(1), "x"), path)


def test_the_demo_customer_sees_her_own_bills_and_balance(
    portal_rt: LocalRuntime, tokens: dict[str, str]
) -> None:
    status, _, body = call(portal_rt, "GET", f"/staff/{SEWER}/accounts/PP-0001/bills", tokens["ada"])
    assert status == 200
    assert json.loads(body)["bills"], "the February cycle billed PP-0001"
    status, _, body = call(portal_rt, "GET", f"/staff/{SEWER}/accounts/PP-0001/ledger", tokens["ada"])
    assert status == 200
    assert "balance" in json.loads(body)


@pytest.mark.parametrize("intruder", ["ben", "olive", "wes"])
def test_every_portal_route_with_another_customers_ids_is_refused(
    portal_rt: LocalRuntime, tokens: dict[str, str], intruder: str
) -> None:
    """Ben (another customer), Olive (an owner, but of tenant stormwater only via parcels) and
    Wes (staff of the other tenant) try every authorized route with Ada's sewer ids."""
    tried = 0
    for method, path in _portal_routes(portal_rt):
        if method not in ("GET", "POST", "PUT"):
            continue
        url = _filled(path, ADA_IDS)
        body = None
        headers = {}
        if path == "/payments":
            body = {"tenant": SEWER, "account_id": "PP-0001", "amount": "1.00"}
            headers = {"idempotency-key": f"intruder-{intruder}-1"}
        elif method in ("POST", "PUT"):
            body = {}
        status, _, raw = call(portal_rt, method, url, tokens[intruder], body, headers)
        if path.startswith("/tariffs/"):
            continue  # public tariff data: any signed-in caller may read it
        assert status in (400, 403, 404, 422), (intruder, method, url, status, raw[:200])
        if status in (400, 422):
            # refused before authorization for a malformed body: still nobody's data
            assert b"Ada" not in raw and b"Lake Rd" not in raw
        error = _error_shape(status, raw)
        assert "Ada" not in error["message"] and "Lake Rd" not in error["message"]
        tried += 1
    assert tried >= 10


def test_another_customer_cannot_pay_or_read_the_ledger_of_an_account_not_in_its_token(
    portal_rt: LocalRuntime, tokens: dict[str, str]
) -> None:
    for path in (f"/staff/{SEWER}/accounts/PP-0001/bills", f"/staff/{SEWER}/accounts/PP-0001/ledger"):
        status, _, raw = call(portal_rt, "GET", path, tokens["ben"])
        assert status == 403
        assert _error_shape(status, raw)["code"] == "forbidden"
    status, _, raw = call(
        portal_rt,
        "POST",
        "/payments",
        tokens["ben"],
        {"tenant": SEWER, "account_id": "PP-0001", "amount": "5.00"},
        {"idempotency-key": "ben-pays-ada-1"},
    )
    assert status == 403


def test_an_owner_sees_only_paid_status_of_its_own_parcel(
    portal_rt: LocalRuntime, tokens: dict[str, str]
) -> None:
    status, _, raw = call(portal_rt, "GET", f"/owners/{STORM}/parcels/PP-P-0001/bills", tokens["olive"])
    assert status == 200
    doc = json.loads(raw)
    assert doc["bills"], "PPW-0001 on parcel PP-P-0001 was billed"
    assert set(doc["bills"][0]) == {"period", "due_date", "total", "paid"}
    assert b"Ada" not in raw and b"Lake Rd" not in raw and b"PPW-0001" not in raw
    status, _, raw = call(portal_rt, "GET", f"/owners/{STORM}/parcels/PP-P-0002/bills", tokens["olive"])
    assert status == 403
    # an owner no longer reads an account's bills (lines, addresses) through the staff route
    status, _, _ = call(portal_rt, "GET", f"/staff/{STORM}/accounts/PPW-0001/bills", tokens["olive"])
    assert status == 403


def test_staff_of_one_tenant_cannot_act_on_another(portal_rt: LocalRuntime, tokens: dict[str, str]) -> None:
    status, _, _ = call(portal_rt, "GET", f"/staff/{SEWER}/cycles/2025-01-01", tokens["sam"])
    assert status == 200
    for method, path, body in (
        ("GET", f"/staff/{STORM}/cycles/2025-01-01", None),
        ("GET", f"/staff/{STORM}/accounts/PPW-0001/bills", None),
        ("GET", f"/staff/{STORM}/accounts/PPW-0001/ledger", None),
        ("PUT", f"/staff/{STORM}/accounts/PPW-0001", {"name": "Mallory"}),
        ("POST", f"/staff/{STORM}/cycles/2025-01-01/dry-run", None),
        ("GET", f"/owners/{STORM}/parcels/PP-P-0001/bills", None),
    ):
        status, _, raw = call(portal_rt, method, path, tokens["sam"], body)
        assert status == 403, (method, path, status, raw[:200])
        assert _error_shape(status, raw)["code"] == "forbidden"


def _b64(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def test_bad_tokens_get_the_authorizers_401(portal_rt: LocalRuntime, tokens: dict[str, str]) -> None:
    claims = {"role": "customer", "tenants": [SEWER], "accounts": ["PP-0001"]}
    good = tokens["ada"]
    header, payload, _signature = good.split(".")
    expired = portal_rt.mint_token(sub="demo-ada", claims={**claims, "exp": int(time.time()) - 60})
    bad = {
        "expired": expired,
        "unsigned": f"{header}.{payload}.",
        "tampered": f"{header}.{_b64({**json.loads(base64.urlsafe_b64decode(payload + '==')), 'accounts': ['PP-0002']})}.{_signature}",
        "wrong audience": portal_rt.mint_token(sub="demo-ada", claims=claims, audience="someone-else"),
        "wrong issuer": portal_rt.mint_token(sub="demo-ada", claims=claims, issuer="https://evil.example/"),
        "alg none": f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{payload}.",
        "garbage": "not-a-jwt",
    }
    for why, token in bad.items():
        status, _, raw = call(portal_rt, "GET", f"/staff/{SEWER}/accounts/PP-0001/bills", token)
        assert (status, json.loads(raw)) == (401, {"message": "Unauthorized"}), why
    status, _, _ = call(portal_rt, "GET", f"/staff/{SEWER}/accounts/PP-0001/bills", None)
    assert status == 401


def test_list_routes_paginate_with_limit_and_cursor(portal_rt: LocalRuntime, tokens: dict[str, str]) -> None:
    path = f"/staff/{SEWER}/accounts/PP-0001/ledger"
    _, _, raw = call(portal_rt, "GET", path, tokens["ada"])
    everything = json.loads(raw)
    assert everything["next_cursor"] is None
    seen, cursor = [], None
    while True:
        status, _, raw = call(
            portal_rt, "GET", path + "?limit=1" + (f"&cursor={cursor}" if cursor else ""), tokens["ada"]
        )
        assert status == 200
        page = json.loads(raw)
        assert len(page["entries"]) <= 1
        seen += page["entries"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == everything["entries"]
