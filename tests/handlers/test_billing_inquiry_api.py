"""The clerk's account inquiry (issue 33) on moto: search from one box (ranking, paging,
who may search, hostile queries, the index kept with each account version) and the
account page's summary."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from handler_support import Stack, authorized_http_event, lambda_context
from test_billing_flow import ACCOUNTS, HEADER, consume, flow, run_cycle, upload  # noqa: F401

from billing.handlers import api

GRAFTON_TARIFF = (
    Path(__file__).resolve().parents[2] / "infra" / "tariffs" / "grafton-sewer" / "2025-01-01.yaml"
)
TARIFF_NAME = re.compile(r"^name: (.+)$", re.MULTILINE)
STAFF = {"sub": "clerk", "role": "staff", "tenants": "[grafton-sewer]"}
SEARCH = "/staff/grafton-sewer/search"
# GR-10 and GR-11 make "GR-1" an exact id and a prefix of other ids; "Lake" is a word of
# two addresses, "Main" of the others.
MORE = (
    HEADER + "\n"
    "grafton-sewer,GR-10,Ann Lake,10 Lake Dr,PO Box 9,53024,2026-01-01,residential,5/8,GP-10,Ann Lake\n"
    "grafton-sewer,GR-11,Zed Park,11 Lake Dr,11 Lake Dr,53024,2026-01-01,residential,5/8,GP-1,Zed\n"
)


def call(method: str, path: str, claims: dict[str, str] = STAFF, **kw: Any) -> tuple[int, Any]:
    event = authorized_http_event(method, path, claims, **kw)
    response = api.lambda_handler(event, lambda_context())
    text = response["body"]
    return response["statusCode"], json.loads(text) if text.startswith(("{", "[")) else text


def search(q: str, **query: str) -> tuple[int, Any]:
    return call("GET", SEARCH, query={"q": q, **query})


@pytest.fixture
def accounts(flow: Stack) -> Stack:  # noqa: F811
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    upload(flow, "accounts/more.csv", MORE)
    return flow


def ids(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(h["account_id"], h["match"]) for h in body["hits"]]


def test_an_exact_id_ranks_first_then_ids_and_values_it_starts_then_words(accounts: Stack) -> None:
    status, body = search("GR-1")
    assert status == 200
    assert ids(body) == [("GR-1", "exact"), ("GR-10", "prefix"), ("GR-11", "prefix")]
    # the parcel id GP-1 is GR-1's and GR-11's: both exact, in account order
    assert ids(search("gp 1")[1])[:2] == [("GR-1", "exact"), ("GR-11", "exact")]
    first = search("GR-1")[1]["hits"][0]
    assert (first["name"], first["service_address"]) == ("Ann", "1 Main St")
    assert {"field": "account_id", "value": "GR-1"} in first["matched"]


def test_a_name_or_address_fragment_finds_by_prefix_then_by_every_word(accounts: Stack) -> None:
    # "ann" starts GR-1's name and GR-10's name and owner: prefix hits, by the value matched
    assert ids(search("Ann")[1]) == [("GR-1", "prefix"), ("GR-10", "prefix")]
    # "lake" starts no value, but is a word of GR-10's and GR-11's addresses and GR-10's name
    body = search("lake")[1]
    assert ids(body) == [("GR-10", "token"), ("GR-11", "token")]
    assert {"field": "service_address", "value": "11 Lake Dr"} in body["hits"][1]["matched"]
    # every word must match: "main 3" is GR-3's alone (3 Main St); the order of words is free
    assert ids(search("main 3")[1]) == [("GR-3", "token")]
    assert ids(search("dr lak")[1]) == [("GR-10", "token"), ("GR-11", "token")]
    # the mailing address is searched too
    assert ids(search("PO Box 9")[1]) == [("GR-10", "prefix")]


def test_results_page_with_limit_and_cursor_in_rank_order(accounts: Stack) -> None:
    _, whole = search("gr")
    # every account stored: GR-1..3, GR-5, GR-10, GR-11 (GR-4's line is rejected)
    assert len(whole["hits"]) == 6 and whole["next_cursor"] is None
    seen, cursor = [], None
    while True:
        _, page = search("gr", limit="3", **({"cursor": cursor} if cursor else {}))
        assert len(page["hits"]) <= 3
        seen += page["hits"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == whole["hits"]
    assert search("gr", cursor="999")[1]["hits"] == []


def test_only_staff_of_the_tenant_search(accounts: Stack) -> None:
    other = {"sub": "x", "role": "staff", "tenants": "[sullivan-sewer]"}
    customer = {"sub": "c", "role": "customer", "tenants": "[grafton-sewer]", "accounts": "[GR-1]"}
    assert call("GET", SEARCH, other, query={"q": "ann"})[0] == 403
    assert call("GET", SEARCH, customer, query={"q": "ann"})[0] == 403
    assert call("GET", "/staff/nowhere/search", query={"q": "ann"})[0] == 404


@pytest.mark.parametrize(
    ("q", "status", "found"),
    [
        ("", 400, None),  # nothing to find
        ("x" * 10_000, 400, None),  # over the 200 characters a query may be
        ("ann\x00", 200, ["GR-1", "GR-10"]),  # NUL folds away: "ann"
        ("%", 200, []),
        ("%25", 200, []),  # no letter of a name starts with "25"
        (".*", 200, []),
        # no regex: the words "a" and "b" must each start a word (GR-10: "Ann", "PO Box 9")
        ("(a|b)+$", 200, ["GR-10"]),
        ("[", 200, []),
        ("\\", 200, []),
        ("' OR 1=1 --", 200, []),
        ("#", 200, []),
        ("V#ann", 200, []),  # a key's own prefix is not a way into the index: "vann"
        ("\U0001f986", 200, []),
    ],
)
def test_a_hostile_query_is_refused_or_finds_only_what_its_letters_find(
    accounts: Stack, q: str, status: int, found: list[str] | None
) -> None:
    got, body = search(q)
    assert got == status, (got, body)
    if status == 400:
        assert body["error"]["message"].startswith("q")
    else:
        assert [h["account_id"] for h in body["hits"]] == found


def test_a_bad_limit_or_cursor_is_400(accounts: Stack) -> None:
    assert search("ann", limit="0")[0] == 400
    assert search("ann", limit="101")[0] == 400
    assert search("ann", cursor="-1")[0] == 400


def test_the_index_follows_an_account_change_and_drops_the_old_terms(accounts: Stack) -> None:
    change = (
        HEADER + "\n"
        "grafton-sewer,GR-2,Bea Quill,7 Oak Ct,7 Oak Ct,53024,2026-01-01,residential,5/8,GP-2,Bea\n"
    )
    upload(accounts, "accounts/change.csv", change)
    assert ids(search("quill")[1]) == [("GR-2", "token")]
    assert ids(search("oak")[1]) == [("GR-2", "token")]
    assert search("bob")[1]["hits"] == []
    assert "GR-2" not in [h["account_id"] for h in search("2 main")[1]["hits"]]
    # the same file again changes nothing (the index items are not rewritten either)
    before = [i for i in accounts.items("billing") if i["pk"] == "SEARCH#grafton-sewer"]
    upload(accounts, "accounts/change2.csv", change)
    assert [i for i in accounts.items("billing") if i["pk"] == "SEARCH#grafton-sewer"] == before


def test_a_meter_id_is_found_once_billing_keeps_a_consumption_naming_it(accounts: Stack) -> None:
    assert search("GRM-77")[1]["hits"] == []
    meters = [{"meter_id": "GRM-77", "kind": "water", "volume_gal": "23000", "quality": "actual"}]
    consume(accounts, "GR-3", 23000, meters=meters)
    assert ids(search("GRM-77")[1]) == [("GR-3", "exact")]
    assert ids(search("grm")[1]) == [("GR-3", "prefix")]
    # two meters across an exchange share words ("grm"): both kept, each found
    exchange = [
        {"meter_id": "GRM-80", "kind": "water", "volume_gal": "1000", "quality": "actual"},
        {"meter_id": "GRM-81", "kind": "water", "volume_gal": "2000", "quality": "actual"},
    ]
    consume(accounts, "GR-2", 3000, meters=exchange)
    assert ids(search("GRM-81")[1]) == [("GR-2", "exact")]
    assert ids(search("grm 80")[1]) == [("GR-2", "exact")]  # folded: "grm80"
    assert ids(search("80 grm")[1]) == [("GR-2", "token")]  # both words, in another order


def test_the_summary_gives_balance_due_aging_holds_and_use(accounts: Stack) -> None:
    meters = [{"meter_id": "GRM-1", "kind": "water", "volume_gal": "23000", "quality": "actual"}]
    consume(accounts, "GR-1", 23000, meters=meters)
    run_cycle(accounts)
    status, s = call("GET", "/staff/grafton-sewer/accounts/GR-1/summary")
    assert status == 200
    _, ledger = call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger")
    _, bills = call("GET", "/staff/grafton-sewer/accounts/GR-1/bills")
    # the utility by the name its tariff file gives it, not its slug
    assert s["utility"] == TARIFF_NAME.search(GRAFTON_TARIFF.read_text()).group(1)  # type: ignore[union-attr]
    assert s["balance"] == ledger["balance"]
    # the aging buckets add up to the balance (nothing is paid yet)
    assert sum(Decimal(v) for v in s["aging"].values()) == Decimal(ledger["balance"])
    [bill] = bills["bills"]
    assert s["due"]["bills"] == [
        {
            "bill_id": bill["bill_id"],
            "bill_number": bill["bill_number"],
            "due_date": bill["due_date"],
            "unpaid": bill["total"],
            "past_due": s["as_of"] > bill["due_date"],
        }
    ]
    assert [(u["period"]["start"], u["volume_gal"]) for u in s["usage"]] == [("2026-07-01", "23000")]
    assert s["meters"] == ["GRM-1"]
    # GR-1's earlier quarters were held for want of consumption: each with its reason
    assert [h["period_start"] for h in s["held"]] == ["2026-01-01", "2026-04-01"]
    assert all(h["reason"] and h["who_can_supply"] for h in s["held"])
    assert s["strength"] is None and s["stormwater"] is None
    assert call("GET", "/staff/grafton-sewer/accounts/GR-404/summary")[0] == 404
    other = {"sub": "x", "role": "staff", "tenants": "[sullivan-sewer]"}
    assert call("GET", "/staff/grafton-sewer/accounts/GR-1/summary", other)[0] == 403


def test_accounts_stored_before_the_index_are_found_once_reindexed(accounts: Stack) -> None:
    from handler_support import TABLES

    from billing.adapters.repository import BillingRepo

    for item in [i for i in accounts.items("billing") if i["pk"] == "SEARCH#grafton-sewer"]:
        accounts.ddb.delete_item(
            TableName=TABLES["billing"], Key={"pk": {"S": item["pk"]}, "sk": {"S": item["sk"]}}
        )
    assert search("ann")[1]["hits"] == []
    BillingRepo(accounts.ddb, TABLES["billing"]).reindex_accounts("grafton-sewer")
    assert ids(search("ann")[1]) == [("GR-1", "prefix"), ("GR-10", "prefix")]
