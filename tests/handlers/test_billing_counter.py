"""The clerk's counter and import review (issue 33) through billing's API handler on moto:
a receipt posts once however often it is sent, bad input is a 400 naming its field, the
drawer's totals are the sum of its receipts (and its CSV is spreadsheet-safe), and every
file taken in is logged with its counts, batch totals, rejection report and deposit."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal
from typing import Any

import pytest
from handler_support import Stack, authorized_http_event, lambda_context, sqs_event

from billing.handlers import api, on_file_uploaded

TENANT = "grafton-sewer"
ACCOUNTS = (
    "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,email\n"
    "grafton-sewer,GR-1,Ann Lee,1 Main St,1 Main St,53024,2025-01-01,residential,5/8,ann@example.com\n"
    "grafton-sewer,GR-2,Bo Park,2 Main St,2 Main St,53024,2025-01-01,residential,5/8,\n"
)
LOCKBOX = "tenant,account_id,reference,paid_on,amount\n"


def staff(sub: str = "clerk-a") -> dict[str, str]:
    return {"sub": sub, "role": "staff", "tenants": f"[{TENANT}]"}


def call(
    method: str, path: str, body: Any = None, query: dict[str, str] | None = None, sub: str = "clerk-a"
) -> tuple[int, Any]:
    event = authorized_http_event(
        method, path, staff(sub), query, body=None if body is None else json.dumps(body)
    )
    response = api.lambda_handler(event, lambda_context())
    text = response["body"]
    try:
        return response["statusCode"], json.loads(text)
    except json.JSONDecodeError:
        return response["statusCode"], text


def upload(stack: Stack, key: str, text: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    event = body or stack.put_upload(key, text.encode())
    on_file_uploaded.lambda_handler(sqs_event(json.dumps(event)), lambda_context())
    return event


@pytest.fixture
def accounts(billing: Stack) -> Stack:
    upload(billing, "accounts/counter.csv", ACCOUNTS)
    return billing


def payments(stack: Stack) -> list[dict[str, Any]]:
    return [i for i in stack.items("billing") if i["pk"].startswith("LEDGER#") and i.get("kind") == "payment"]


def receipt(
    amount: str = "40.00", tender: str = "check", key: str = "counter-0001", **more: str
) -> dict[str, str]:
    body = {"amount": amount, "tender": tender, "receipt_key": key, **more}
    if tender == "check":
        body.setdefault("check_number", "1042")
    if tender == "card":
        body.setdefault("card_reference", "AUTH-77")
    return body


RECEIPTS = f"/staff/{TENANT}/accounts/GR-1/receipts"


def test_a_receipt_sent_twice_posts_once_and_reads_back_by_its_reference(accounts: Stack) -> None:
    status, first = call("POST", RECEIPTS, receipt())
    assert status == 200, first
    assert first["replayed"] is False and first["tender"] == "check" and first["check_number"] == "1042"
    assert first["email"] == "ann@example.com" and first["receipt"].startswith("R-")
    status, again = call("POST", RECEIPTS, receipt())
    assert status == 200 and again["replayed"] is True and again["receipt"] == first["receipt"]
    [entry] = payments(accounts)
    assert Decimal(entry["amount"]) == Decimal("-40.00") and entry["account_id"] == "GR-1"
    status, read = call("GET", f"/staff/{TENANT}/receipts/{first['receipt']}")
    assert (
        status == 200
        and read["amount"] == "40.00"
        and read["payment_reference"] == first["payment_reference"]
    )
    # another clerk's same key is another receipt (keys are the clerk's own)
    status, other = call("POST", RECEIPTS, receipt(), sub="clerk-b")
    assert status == 200 and other["receipt"] != first["receipt"]
    assert len(payments(accounts)) == 2


def test_the_same_key_with_another_tender_or_amount_is_a_409_naming_the_key(accounts: Stack) -> None:
    assert call("POST", RECEIPTS, receipt())[0] == 200
    for body in (receipt(tender="cash", check_number=None), receipt(amount="41.00")):
        body = {k: v for k, v in body.items() if v is not None}
        status, answer = call("POST", RECEIPTS, body)
        assert status == 409 and answer["error"]["message"].startswith("receipt_key:"), answer
    assert len(payments(accounts)) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"amount": "0"}, "amount"),
        ({"amount": "-5.00"}, "amount"),
        ({"amount": "1.234"}, "amount"),
        ({"amount": 40.0}, "amount"),
        ({"tender": "bitcoin"}, "tender"),
        ({"check_number": None}, "check_number"),
        ({"tender": "cash"}, "check_number"),
        ({"tender": "card", "check_number": None, "card_reference": None}, "card_reference"),
        ({"receipt_key": "short"}, "receipt_key"),
        ({"receipt_key": None}, "receipt_key"),
        ({"note": "x"}, "note"),
    ],
)
def test_bad_receipt_input_is_a_400_naming_the_field(
    accounts: Stack, body: dict[str, Any], field: str
) -> None:
    sent = {**receipt(), **body}
    sent = {k: v for k, v in sent.items() if v is not None}
    status, answer = call("POST", RECEIPTS, sent)
    assert status == 400 and answer["error"]["code"] == "invalid_request", answer
    assert field in answer["error"]["message"], answer
    assert payments(accounts) == []


def test_a_receipt_for_an_unknown_account_or_reference_is_a_404(accounts: Stack) -> None:
    status, answer = call("POST", f"/staff/{TENANT}/accounts/GR-404/receipts", receipt())
    assert status == 404 and "account_id" in answer["error"]["message"]
    assert call("GET", f"/staff/{TENANT}/receipts/R-20250101-ABCDEF12")[0] == 404
    assert call("GET", f"/staff/{TENANT}/receipts/not-a-ref")[0] == 400
    assert call("GET", f"/staff/{TENANT}/drawer/2025-02-30")[0] == 400


def test_the_drawer_totals_by_clerk_and_tender_are_the_sums_of_its_receipts(accounts: Stack) -> None:
    taken = [
        ("clerk-a", receipt("40.00", "check", "k-000001")),
        ("clerk-a", receipt("12.50", "cash", "k-000002")),
        ("clerk-b", receipt("7.25", "card", "k-000003", card_reference="=HYPERLINK(1)")),
        ("clerk-b", receipt("0.75", "cash", "k-000004")),
    ]
    # a card reference that looks like a formula is refused by the field's pattern
    status, answer = call("POST", RECEIPTS, taken[2][1], sub="clerk-b")
    assert status == 400 and "card_reference" in answer["error"]["message"]
    taken[2] = ("clerk-b", receipt("7.25", "card", "k-000003", card_reference="-AUTH-9"))
    days = set()
    for sub, body in taken:
        status, r = call("POST", RECEIPTS, body, sub=sub)
        assert status == 200, r
        days.add(r["day"])
    [day] = days
    status, close = call("GET", f"/staff/{TENANT}/drawer/{day}")
    assert status == 200 and close["count"] == 4
    assert Decimal(close["total"]) == sum(Decimal(b["amount"]) for _, b in taken) == Decimal("60.50")
    assert {t["tender"]: t["total"] for t in close["by_tender"]} == {
        "card": "7.25",
        "cash": "13.25",
        "check": "40.00",
    }
    assert {t["clerk"]: t["total"] for t in close["by_clerk"]} == {"clerk-a": "52.50", "clerk-b": "8.00"}
    status, mine = call("GET", f"/staff/{TENANT}/drawer/{day}", query={"clerk": "clerk-b"})
    assert mine["total"] == "8.00" and {r["clerk"] for r in mine["receipts"]} == {"clerk-b"}
    status, text = call("GET", f"/staff/{TENANT}/drawer/{day}", query={"format": "csv"})
    assert status == 200
    rows = list(csv.DictReader(io.StringIO(text)))
    receipts = [r for r in rows if r["row"] == "receipt"]
    assert sum(Decimal(r["amount"]) for r in receipts) == Decimal("60.50")
    [grand] = [r for r in rows if r["row"] == "total" and r["clerk"] == "all" and r["tender"] == "all"]
    assert grand["amount"] == "60.50" and grand["count"] == "4"
    # a cell starting with "-" that is not a plain number is quoted for the spreadsheet
    assert [r["card_reference"] for r in receipts if r["tender"] == "card"] == ["'-AUTH-9"]


# ------------------------------------------------------------------ import review


def test_a_lockbox_file_is_logged_with_counts_totals_report_and_deposit(accounts: Stack) -> None:
    text = (
        LOCKBOX
        + "grafton-sewer,GR-1,CHK-1,2025-06-02,100.00\n"
        + "grafton-sewer,GR-2,CHK-2,2025-06-02,25.50\n"
        + "grafton-sewer,GR-2,CHK-3,2100-01-01,10.00\n"  # rejected: dated after today
        + "grafton-sewer,GR-2,CHK-4,2025-06-02,abc\n"  # rejected: no amount to count
    )
    event = upload(accounts, "payments/lockbox-1.csv", text)
    status, listed = call("GET", f"/staff/{TENANT}/imports")
    assert status == 200
    kinds = [f["kind"] for f in listed["files"]]
    assert sorted(kinds) == ["accounts", "payments"]
    [lockbox] = [f for f in listed["files"] if f["kind"] == "payments"]
    assert lockbox["counts"]["accepted"] == 2 and lockbox["counts"]["rejected"] == 2
    assert lockbox["totals"]["accepted"] == "125.50" and lockbox["totals"]["rejected"] == "10.00"
    assert lockbox["totals"]["file"] == "135.50" and lockbox["totals"]["unread_amounts"] == 1
    status, one = call("GET", f"/staff/{TENANT}/imports/{lockbox['file_id']}")
    assert status == 200
    assert [(r["line"], r["column"], r["outcome"]) for r in one["lines"]] == [
        (4, "paid_on", "rejected"),
        (5, "amount", "rejected"),
    ]
    # the deposit figure: short of the file's total, then equal (a line without an amount
    # keeps it from being reconciled until the clerk has seen it)
    status, short = call("PUT", f"/staff/{TENANT}/imports/{lockbox['file_id']}/deposit", {"amount": "125.50"})
    assert status == 200 and short["deposit"]["difference"] == "-10.00" and not short["deposit"]["reconciled"]
    assert short["deposit"]["entered_by"] == "clerk-a"
    # a redelivery of the same upload: the same log item, the deposit kept
    upload(accounts, "payments/lockbox-1.csv", text, body=event)
    status, listed = call("GET", f"/staff/{TENANT}/imports")
    assert len(listed["files"]) == 2
    # the same file sent again: a new entry, its lines repeated
    upload(accounts, "payments/lockbox-1-again.csv", text)
    status, listed = call("GET", f"/staff/{TENANT}/imports")
    again = [f for f in listed["files"] if f["key"] == "payments/lockbox-1-again.csv"]
    assert again and again[0]["counts"]["repeated"] == 2 and again[0]["counts"]["accepted"] == 0
    assert len(payments(accounts)) == 2
    # paged, newest first, by limit and cursor
    status, page = call("GET", f"/staff/{TENANT}/imports", query={"limit": "2"})
    assert len(page["files"]) == 2 and page["next_cursor"] == "2"
    status, rest = call("GET", f"/staff/{TENANT}/imports", query={"limit": "2", "cursor": "2"})
    assert len(rest["files"]) == 1 and rest["next_cursor"] is None
    assert [f["file_id"] for f in page["files"] + rest["files"]] == [f["file_id"] for f in listed["files"]]


def test_a_deposit_figure_for_a_clean_file_reconciles_and_bad_figures_name_the_field(accounts: Stack) -> None:
    upload(accounts, "payments/lockbox-2.csv", LOCKBOX + "grafton-sewer,GR-1,CHK-9,2025-06-02,60.00\n")
    status, listed = call("GET", f"/staff/{TENANT}/imports")
    by_kind = {f["kind"]: f["file_id"] for f in listed["files"]}
    path = f"/staff/{TENANT}/imports/{by_kind['payments']}/deposit"
    status, ok = call("PUT", path, {"amount": "60.00"})
    assert status == 200 and ok["deposit"]["reconciled"] is True and ok["deposit"]["difference"] == "0.00"
    for bad in ({"amount": "60.001"}, {"amount": "-1"}, {"amount": 60}, {}, {"amount": "1", "x": 1}):
        status, answer = call("PUT", path, bad)
        assert status == 400, answer
        assert ("amount" in answer["error"]["message"]) or ("x" in answer["error"]["message"]), answer
    status, answer = call("PUT", f"/staff/{TENANT}/imports/{by_kind['accounts']}/deposit", {"amount": "1.00"})
    assert status == 400 and "file_id" in answer["error"]["message"]
    assert call("GET", f"/staff/{TENANT}/imports/F{'0' * 20}")[0] == 404
    assert call("GET", f"/staff/{TENANT}/imports/nope")[0] == 400


def test_a_crash_between_the_payment_and_its_receipt_is_finished_by_the_retry(
    accounts: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from billing.adapters.repository import BillingRepo

    real = BillingRepo.write
    crashed = []

    def crash_once(self: BillingRepo, items: Any, *args: Any, **kwargs: Any) -> int:
        listed = list(items)
        if not crashed and any(str(i["pk"]).startswith("RECEIPTS#") for i in listed):
            crashed.append(True)
            raise ConnectionError("the function stopped before the receipt was written")
        return real(self, listed, *args, **kwargs)

    monkeypatch.setattr(BillingRepo, "write", crash_once)
    try:
        status, _ = call("POST", RECEIPTS, receipt(key="crash-0001"))
    except ConnectionError:
        status = 500
    assert status >= 500 and crashed
    assert len(payments(accounts)) == 1  # the payment was posted, its receipt not yet
    status, retried = call("POST", RECEIPTS, receipt(key="crash-0001"))
    assert status == 200, retried
    assert len(payments(accounts)) == 1
    status, close = call("GET", f"/staff/{TENANT}/drawer/{retried['day']}")
    assert [r["receipt"] for r in close["receipts"]] == [retried["receipt"]] and close["total"] == "40.00"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", RECEIPTS, receipt()),
        ("GET", f"/staff/{TENANT}/receipts/R-20250101-ABCDEF12", None),
        ("GET", f"/staff/{TENANT}/drawer/2025-01-01", None),
        ("GET", f"/staff/{TENANT}/imports", None),
        ("GET", f"/staff/{TENANT}/imports/F{'0' * 20}", None),
        ("PUT", f"/staff/{TENANT}/imports/F{'0' * 20}/deposit", {"amount": "1.00"}),
    ],
)
def test_the_counter_and_the_import_log_are_for_the_tenants_staff_only(
    accounts: Stack, method: str, path: str, body: Any
) -> None:
    for claims in (
        {"sub": "ann", "role": "customer", "tenants": f"[{TENANT}]", "accounts": "[GR-1]"},
        {"sub": "sam", "role": "staff", "tenants": "[sullivan-sewer]"},
    ):
        event = authorized_http_event(method, path, claims, body=None if body is None else json.dumps(body))
        response = api.lambda_handler(event, lambda_context())
        assert response["statusCode"] == 403, (claims, response["body"])
    assert payments(accounts) == []
