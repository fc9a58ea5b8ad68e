"""Billing's daily assessment reads one mark on a day with nothing due (issue 7), and a bill
issued, an adjustment, an arrangement or a payment written between two runs is acted on
its day (moto, in-process; the rules of the mark: ``billing.domain.assessment_due``)."""

# ruff: noqa: F811 - the fixtures ``flow`` and ``at`` come from the sibling test modules

from __future__ import annotations

import json
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import pytest
from handler_support import TABLES, Stack, dynamodb_calls
from test_billing_arrangements import at, set_day  # noqa: F401
from test_billing_flow import ACCOUNTS, assess, consume, flow, run_cycle, upload  # noqa: F401

from billing.adapters.repository import BillingRepo
from billing.app import adjustments, arrangements, cycles, payments
from common import clock
from common.tariff_files import default_tariffs_dir, load_tariff_book

GR = "grafton-sewer"
ASSESSED = ("BillOverdue", "DisconnectionEligible", "DisconnectionEligibilityWithdrawn")


def days(first: str, last: str) -> list[str]:
    d, end, out = date.fromisoformat(first), date.fromisoformat(last), []
    while d <= end:
        out.append(d.isoformat())
        d += timedelta(days=1)
    return out


def assessed(stack: Stack) -> list[tuple[str, str]]:
    """The assessment's events in the outbox: (type, the day it speaks of)."""
    out = []
    for o in stack.outbox("billing"):
        if o["detail_type"] in ASSESSED:
            d = json.loads(o["detail"])
            field = {"BillOverdue": "overdue_on", "DisconnectionEligible": "eligible_on"}.get(
                o["detail_type"], "ended_on"
            )
            out.append((o["detail_type"], d[field]))
    return sorted(out, key=lambda t: (t[1], t[0]))


def late_charges(stack: Stack) -> list[tuple[str, str]]:
    items = [i for i in stack.items("billing") if i["pk"] == f"LEDGER#{GR}" and i["kind"] == "late_charge"]
    return [(i["posted_on"], i["amount"]) for i in items]


@pytest.fixture
def winter(flow: Stack, at: clock.FixedClock) -> Stack:  # noqa: F811
    """GR-1 billed on 2027-01-01 for Oct-Dec (45.00 + 23 x 6.50 = 194.50), and the
    assessment's first full run on 2026-12-31 (outside October's tax roll window)."""
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    consume(flow, "GR-1", 23000, start=date(2026, 10, 1), end=date(2027, 1, 1))
    set_day(at, "2026-12-31")
    assess("2026-12-31T18:00:00Z")
    set_day(at, "2027-01-01")
    run_cycle(flow, at="2027-01-01T18:00:00Z")
    return flow


def test_a_day_with_nothing_due_costs_one_read_and_what_is_written_between_runs_is_acted_on_its_day(
    winter: Stack, at: clock.FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = BillingRepo(winter.ddb, TABLES["billing"])
    book = load_tariff_book(default_tariffs_dir())
    calls = dynamodb_calls(monkeypatch)
    full: list[str] = []
    writes = {
        # A credit memo of 50.00 (X-IMMUTABLE): the bill stays unpaid, 150.34 with the late charge.
        "2027-02-05": lambda now: adjustments.post_adjustment(
            GR,
            "GR-1",
            "GR-1-2026-10-01",
            Decimal("-50.00"),
            "goodwill",
            "Finance Director",
            "ADJ-1",
            date(2027, 2, 5),
            repo=repo,
            now=now,
        ),
        # Arranged: 100.00 due 02-20, never paid; it withdraws the eligibility at once.
        "2027-02-10": lambda now: arrangements.make(
            GR,
            "GR-1",
            "ARR-1",
            [(date(2027, 2, 20), Decimal("100.00"))],
            date(2027, 3, 31),
            "supervisor",
            "",
            repo=repo,
            today=date(2027, 2, 10),
            now=now,
            book=book,
        ),
        # Paid in full through the API, dated that day: it counts from the next day.
        "2027-02-25": lambda now: payments.post_api_payment(
            GR,
            "GR-1",
            Decimal("150.34"),
            date(2027, 2, 25),
            "k-1",
            caller="ann",
            repo=repo,
            now=now,
            book=book,
        ),
    }
    for day in days("2027-01-02", "2027-03-31"):
        set_day(at, day)
        calls.clear()
        assess(f"{day}T18:00:00Z")
        if calls != ["GetItem"]:
            full.append(day)
        if day in writes:
            writes[day](at.now())
    # 194.50 x 3% = 5.835 -> 5.84 on day 21 (01-22), overdue that day, eligible 10 days later
    # (02-01); withdrawn when arranged (02-10, by the arrangement itself); the arrangement
    # broken on 02-21 (the 100.00 of 02-20 missed): eligible again; paid in full on 02-25,
    # counting from 02-26: withdrawn that day by the assessment.
    assert late_charges(winter) == [("2027-01-22", "5.84")]
    assert assessed(winter) == [
        ("BillOverdue", "2027-01-22"),
        ("DisconnectionEligible", "2027-02-01"),
        ("DisconnectionEligibilityWithdrawn", "2027-02-10"),
        ("DisconnectionEligible", "2027-02-21"),
        ("DisconnectionEligibilityWithdrawn", "2027-02-26"),
    ]
    # Full runs: the day after the bill, after each write, and the days the rules name
    # (with the day after an entry's date); every other day one GetItem of the mark.
    assert {
        "2027-01-02",
        "2027-01-22",
        "2027-02-01",
        "2027-02-06",
        "2027-02-11",
        "2027-02-21",
        "2027-02-26",
    } <= set(full)
    assert len(full) <= 16, full  # of 89 days


def test_a_run_that_raced_a_new_bill_leaves_the_next_run_a_full_one(
    flow: Stack,
    at: clock.FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    consume(flow, "GR-1", 23000, start=date(2026, 10, 1), end=date(2027, 1, 1))
    repo = BillingRepo(flow.ddb, TABLES["billing"])
    set_day(at, "2027-01-01")
    real = BillingRepo.all_bills
    raced: list[str] = []

    def bills_then_the_cycle(self: BillingRepo, tenant: str) -> Any:
        found = real(self, tenant)
        if tenant == GR and not raced:  # the cycle issues its bill right after the run read the bills
            raced.append(tenant)
            run_cycle(flow, at="2027-01-01T18:00:00Z")
        return found

    monkeypatch.setattr(BillingRepo, "all_bills", bills_then_the_cycle)
    assess("2027-01-01T18:00:00Z")
    monkeypatch.setattr(BillingRepo, "all_bills", real)
    mark = repo.assessment_due()
    # The run's record was refused: the bill's write left Grafton pending.
    assert raced and mark is not None and GR in mark.pending and mark.due(GR, date(2027, 1, 2))
    calls = dynamodb_calls(monkeypatch)
    set_day(at, "2027-01-02")
    assess("2027-01-02T18:00:00Z")
    assert "Query" in calls  # a full run, which now knows the bill
    mark = repo.assessment_due()
    assert mark is not None and mark.pending == frozenset() and mark.next_on[GR] == date(2027, 1, 22)
    for day in days("2027-01-03", "2027-01-22"):
        set_day(at, day)
        assess(f"{day}T18:00:00Z")
    assert late_charges(flow) == [("2027-01-22", "5.84")]


def test_assessing_twice_a_day_or_after_skipped_days_changes_nothing_more(
    winter: Stack, at: clock.FixedClock
) -> None:
    # The runs of 01-02 to 02-09 never came: the run of 02-10 catches up every point.
    set_day(at, "2027-02-10")
    assess("2027-02-10T18:00:00Z")
    before = winter.items("billing")
    assess("2027-02-10T18:00:00Z")
    assert winter.items("billing") == before
    assert late_charges(winter) == [("2027-01-22", "5.84")]
    assert assessed(winter) == [("BillOverdue", "2027-01-22"), ("DisconnectionEligible", "2027-02-01")]


def test_a_chunk_marks_its_tenant_pending_once_after_its_last_bill_and_a_redelivery_marks_again(
    flow: Stack,
    at: clock.FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    for account in ("GR-1", "GR-2", "GR-3"):
        consume(flow, account, 1000, start=date(2026, 10, 1), end=date(2027, 1, 1))
    repo = BillingRepo(flow.ddb, TABLES["billing"])
    set_day(at, "2027-01-01")
    monkeypatch.setattr(cycles, "WRITE_STEP", 1)  # three bills (GR-4 has no consumption), three parts
    calls = dynamodb_calls(monkeypatch)
    real_mark = BillingRepo.assessment_inputs_changed
    marks: list[int] = []  # bills there when each mark was written

    def mark(self: BillingRepo, pks: Any, accounts: Any = None) -> None:
        pks = list(pks)
        if any(pk.startswith("BILLS#") for pk in pks):
            marks.append(len([i for i in flow.items("billing") if i["pk"] == f"BILLS#{GR}"]))
        real_mark(self, pks, accounts)

    monkeypatch.setattr(BillingRepo, "assessment_inputs_changed", mark)
    run_cycle(flow, at="2027-01-01T18:00:00Z")
    # One chunk of three bills in three parts: one UpdateItem, after the third bill.
    assert calls.count("UpdateItem") == 1 and marks == [3]
    due = repo.assessment_due()
    assert due is not None and due.pending == frozenset({GR}) and due.writes == 1
    # the bills' accounts are due on the bill date (issue 31): the next run reads them only
    assert due.full == frozenset()
    assert repo.accounts_due(GR, [date(2027, 1, 1)]) == {"GR-1", "GR-2", "GR-3"}
    # A crash between the last bill and the mark, then the redelivery: it issues nothing
    # again and still marks the tenant (the mark is not lost with the crash).
    run_cycle(flow, at="2027-01-01T18:00:00Z")
    assert marks == [3, 3] and calls.count("UpdateItem") == 2
    assert len([i for i in flow.items("billing") if i["pk"] == f"BILLS#{GR}"]) == 3


def test_after_its_first_run_a_day_reads_only_the_accounts_due_that_day(
    flow: Stack,
    at: clock.FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 31: a day's assessment reads the bills, ledger and marks of the accounts with
    work that day (a bill issued, a payment, a day a rule names), each by its own prefix,
    never the tenant's whole partitions, so its cost does not grow with the tenant's history."""
    from billing.adapters.store import Store

    upload(flow, "accounts/2026.csv", ACCOUNTS)
    for account in ("GR-1", "GR-2", "GR-3"):
        consume(flow, account, 23000, start=date(2026, 10, 1), end=date(2027, 1, 1))
    repo = BillingRepo(flow.ddb, TABLES["billing"])
    set_day(at, "2026-12-31")
    assess("2026-12-31T18:00:00Z")  # the first run: in full (no bills yet)
    set_day(at, "2027-01-01")
    run_cycle(flow, at="2027-01-01T18:00:00Z")
    real_query = Store.query
    read: list[tuple[str, str | None]] = []  # (partition, prefix) of each BILLS#/LEDGER#/MARKS# query

    def query(self: Store, pk: str, *, prefix: str | None = None, between: Any = None) -> Any:
        if pk.split("#", 1)[0] in ("BILLS", "LEDGER", "MARKS"):
            read.append((pk, prefix))
        return real_query(self, pk, prefix=prefix, between=between)

    monkeypatch.setattr(Store, "query", query)

    def accounts_read(day: str) -> set[str | None]:
        read.clear()
        set_day(at, day)
        assess(f"{day}T18:00:00Z")
        return {p.split("#", 1)[0] if p else None for _, p in read}

    assert accounts_read("2027-01-02") == {"GR-1", "GR-2", "GR-3"}  # billed on 01-01
    [bill] = repo.bills_of(GR, "GR-2")
    set_day(at, "2027-01-10")
    payments.post_api_payment(
        GR, "GR-2", bill.total, date(2027, 1, 10), "k-2", caller="ann", repo=repo, now=at.now()
    )
    assert accounts_read("2027-01-11") == {"GR-2"}  # its payment only
    assert accounts_read("2027-01-15") == set()  # nothing due: the mark only
    # day 21: the late charge and the overdue notice of the two unpaid bills; GR-2 is read
    # too (its entry of that day was written before it paid; an entry is never removed, and
    # reading it finds nothing to do), no other account, whatever the tenant's history
    assert accounts_read("2027-01-22") == {"GR-1", "GR-2", "GR-3"}
    assert late_charges(flow) == [("2027-01-22", "5.84"), ("2027-01-22", "5.84")]
    assert ("BillOverdue", "2027-01-22") in assessed(flow)
