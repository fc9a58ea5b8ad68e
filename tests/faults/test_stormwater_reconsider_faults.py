"""PP-CWU-RECONSIDER under faults (issue 28): a decision that corrects a parcel's ERU from
the start of the reconsidered bill's period reaches billing (``ERUDetermined``, cause
``reconsideration``), which re-rates the billed month (its refund a ledger ``credit`` on
the bill), and the next cycle bills the later month at the corrected ERU. The worker of
billing's event consumer (the re-rating) is killed at four points (after the
first AWS call, in the middle, after the last call, before the ack) and redelivered; each
run ends as the faultless run: the same bills, adjustments and ledger entries (so the same
totals per account and fund), the same events by business key, nothing lost or doubled.

A module of its own (each run is a fresh local runtime, sewerbill.local), like the other
fault modules."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fault_harness import Harness, assert_same
from stormwater_flows import FLOWS, SW

pytestmark = pytest.mark.integration

HARNESS = {name: Harness(FLOWS[name]) for name in FLOWS if name.startswith("reconsideration")}
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


def test_pp_cwu_reconsider_the_faultless_run_refunds_september_and_bills_october_corrected() -> None:
    harness = HARNESS["reconsideration (billing re-rates)"]
    items = harness.baseline.outcome.items
    credits = sorted(
        (i["bill_id"], i["amount"])
        for (_, pk, _), i in items.items()
        if pk == f"LEDGER#{SW}" and isinstance(i, dict) and i.get("kind") == "credit"
    )
    # (6.54 - 3.83) ERU x 6.00 = 16.26 off September's bill, as a credit on it.
    assert credits == [("PPW-1-2026-09-01", "-16.26")]
    totals = sorted(
        (opened(i["bill"])["bill_id"], opened(i["bill"])["total"])
        for (_, pk, _), i in items.items()
        if pk == f"BILLS#{SW}" and isinstance(i, dict) and "bill" in i
    )
    # August and September as issued (6.54 ERU: 2.00 + 39.24 = 41.24, August prorated from
    # the 3rd is what the cycle billed); October at 3.83 ERU: 2.00 + 22.98 = 24.98.
    assert totals[-1] == ("PPW-1-2026-10-01", "24.98")
    assert totals[1] == ("PPW-1-2026-09-01", "41.24")


@pytest.mark.parametrize("where", POINTS)
@pytest.mark.parametrize("flow", list(HARNESS))
def test_pp_cwu_reconsider_a_killed_worker_ends_as_one_never_killed(flow: str, where: str) -> None:
    harness = HARNESS[flow]
    assert_same(harness, point(harness, where))
