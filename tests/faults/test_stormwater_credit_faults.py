"""PP-CWU-CREDIT under faults (issue 28): a credit application's review fee travels from
stormwater (its outbox, ``FeeCharged``) to billing, which keeps it and puts it on the
account's next bill, so it reaches the account's ledger. The worker of billing's event
consumer (which keeps the fee) is killed at four points (after the first AWS call, in the middle, after the
last call, before the ack) and redelivered; each run ends as the faultless run: the same
items (bills, their lines, ledger entries: so the same totals per account and fund), the
same events by business key, nothing lost and nothing doubled (`stormwater_flows`).

A module of its own (each run is a fresh local runtime, sewerbill.local), like the other
fault modules."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fault_harness import Harness, assert_same
from stormwater_flows import FLOWS, SW

pytestmark = pytest.mark.integration

HARNESS = {name: Harness(FLOWS[name]) for name in FLOWS if name.startswith("credit fee")}
POINTS = ("first call", "middle", "last call", "before ack")


def opened(bill: Any) -> dict[str, Any]:
    """A bill's document as the outcome holds it (JSON strings are opened there already)."""
    return dict(bill) if isinstance(bill, dict) else dict(json.loads(bill))


def point(harness: Harness, name: str) -> int | None:
    calls = len(harness.baseline.fault.calls)
    chosen = {"first call": 1, "middle": calls // 2, "last call": calls - 1, "before ack": None}[name]
    if chosen is not None and not 0 < chosen < calls:
        pytest.skip(f"{harness.flow.function} makes only {calls} calls")
    return chosen


def bill_lines(harness: Harness) -> list[tuple[str, str, str]]:
    """(bill id, rule, amount) of every stormwater bill line the faultless run stored."""
    out = []
    for (_, pk, _), item in harness.baseline.outcome.items.items():
        if pk == f"BILLS#{SW}" and isinstance(item, dict) and "bill" in item:
            bill = opened(item["bill"])
            out += [(bill["bill_id"], line["rule_id"], line["amount"]) for line in bill["lines"]]
    return sorted(out)


def test_pp_cwu_credit_the_faultless_run_bills_the_review_fee_once() -> None:
    harness = HARNESS["credit fee (billing keeps it)"]
    fees = [line for line in bill_lines(harness) if line[1] == "PP-CWU-CREDIT"]
    assert fees == [("PPW-1-2026-09-01", "PP-CWU-CREDIT", "100.00")]


@pytest.mark.parametrize("where", POINTS)
@pytest.mark.parametrize("flow", list(HARNESS))
def test_pp_cwu_credit_a_killed_worker_ends_as_one_never_killed(flow: str, where: str) -> None:
    harness = HARNESS[flow]
    assert_same(harness, point(harness, where))
