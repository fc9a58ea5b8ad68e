"""Billing under faults (issue 26): an accounts file, a lockbox file and the billing cycle
(its run and its chunks of bills), each with its worker killed at several points and
redelivered, end as the same stored outcome as a run without the kill: the same accounts,
bills, ledger entries (so the same totals per account and fund), cycle summaries and events
published (`billing_flows`).

Each run is the real template on a fresh local runtime (sewerbill.local), so this module
runs in a process of its own, as the other runtime modules do (Makefile RUNTIME_TESTS)."""

from __future__ import annotations

import pytest
from billing_flows import FLOWS
from fault_harness import Harness, assert_same

pytestmark = pytest.mark.integration

HARNESS = {
    name: Harness(FLOWS[name])
    for name in ("accounts file", "lockbox file", "billing cycle (run)", "billing cycle (bills)")
}
POINTS = ("middle", "last call", "before ack")


def _point(harness: Harness, name: str) -> int | None:
    calls = len(harness.baseline.fault.calls)
    chosen = {"middle": calls // 2, "last call": calls - 1, "before ack": None}[name]
    if chosen is not None and not 0 < chosen < calls:
        pytest.skip(f"{harness.flow.function} makes only {calls} calls")
    return chosen


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("flow", list(HARNESS))
def test_a_killed_worker_ends_as_one_never_killed(flow: str, point: str) -> None:
    harness = HARNESS[flow]
    assert_same(harness, _point(harness, point))
