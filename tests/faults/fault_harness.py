"""The fault-injection harness: run a flow on a fresh local stack, with or without a
kill of one function's worker (`sewerbill.local.faults`), and keep the flow x kill point table.

A flow is its set-up (files and clock moves before the part under test), its act (the part
under test, ending in a drain) and the function whose worker is killed. `run_flow` starts
the real template on moto in this process, with the simulated clock at the flow's start,
captures the bus's events, runs the set-up, arms the fault, runs the act, and returns the
stored outcome (`fault_outcome`). Each run has moto to itself: moto's backends are
process-wide, so they are reset between runs.

Kill points are chosen against the faultless run's own calls (`kill_points`): the first call,
a few calls in, the middle, the last call and the ack, so a point never falls past the end of
the invocation. The table is printed at the end of the session (pytest's terminal summary)
and written to ``$SEWERBILL_FAULTS_TABLE`` when set (CI keeps it).
"""

from __future__ import annotations

import copy
import json
import os
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fault_outcome import Difference, Outcome, capture_events, compare, outcome  # noqa: E402

from sewerbill import samtemplate  # noqa: E402
from sewerbill.local import LocalRuntime  # noqa: E402
from sewerbill.local.faults import Fault, arm  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
COUNT_ONLY = sys.maxsize  # a fault that never fires: counts the invocation's calls


@dataclass(frozen=True)
class Flow:
    name: str
    function: str  # the function whose worker is killed
    start: datetime
    setup: Callable[[LocalRuntime], None]
    act: Callable[[LocalRuntime], None]
    invocation: int = 1  # which of the function's invocations in the act is killed
    gateway: bool = False  # the set-up calls HTTP routes (`staff_call`)


@dataclass
class Run:
    outcome: Outcome
    fault: Fault
    dead_letters: int
    failed_invocations: int


def _kept(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (a pure one of its arguments) answered once per arguments, a copy each time."""
    kept: dict[str, Any] = {}

    def again(*args: Any, **kwargs: Any) -> Any:
        key = repr((args, sorted(kwargs.items())))
        if key not in kept:
            kept[key] = function(*args, **kwargs)
        return copy.deepcopy(kept[key])

    return again


# Every run starts the same template: its YAML parse and SAM translation (6 of a start's 9 s
# on a loaded machine) are made once per process.
_TEMPLATE = {name: _kept(getattr(samtemplate, name)) for name in ("load_template", "translate_template")}


def _reset_moto() -> None:
    from moto.moto_api._internal.models import moto_api_backend

    moto_api_backend.reset()


def run_flow(flow: Flow, after_aws_calls: int | None = COUNT_ONLY) -> Run:
    """The flow on a fresh stack; ``after_aws_calls`` as `Fault`'s (COUNT_ONLY: no kill)."""
    if os.environ.get("SEWERBILL_TEST_DYNAMODB"):
        pytest.skip("the harness counts calls to moto in this process; DynamoDB is elsewhere")
    _reset_moto()
    fault = Fault(flow.function, after_aws_calls=after_aws_calls, invocation=flow.invocation)
    with (
        mock.patch.object(samtemplate, "load_template", _TEMPLATE["load_template"]),
        mock.patch.object(samtemplate, "translate_template", _TEMPLATE["translate_template"]),
    ):
        rt = LocalRuntime.start(
            REPO / "template.yaml",
            start_time=flow.start,
            parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
            gateway=flow.gateway,
        )
    with rt:
        capture = capture_events(rt)
        flow.setup(rt)
        rt.drain()
        before = len(rt.invocations)
        with arm(rt, fault):
            flow.act(rt)
            rt.drain()
        failed = sum(1 for i in rt.invocations[before:] if i.error)
        found = outcome(rt, capture)
        letters = len(rt.dead_letters)
    _reset_moto()
    return Run(found, fault, letters, failed)


def staff_call(rt: LocalRuntime, method: str, path: str, body: Any, tenant: str) -> int:
    """An HTTP route called as a clerk of ``tenant`` (a flow's set-up); its status."""
    token = rt.mint_token(sub="clerk", claims={"role": "staff", "tenants": [tenant]})
    request = urllib.request.Request(
        rt.gateway_url + path,
        data=json.dumps(body).encode(),
        method=method,
        headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 - the local gateway
        return int(answer.status)


def kill_points(calls: int) -> list[int | None]:
    """After 1, 3, 5 and 10 calls, the middle and the last call, and before the ack."""
    points = sorted({n for n in (1, 3, 5, 10, calls // 2, calls - 1) if 0 < n < calls})
    return [*points, None]


TABLE: list[tuple[str, str, int, int]] = []  # (flow, kill point, lost, doubled)


class Harness:
    """One flow's faultless run (made once) and its runs with a kill."""

    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        self._baseline: Run | None = None

    @property
    def baseline(self) -> Run:
        if self._baseline is None:
            self._baseline = run_flow(self.flow)
            assert self._baseline.failed_invocations == 0, "the faultless run failed an invocation"
            assert self._baseline.fault.calls, f"{self.flow.function} made no AWS call in the act"
        return self._baseline

    def points(self) -> list[int | None]:
        return kill_points(len(self.baseline.fault.calls))

    def killed(self, after_aws_calls: int | None) -> tuple[Run, Difference]:
        got = run_flow(self.flow, after_aws_calls)
        assert got.fault.fired, f"the fault {got.fault.describe()} never fired"
        diff = compare(self.baseline.outcome, got.outcome)
        lost = len(diff.lost) + max(0, got.dead_letters - self.baseline.dead_letters)
        TABLE.append((self.flow.name, got.fault.point, lost, len(diff.doubled)))
        return got, diff


def assert_same(harness: Harness, after_aws_calls: int | None) -> None:
    """Kill the flow's function there; the stored outcome is the faultless run's."""
    got, diff = harness.killed(after_aws_calls)
    where = got.fault.describe()
    killed_at = got.fault.calls[-1] if got.fault.calls else "(its first call)"
    assert got.dead_letters == harness.baseline.dead_letters, f"{where}: dead letters"
    assert not diff, (
        f"{where} (the next call after {killed_at}): lost {len(diff.lost)}, doubled {len(diff.doubled)}\n"
        + "\n".join(["lost:", *diff.lost[:15], "doubled:", *diff.doubled[:15]])
    )
