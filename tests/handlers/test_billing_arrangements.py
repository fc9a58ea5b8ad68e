"""Payment arrangements through billing's staff API, DisconnectionEligible from the daily
assessment, and back-dated lockbox payments that reverse a late charge (moto, in-process)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from handler_support import UPLOADS, Stack, authorized_http_event, lambda_context
from test_billing_flow import ACCOUNTS, assess, consume, flow, of, run_cycle, upload  # noqa: F401

from billing import composition
from billing.app import eligibility, payments
from billing.handlers import api
from common import clock

STAFF = {"sub": "clerk", "role": "staff", "tenants": "[grafton-sewer]"}
BASE = "/staff/grafton-sewer/accounts/GR-1/arrangements"


@pytest.fixture
def at() -> Iterator[clock.FixedClock]:
    fixed = clock.FixedClock(datetime(2026, 10, 1, 17, tzinfo=UTC))
    clock.install(fixed)
    yield fixed
    clock.install(None)


def set_day(at: clock.FixedClock, day: str) -> None:
    """Noon in Wisconsin (17:00 UTC in October, 18:00 after DST ends)."""
    at.set(datetime.fromisoformat(f"{day}T18:00:00+00:00"))


def call(method: str, path: str, body: Any = None, claims: dict[str, str] = STAFF) -> tuple[int, Any]:
    event = authorized_http_event(method, path, claims, body=None if body is None else json.dumps(body))
    response = api.lambda_handler(event, lambda_context())
    return response["statusCode"], json.loads(response["body"])


def lockbox(rows: str) -> str:
    return "tenant,account_id,reference,paid_on,amount\n" + rows


@pytest.fixture
def billed(flow: Stack, at: clock.FixedClock) -> Stack:  # noqa: F811
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    consume(flow, "GR-1", 23000)  # 45.00 + 23 x 6.50 = 194.50, billed Thu 2026-10-01
    run_cycle(flow)
    return flow


def eligible_events(stack: Stack) -> list[dict[str, Any]]:
    return [
        json.loads(o["detail"])
        for o in stack.outbox("billing")
        if o["detail_type"] == "DisconnectionEligible"
    ]


def arrangement_body(**over: Any) -> dict[str, Any]:
    return {
        "arrangement_id": "ARR-1",
        "instalments": [
            {"due_on": "2026-11-13", "amount": "100.00"},
            {"due_on": "2026-12-15", "amount": "100.34"},
        ],
        "end_on": "2026-12-31",
        "approver": "supervisor",
        "note": "two payments",
        **over,
    }


def test_staff_make_list_and_cancel_an_arrangement_kept_as_history(
    billed: Stack, at: clock.FixedClock
) -> None:
    set_day(at, "2026-10-28")
    status, made = call("POST", BASE, arrangement_body())
    assert status == 200 and made["made_on"] == "2026-10-28" and made["total"] == "200.34"
    assert made["replayed"] is False
    set_day(at, "2026-11-20")  # the same again, after its first instalment's day: replayed
    again = call("POST", BASE, arrangement_body())
    assert again[0] == 200 and (again[1]["replayed"], again[1]["made_on"]) == (True, "2026-10-28")
    status, err = call("POST", BASE, arrangement_body(end_on="2026-12-30"))
    assert status == 409 and err["error"]["message"].startswith("arrangement_id")
    set_day(at, "2026-11-20")
    status, cancelled = call("POST", f"{BASE}/ARR-1/cancel", {"by": "supervisor", "reason": "customer moved"})
    assert status == 200 and cancelled["cancelled_on"] == "2026-11-20"
    status, page = call("GET", BASE)
    assert status == 200
    [listed] = page["arrangements"]
    # Kept: the schedule as made, with who cancelled it, when and why.
    assert (listed["status"], listed["cancelled_by"], listed["cancel_reason"]) == (
        "cancelled",
        "supervisor",
        "customer moved",
    )
    assert [i["amount"] for i in listed["instalments"]] == ["100.00", "100.34"]
    assert call("POST", f"{BASE}/ARR-1/cancel", {"by": "other", "reason": "again"})[0] == 409
    assert len([i for i in of(billed, "ARRANGEMENTS#grafton-sewer")]) == 2  # made + cancelled


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"instalments": [{"due_on": "2026-10-01", "amount": "10.00"}]}, "instalments[0].due_on"),
        (
            {
                "instalments": [
                    {"due_on": "2026-11-13", "amount": "10.00"},
                    {"due_on": "2026-11-13", "amount": "10.00"},
                ]
            },
            "instalments[1].due_on",
        ),
        ({"end_on": "2026-12-01"}, "end_on"),
    ],
)
def test_an_arrangement_that_cannot_be_kept_is_a_400_naming_the_field(
    billed: Stack, at: clock.FixedClock, change: dict[str, Any], field: str
) -> None:
    set_day(at, "2026-10-28")
    status, err = call("POST", BASE, arrangement_body(**change))
    assert status == 400 and err["error"]["message"].startswith(f"{field}:")


def test_arrangement_routes_need_a_staff_token_and_a_known_account(
    billed: Stack, at: clock.FixedClock
) -> None:
    customer = {"sub": "c", "role": "customer", "tenants": "[grafton-sewer]", "accounts": "[GR-1]"}
    assert call("POST", BASE, arrangement_body(), customer)[0] == 403
    assert call("GET", BASE, claims={"sub": "x", "role": "staff", "tenants": "[sullivan-sewer]"})[0] == 403
    status, err = call("POST", "/staff/grafton-sewer/accounts/NOPE/arrangements", arrangement_body())
    assert status == 404 and err["error"]["message"].startswith("account_id")
    assert call("POST", f"{BASE}/NOPE/cancel", {"by": "s", "reason": "why not"})[0] == 404
    assert call("POST", BASE, {**arrangement_body(), "instalments": []})[0] == 400  # schema


@pytest.fixture
def billed_q4(flow: Stack, at: clock.FixedClock) -> Stack:  # noqa: F811
    # Q4 2026 billed Fri 2027-01-01: clear of the 2026 tax roll (service before October 1).
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    consume(flow, "GR-1", 23000, start=date(2026, 10, 1), end=date(2027, 1, 1))
    run_cycle(flow, at="2027-01-01T11:00:00Z")
    return flow


def test_a_broken_arrangement_makes_the_account_disconnection_eligible_the_day_after_the_missed_instalment(
    billed_q4: Stack, at: clock.FixedClock
) -> None:
    # 194.50 billed Fri 2027-01-01: GR-LATE and the overdue notice on day 21 (Fri 01-22),
    # eligible from Mon 02-01 unless paid or arranged. Arranged on Thu 01-28: 100.00 by Fri
    # 02-12 (paid), 100.34 by Mon 03-15 (missed): eligible from Tue 03-16.
    set_day(at, "2027-01-28")
    body = arrangement_body(
        instalments=[
            {"due_on": "2027-02-12", "amount": "100.00"},
            {"due_on": "2027-03-15", "amount": "100.34"},
        ],
        end_on="2027-03-31",
    )
    assert call("POST", BASE, body)[0] == 200
    set_day(at, "2027-02-12")
    upload(billed_q4, "payments/feb.csv", lockbox("grafton-sewer,GR-1,CHK-9,2027-02-12,100.00\n"))
    for day in ("2027-01-22", "2027-02-01", "2027-02-28", "2027-03-15"):
        assess(f"{day}T18:00:00Z")
    assert eligible_events(billed_q4) == []
    assess("2027-03-16T18:00:00Z")
    assess("2027-03-16T18:00:00Z")  # twice on one day: once
    [event] = eligible_events(billed_q4)
    # The 100.00 pays the bill's 5.84 late charge of 01-22 first (X-ALLOCATION), 94.16 of
    # its charges: 194.50 - 94.16 = 100.34 of the bill unpaid on 03-15.
    assert (event["eligible_on"], event["amount_unpaid"], event["reason"], event["arrangement_id"]) == (
        "2027-03-16",
        "100.34",
        "arrangement_broken",
        "ARR-1",
    )
    set_day(at, "2027-03-16")
    assert call("GET", BASE)[1]["arrangements"][0]["status"] == "broken"


def test_without_an_arrangement_the_account_is_eligible_on_the_tenth_day_after_the_notice(
    billed: Stack,
) -> None:
    assess("2026-10-22T12:00:00Z")
    assess("2026-11-05T12:00:00Z")  # 11-01 to 11-04 skipped: caught up with the day it began
    [event] = eligible_events(billed)
    assert (event["eligible_on"], event["amount_unpaid"], event["reason"]) == (
        "2026-11-01",
        "194.50",
        "notice_period_ended",
    )


@pytest.mark.parametrize("few", [5, 0], ids=["account-by-account", "by-partition"])
def test_a_backdated_lockbox_payment_reverses_the_late_charge_once_by_an_adjustment_naming_it(
    billed: Stack, at: clock.FixedClock, few: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A big file reads the tenant's ledger and bills by partition, a small one by account.
    monkeypatch.setattr(payments, "FEW_ACCOUNTS", few)
    monkeypatch.setattr(eligibility, "FEW_ACCOUNTS", few)
    assess("2026-10-22T12:00:00Z")  # GR-LATE 3% of 194.50 = 5.835 -> 5.84 on day 21
    [charge] = [e for e in of(billed, "LEDGER#") if e["kind"] == "late_charge"]
    assert charge["amount"] == "5.84"
    # The lockbox file arrives Mon 10-26 with 194.50 paid on day 19 (Tue 10-20).
    set_day(at, "2026-10-26")
    rows = lockbox("grafton-sewer,GR-1,LB-77,2026-10-20,194.50\n")
    upload(billed, "payments/2026-10-26.csv", rows)
    upload(billed, "payments/2026-10-26-again.csv", rows)
    reversals = [e for e in of(billed, "LEDGER#") if e["kind"] == "adjustment"]
    assert [(e["amount"], e["posted_on"], e["reference"], e["bill_id"]) for e in reversals] == [
        ("-5.84", "2026-10-26", charge["entry_id"], charge["bill_id"])
    ]
    assert "LB-77 dated 2026-10-20" in reversals[0]["description"]
    # The charge itself is untouched (X-IMMUTABLE); the balance is 0.
    assert [e["amount"] for e in of(billed, "LEDGER#") if e["kind"] == "late_charge"] == ["5.84"]
    status, ledger = call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger")
    assert status == 200 and ledger["balance"] == "0.00"
    # The reversal is published as the same BillAdjusted as every adjustment (the notices
    # memo and the portal), once for the file posted twice: a credit memo of 5.84 on the
    # bill the late charge was assessed on, naming the charge, the payment and the rules.
    [memo] = adjusted(billed)
    assert (memo["kind"], memo["memo"], memo["amount"], memo["bill_id"]) == (
        "reversal",
        "credit",
        "-5.84",
        charge["bill_id"],
    )
    assert (memo["reference"], memo["reverses_entry_id"]) == (reversals[0]["entry_id"], charge["entry_id"])
    assert memo["lines"] == [{"fund": charge["fund"], "amount": "-5.84"}]
    assert memo["rule_ids"] == ["GR-LATE", "X-DUE", "X-IMMUTABLE"]
    assert "LB-77 dated 2026-10-20" in memo["reason"] and "reduced to 0.00" in memo["derivation"]


def test_a_backdated_partial_api_payment_leaves_the_late_charge_of_the_unpaid_rest(
    billed: Stack, at: clock.FixedClock
) -> None:
    assess("2026-10-22T12:00:00Z")
    set_day(at, "2026-11-02")  # after the month end
    body = {"tenant": "grafton-sewer", "account_id": "GR-1", "amount": "150.00", "paid_on": "2026-10-19"}
    event = authorized_http_event(
        "POST", "/payments", STAFF, body=json.dumps(body), headers={"idempotency-key": "counter-0001"}
    )
    assert api.lambda_handler(event, lambda_context())["statusCode"] == 200
    api.lambda_handler(event, lambda_context())  # replayed: nothing more
    # 194.50 - 150.00 = 44.50 unpaid by day 20; 3% = 1.335 -> 1.34; 5.84 - 1.34 = 4.50 reversed.
    reversals = [e for e in of(billed, "LEDGER#") if e["kind"] == "adjustment"]
    assert [(e["amount"], e["posted_on"]) for e in reversals] == [("-4.50", "2026-11-02")]
    _, ledger = call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger")
    # 194.50 + 5.84 - 150.00 - 4.50 = 45.84
    assert Decimal(ledger["balance"]) == Decimal("45.84")
    [memo] = adjusted(billed)  # the replayed payment publishes nothing more
    assert (memo["kind"], memo["amount"], memo["posted_on"]) == ("reversal", "-4.50", "2026-11-02")
    assert "reduced to 1.34" in memo["derivation"]


CUSTOMER = {"sub": "ann", "role": "customer", "tenants": "[grafton-sewer]", "accounts": "[GR-1]"}


def pay(body: dict[str, Any], key: str, claims: dict[str, str] = STAFF) -> tuple[int, Any]:
    event = authorized_http_event(
        "POST", "/payments", claims, body=json.dumps(body), headers={"idempotency-key": key}
    )
    response = api.lambda_handler(event, lambda_context())
    return response["statusCode"], json.loads(response["body"])


def test_a_customer_cannot_date_a_payment_before_its_late_charge_to_reverse_it(
    billed: Stack, at: clock.FixedClock
) -> None:
    """X-DUE counts a payment on its paid_on date, and one dated before a late charge reverses
    it: only staff may date a payment earlier (a check received by mail)."""
    assess("2026-10-22T12:00:00Z")  # GR-1's 194.50 unpaid on day 21: 5.84 late charge
    set_day(at, "2026-11-02")
    body = {"tenant": "grafton-sewer", "account_id": "GR-1", "amount": "194.50", "paid_on": "2026-10-19"}

    status, error = pay(body, "portal-0001", CUSTOMER)

    assert status == 400
    assert error["error"]["message"] == (
        "paid_on: a customer's payment is dated the day it is made (2026-11-02); only staff date one earlier"
    )
    assert [e for e in of(billed, "LEDGER#") if e["kind"] in ("payment", "adjustment")] == []
    # dated today (given or not), the customer's payment posts, and the late charge stands
    assert pay({**body, "paid_on": "2026-11-02"}, "portal-0002", CUSTOMER)[0] == 200
    del body["paid_on"]
    status, paid = pay({**body, "amount": "5.84"}, "portal-0003", CUSTOMER)
    assert (status, paid["paid_on"]) == (200, "2026-11-02")
    assert [e for e in of(billed, "LEDGER#") if e["kind"] == "adjustment"] == []
    _, ledger = call("GET", "/staff/grafton-sewer/accounts/GR-1/ledger")
    assert Decimal(ledger["balance"]) == Decimal("0.00")  # 194.50 + 5.84 - 194.50 - 5.84


def test_no_payment_is_dated_after_today(billed: Stack, at: clock.FixedClock) -> None:
    set_day(at, "2026-11-02")
    body = {"tenant": "grafton-sewer", "account_id": "GR-1", "amount": "10.00", "paid_on": "2026-11-03"}
    for claims in (STAFF, CUSTOMER):
        status, error = pay(body, f"ahead-{claims['sub']}", claims)
        assert (
            status == 400 and error["error"]["message"] == "paid_on: 2026-11-03 is after today (2026-11-02)"
        )
    assert [e for e in of(billed, "LEDGER#") if e["kind"] == "payment"] == []


def test_a_payment_retried_after_midnight_without_a_date_replays_as_first_dated(
    billed: Stack, at: clock.FixedClock
) -> None:
    set_day(at, "2026-11-02")
    body = {"tenant": "grafton-sewer", "account_id": "GR-1", "amount": "20.00"}
    status, first = pay(body, "portal-0100", CUSTOMER)
    assert (status, first["replayed"], first["paid_on"]) == (200, False, "2026-11-02")
    set_day(at, "2026-11-03")  # the client's retry after midnight: the same body, the same key

    status, replay = pay(body, "portal-0100", CUSTOMER)

    assert (status, replay["replayed"], replay["paid_on"]) == (200, True, "2026-11-02")
    assert [(e["amount"], e["posted_on"]) for e in of(billed, "LEDGER#") if e["kind"] == "payment"] == [
        ("-20.00", "2026-11-02")
    ]


def test_a_lockbox_line_dated_after_the_day_its_file_comes_in_is_refused(
    billed: Stack, at: clock.FixedClock
) -> None:
    """A bank's file lists payments already received: a later date is a typo that would delay
    the payment's effect until then (X-DUE). The line is refused by name; the rest posts."""
    set_day(at, "2026-11-02")
    rows = lockbox("grafton-sewer,GR-1,LB-90,2026-11-02,10.00\ngrafton-sewer,GR-1,LB-91,2062-11-02,20.00\n")

    upload(billed, "payments/2026-11-02.csv", rows)

    assert [(e["reference"], e["amount"]) for e in of(billed, "LEDGER#") if e["kind"] == "payment"] == [
        ("LB-90", "-10.00")
    ]
    # the clerk's report beside the file: the line, its column and why
    listed = billed.s3.list_objects_v2(Bucket=UPLOADS, Prefix="reports/billing/payments/2026-11-02.csv/")
    [key] = [o["Key"] for o in listed.get("Contents", [])]
    assert key.endswith("-rejections.jsonl")
    rows = billed.s3.get_object(Bucket=UPLOADS, Key=key)["Body"].read().decode().splitlines()
    assert [json.loads(r) for r in rows] == [
        {
            "line": 3,
            "column": "paid_on",
            "reason": "2062-11-02 is after the day the file is taken in (2026-11-02)",
            "outcome": "rejected",
        }
    ]


def adjusted(stack: Stack) -> list[dict[str, Any]]:
    return [json.loads(o["detail"]) for o in stack.outbox("billing") if o["detail_type"] == "BillAdjusted"]


def withdrawn_events(stack: Stack) -> list[dict[str, Any]]:
    return [
        json.loads(o["detail"])
        for o in stack.outbox("billing")
        if o["detail_type"] == "DisconnectionEligibilityWithdrawn"
    ]


def test_a_backdated_lockbox_payment_withdraws_the_eligibility_at_once_and_once(
    billed: Stack, at: clock.FixedClock
) -> None:
    # 194.50 billed Thu 10-01; GR-LATE 5.84 and the overdue notice on Thu 10-22; eligible
    # Sun 11-01 (nothing paid by Sat 10-31).
    assess("2026-10-22T12:00:00Z")
    assess("2026-11-01T12:00:00Z")
    [event] = eligible_events(billed)
    assert event["eligible_on"] == "2026-11-01"
    # Thu 11-05: the lockbox brings 200.34 (194.50 + 5.84) paid Fri 10-30, within the 10
    # days. Posted twice. Withdrawn at once, as never held (published in error).
    set_day(at, "2026-11-05")
    rows = lockbox("grafton-sewer,GR-1,LB-88,2026-10-30,200.34\n")
    upload(billed, "payments/2026-11-05.csv", rows)
    upload(billed, "payments/2026-11-05-again.csv", rows)
    [withdrawal] = withdrawn_events(billed)
    assert (
        withdrawal["bill_id"],
        withdrawal["eligible_on"],
        withdrawal["ended_on"],
        withdrawal["never_held"],
        withdrawal["reason"],
        withdrawal["amount_unpaid"],
        withdrawal["withdrawn_on"],
    ) == (event["bill_id"], "2026-11-01", "2026-11-01", True, "paid", "0.00", "2026-11-05")
    # The daily assessment later finds it withdrawn already: nothing more.
    assess("2026-11-06T18:00:00Z")
    assert len(withdrawn_events(billed)) == 1 and len(eligible_events(billed)) == 1


def test_an_arrangement_made_after_eligibility_withdraws_it_when_it_is_made(
    billed: Stack, at: clock.FixedClock
) -> None:
    assess("2026-10-22T12:00:00Z")
    assess("2026-11-02T12:00:00Z")
    [event] = eligible_events(billed)
    set_day(at, "2026-11-03")  # Tue: arranged, nothing paid yet
    assert (
        call(
            "POST",
            BASE,
            arrangement_body(instalments=[{"due_on": "2026-11-30", "amount": "200.34"}], end_on="2026-11-30"),
        )[0]
        == 200
    )
    [withdrawal] = withdrawn_events(billed)
    # Eligible from 11-01, arranged on 11-03: ended that day; the bill's 194.50 still unpaid.
    assert (withdrawal["eligible_on"], withdrawal["ended_on"], withdrawal["never_held"]) == (
        event["eligible_on"],
        "2026-11-03",
        False,
    )
    assert (withdrawal["reason"], withdrawal["arrangement_id"], withdrawal["amount_unpaid"]) == (
        "arranged",
        "ARR-1",
        "194.50",
    )


BOB = {"sub": "bob", "role": "customer", "tenants": "[grafton-sewer]", "accounts": "[GR-2]"}


def test_two_customers_of_a_tenant_using_one_idempotency_key_each_get_their_payment(
    billed: Stack, at: clock.FixedClock
) -> None:
    """Issue 27: a key is unique per caller (the token's subject) and route. Ann and Bob,
    customers of Grafton, happen to send the same key: each payment posts, and a reuse
    with another body is a 409 naming only the caller's own earlier request."""
    set_day(at, "2026-11-02")
    ann = {"tenant": "grafton-sewer", "account_id": "GR-1", "amount": "20.00"}
    bob = {"tenant": "grafton-sewer", "account_id": "GR-2", "amount": "33.00"}

    ann_status, ann_paid = pay(ann, "portal-shared-1", CUSTOMER)
    bob_status, bob_paid = pay(bob, "portal-shared-1", BOB)

    assert (ann_status, ann_paid["replayed"], ann_paid["account_id"]) == (200, False, "GR-1")
    assert (bob_status, bob_paid["replayed"], bob_paid["account_id"]) == (200, False, "GR-2")
    assert ann_paid["reference"] != bob_paid["reference"]
    payments = sorted((e["account_id"], e["amount"]) for e in of(billed, "LEDGER#") if e["kind"] == "payment")
    assert payments == [("GR-1", "-20.00"), ("GR-2", "-33.00")]
    # each caller's retry replays its own payment
    assert pay(bob, "portal-shared-1", BOB)[1]["replayed"] is True
    # Bob reusing the key with another body: a 409 about Bob's request, nothing of Ann's
    status, error = pay({**bob, "amount": "34.00"}, "portal-shared-1", BOB)
    assert (status, error["error"]["code"]) == (409, "idempotency_key_reused")
    message = error["error"]["message"]
    assert "GR-2" in message and "33.00" in message
    assert "GR-1" not in message and "20.00" not in message
    assert len([e for e in of(billed, "LEDGER#") if e["kind"] == "payment"]) == 2


def test_a_key_stored_before_keys_were_scoped_still_replays_its_retry(
    billed: Stack, at: clock.FixedClock
) -> None:
    """A payment recorded under the old tenant-wide reference (``API-<key>``): its retry
    with the same body replays it (no second payment); another caller's other body under
    that key is that caller's own payment, not a 409 about the first."""
    set_day(at, "2026-11-02")
    body = {"tenant": "grafton-sewer", "account_id": "GR-1", "amount": "20.00"}
    request = json.dumps({**body, "paid_on": None}, sort_keys=True)
    old = {"pk": "PAYMENT#grafton-sewer", "sk": "API-old-key-0001", "account_id": "GR-1"}
    old |= {"paid_on": "2026-11-02", "amount": "20.00", "channel": "api", "suspense": False}
    composition.repo().write([{**old, "request": request, "recorded_at": "2026-11-02T18:00:00+00:00"}])

    status, replay = pay(body, "old-key-0001", CUSTOMER)
    assert (status, replay["replayed"], replay["reference"]) == (200, True, "API-old-key-0001")
    assert [e for e in of(billed, "LEDGER#") if e["kind"] == "payment"] == []
    status, other = pay({**body, "account_id": "GR-2"}, "old-key-0001", BOB)
    assert (status, other["replayed"]) == (200, False)
    assert [e["account_id"] for e in of(billed, "LEDGER#") if e["kind"] == "payment"] == ["GR-2"]
