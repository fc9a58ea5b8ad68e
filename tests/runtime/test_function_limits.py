"""The local runtime holds each invocation to its function's Timeout and MemorySize from the
template (issue 27), so what fails in Lambda fails here: the worker is killed, the
invocation recorded as failed, the SQS message redelivered to a new process (a cold start)
and dead-lettered after its queue's maxReceiveCount, a route answered 504; an invocation
within its limits runs as before. On a fixture stack (tests/runtime/fixtures/limits.yaml):
one function with a 1 s Timeout, one with 128 MB (and 30 s: writing 160 MB took over a second
on a loaded machine), each queue dead-lettering after two receives.

No assertion depends on timing: a function asked to sleep sleeps 30 s (thirty times its
Timeout, and the kill ends it at once), one asked to allocate holds the memory when it
returns (the runtime reads its resident set with its answer, however fast it ran)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import requests

from conftest import FIXTURES, START
from sewerbill.local import LocalRuntime
from sewerbill.local.invoker import limits_scale

pytestmark = pytest.mark.integration

SLOW, HUNGRY = "LimitedFunction", "HungryFunction"


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        FIXTURES / "limits.yaml", start_time=START, stack_name="limits", isolate="process", limits="on"
    ) as runtime:
        yield runtime


@pytest.fixture(autouse=True)
def fresh(rt: LocalRuntime) -> Iterator[None]:
    """Each test from a new worker with the template's limits, and a stack left drained."""
    rt.invoker.limits = 1.0
    rt.invoker.configure(SLOW)
    rt.invoker.configure(HUNGRY)
    yield
    rt.invoker.limits = 1.0
    rt.drain()


def attempts(rt: LocalRuntime, ident: str) -> list[str]:
    """The processes (pids) that started an attempt at `ident`, as the handler recorded them."""
    table = rt.resource("ObservationsTable")
    items = rt.client("dynamodb").scan(TableName=table)["Items"]
    return sorted(
        i["pk"]["S"].rsplit("#", 1)[1] for i in items if i["pk"]["S"].startswith(f"limited#{ident}#")
    )


def dead_lettered(rt: LocalRuntime, ident: str) -> bool:
    return any(
        json.loads(d.body)["id"] == ident for d in rt.dead_letters if d.queue in ("LimitsDLQ", "HungryDLQ")
    )


def test_an_invocation_within_its_limits_is_not_touched(rt: LocalRuntime) -> None:
    before = len(rt.invocations)
    rt.send("HungryQueue", {"id": "ok-1", "mode": "ok"}, drain=True)
    rt.send("HungryQueue", {"id": "ok-2", "mode": "allocate", "mb": 8}, drain=True)

    ran = rt.invocations[before:]
    assert [(i.function, i.error) for i in ran] == [(HUNGRY, None), (HUNGRY, None)]
    assert attempts(rt, "ok-1") == attempts(rt, "ok-2")  # one warm process for both
    assert not dead_lettered(rt, "ok-1") and not dead_lettered(rt, "ok-2")


def test_past_its_timeout_the_worker_is_killed_redelivered_then_dead_lettered(rt: LocalRuntime) -> None:
    before = len(rt.invocations)
    rt.send("LimitsQueue", {"id": "slow", "mode": "sleep", "seconds": 30}, drain=True)

    ran = rt.invocations[before:]
    assert [i.error for i in ran] == ["Sandbox.Timedout: Task timed out after 1.00 seconds"] * 2
    assert all(i.failures == 1 for i in ran)
    assert all(i.duration_ms < 30_000 for i in ran)  # killed, not waited for
    pids = attempts(rt, "slow")
    assert len(pids) == 2 and len(set(pids)) == 2  # each receive a cold start in a new process
    assert dead_lettered(rt, "slow")  # after maxReceiveCount (2)


def test_past_its_memory_size_the_worker_is_killed_redelivered_then_dead_lettered(rt: LocalRuntime) -> None:
    before = len(rt.invocations)
    rt.send("HungryQueue", {"id": "big", "mode": "allocate", "mb": 160}, drain=True)

    ran = rt.invocations[before:]
    assert len(ran) == 2
    for inv in ran:
        assert inv.error is not None and inv.error.startswith(
            "Runtime.OutOfMemory: Runtime exited with error: signal: killed"
        ), inv.error
        assert "MemorySize 128 MB" in inv.error
    pids = attempts(rt, "big")
    assert len(pids) == 2 and len(set(pids)) == 2
    assert dead_lettered(rt, "big")
    # the next invocation is a cold start within its limits again
    rt.send("HungryQueue", {"id": "after-big", "mode": "ok"}, drain=True)
    assert rt.invocations[-1].error is None
    assert attempts(rt, "after-big")[0] not in pids


def test_a_route_past_its_timeout_answers_504(rt: LocalRuntime) -> None:
    ok = requests.post(rt.gateway_url + "/hungry", json={"id": "route-ok", "mode": "ok"}, timeout=60)
    assert ok.status_code == 200

    for attempt in (1, 2):
        slow = requests.post(
            rt.gateway_url + "/limited", json={"id": "route-slow", "mode": "sleep", "seconds": 30}, timeout=60
        )
        assert (slow.status_code, slow.json()) == (504, {"message": "Gateway Timeout"}), attempt
        assert rt.invocations[-1].error == "Sandbox.Timedout: Task timed out after 1.00 seconds"
    assert len(set(attempts(rt, "route-slow"))) == 2  # the second a cold start


def test_limits_off_or_scaled_let_the_same_work_through(rt: LocalRuntime) -> None:
    rt.invoker.limits = None  # SEWERBILL_LOCAL_LIMITS=off
    rt.send("LimitsQueue", {"id": "off-slow", "mode": "sleep", "seconds": 1.5}, drain=True)
    rt.send("HungryQueue", {"id": "off-big", "mode": "allocate", "mb": 160}, drain=True)
    assert [i.error for i in rt.invocations[-2:]] == [None, None]

    rt.invoker.configure(HUNGRY)  # a new process, without the memory held
    rt.invoker.limits = 4.0  # 120 s and 512 MB
    rt.send("HungryQueue", {"id": "scaled-big", "mode": "allocate", "mb": 160}, drain=True)
    assert rt.invocations[-1].error is None
    assert not any(dead_lettered(rt, i) for i in ("off-slow", "off-big", "scaled-big"))


@pytest.mark.parametrize(
    ("value", "scale"),
    [(None, 1.0), ("on", 1.0), ("", 1.0), ("off", None), ("0", None), ("2.5", 2.5), (3, 3.0)],
)
def test_the_limits_setting(
    value: str | float | None, scale: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SEWERBILL_LOCAL_LIMITS", raising=False)
    assert limits_scale(value) == scale
    if isinstance(value, str):
        monkeypatch.setenv("SEWERBILL_LOCAL_LIMITS", value)
        assert limits_scale() == scale


def test_a_limits_setting_that_is_not_one_is_refused() -> None:
    with pytest.raises(ValueError, match="SEWERBILL_LOCAL_LIMITS"):
        limits_scale("fast")
    with pytest.raises(ValueError, match="SEWERBILL_LOCAL_LIMITS"):
        limits_scale("-1")
