"""Fault injection: kill a function's worker at a chosen point and let its source redeliver.

A billing system's first promise is that a crash loses nothing and doubles nothing (issue
26). This module lets a test crash a function where it chooses, deterministically, as a
``kill -9`` of the Lambda's process would: a :class:`Fault` names the function, which of its
invocations to kill (the first after the plan is armed, by default) and where:

- ``after_aws_calls=N``: the worker's first N AWS calls are answered (their effects stored),
  and the process is killed when it asks for the next one, which never reaches the emulator;
- ``before_ack`` (``after_aws_calls=None``): every call of the invocation is answered, and
  the process is killed when it hands back its result, so the source never sees it succeed
  (SQS: the message is not deleted; a stream: the checkpoint does not move).

The runtime counts the calls itself: each AWS call of a worker travels over its pipe to moto
in the runtime's process (``sewerbill.local.worker._forward_calls_to``), so the count is
exact and the kill lands between two calls, never by timing. The runtime then sees the
process gone (``WorkerExited``), records the invocation as failed (``Runtime.ExitError``),
and the source does what Lambda's does: the SQS message is visible again (the runtime ends
its visibility timeout at once, so a drain redelivers without waiting on the simulated
clock) and the stream batch is retried from its checkpoint; the next invocation is a cold
start in a new process. A fault fires once: the redelivery runs without it.

``Fault.seeded(seed, function, calls)`` picks the kill point with ``random.Random(seed)``
(a fixture's choice, printed by its ``describe``), never the clock or an unseeded generator.

Only with functions in processes (``isolate="process"``) and moto in the runtime's process
(the embedded default): elsewhere :func:`arm` refuses, naming why.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sewerbill.local.invoker import FaultWatch, _served_here


@dataclass
class Fault:
    """Kill ``function``'s worker in its ``invocation``-th invocation (1: the first after
    :func:`arm`), after ``after_aws_calls`` answered AWS calls (None: before its ack)."""

    function: str
    after_aws_calls: int | None = None
    invocation: int = 1
    invocations_seen: int = field(default=0, init=False)
    fired: bool = field(default=False, init=False)
    # the calls answered in the watched invocation, in order (a plan that never fires, e.g.
    # ``after_aws_calls=sys.maxsize``, counts a run's calls for choosing kill points)
    calls: list[str] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        if self.after_aws_calls is not None and self.after_aws_calls < 0:
            raise ValueError("after_aws_calls must be 0 or more (None: before the ack)")
        if self.invocation < 1:
            raise ValueError("invocation counts from 1")

    @classmethod
    def seeded(cls, seed: int, function: str, calls: int, invocation: int = 1) -> Fault:
        """A kill point drawn from ``random.Random(seed)``: after 0 to ``calls`` - 1 calls."""
        return cls(function, after_aws_calls=random.Random(seed).randrange(calls), invocation=invocation)

    @property
    def point(self) -> str:
        """The kill point as the harness's tables name it."""
        return "before ack" if self.after_aws_calls is None else f"after {self.after_aws_calls} calls"

    def describe(self) -> str:
        return f"{self.function} invocation {self.invocation} {self.point}"

    def watch(self, function: str) -> FaultWatch | None:
        if self.fired or function != self.function:
            return None
        self.invocations_seen += 1
        if self.invocations_seen != self.invocation:
            return None
        return _Watch(self)


class _Watch:
    """One invocation under a :class:`Fault`: counts its calls, says when to kill."""

    def __init__(self, fault: Fault) -> None:
        self.fault = fault
        fault.calls = []

    def kill_before_call(self, name: str) -> bool:
        if self.fault.after_aws_calls is not None and len(self.fault.calls) >= self.fault.after_aws_calls:
            return self._fire()
        self.fault.calls.append(name)
        return False

    def kill_before_ack(self) -> bool:
        return self._fire() if self.fault.after_aws_calls is None else False

    def _fire(self) -> bool:
        self.fault.fired = True
        return True

    def describe(self) -> str:
        return self.fault.describe()


class _Plans:
    def __init__(self, faults: list[Fault]) -> None:
        self.faults = faults

    def watch(self, function: str) -> FaultWatch | None:
        for fault in self.faults:
            found = fault.watch(function)
            if found is not None:
                return found
        return None


class FaultsUnavailable(RuntimeError):
    """The runtime cannot count a worker's calls (functions in this process, or moto elsewhere)."""


@contextmanager
def arm(runtime: Any, *faults: Fault) -> Iterator[list[Fault]]:
    """Give ``runtime`` (a `LocalRuntime`) these faults until the block ends."""
    invoker = runtime.invoker
    if invoker.isolate != "process":
        raise FaultsUnavailable("faults kill a function's process: start the runtime with isolate='process'")
    endpoints = {runtime.function_env(f.function).get("AWS_ENDPOINT_URL") for f in faults}
    if not all(_served_here(e) for e in endpoints):
        raise FaultsUnavailable("faults count calls to moto in the runtime's process (the embedded default)")
    overrides = [
        name
        for f in faults
        for name in runtime.function_env(f.function)
        if name.startswith("AWS_ENDPOINT_URL_")
    ]
    if overrides:
        raise FaultsUnavailable(f"{overrides[0]} sends calls elsewhere: the runtime would not count them")
    previous, invoker.faults = invoker.faults, _Plans(list(faults))
    try:
        yield list(faults)
    finally:
        invoker.faults = previous
