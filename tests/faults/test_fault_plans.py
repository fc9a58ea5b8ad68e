"""The fault plan's own rules (sewerbill.local.faults), without a runtime: where it kills,
which invocation, once only, and a seeded point that is the same on every run."""

from __future__ import annotations

import pytest

from sewerbill.local.faults import Fault


def _calls_until_killed(fault: Fault, function: str, calls: int) -> tuple[int, bool]:
    """Drive one invocation of ``function`` making ``calls`` calls: (answered, killed)."""
    watch = fault.watch(function)
    if watch is None:
        return calls, False
    for n in range(calls):
        if watch.kill_before_call(f"call {n}"):
            return n, True
    return calls, watch.kill_before_ack()


def test_after_n_calls_answers_n_and_kills_before_the_next() -> None:
    fault = Fault("F", after_aws_calls=3)
    assert _calls_until_killed(fault, "F", 10) == (3, True)
    assert fault.fired and fault.calls == ["call 0", "call 1", "call 2"]


def test_before_ack_answers_every_call_then_kills() -> None:
    fault = Fault("F")
    assert _calls_until_killed(fault, "F", 4) == (4, True)
    assert fault.point == "before ack"


def test_it_fires_once_in_the_chosen_invocation_of_its_function_only() -> None:
    fault = Fault("F", after_aws_calls=0, invocation=2)
    assert _calls_until_killed(fault, "G", 2) == (2, False)  # another function: untouched
    assert _calls_until_killed(fault, "F", 2) == (2, False)  # F's first invocation runs
    assert _calls_until_killed(fault, "F", 2) == (0, True)  # its second is killed
    assert _calls_until_killed(fault, "F", 2) == (2, False)  # the redelivery runs without it


def test_a_point_past_the_invocation_never_fires() -> None:
    fault = Fault("F", after_aws_calls=99)
    assert _calls_until_killed(fault, "F", 5) == (5, False)
    assert not fault.fired and len(fault.calls) == 5  # a count of the run's calls


def test_a_seeded_point_is_the_seed_s_on_every_run() -> None:
    points = {Fault.seeded(26, "F", calls=40).after_aws_calls for _ in range(5)}
    assert len(points) == 1 and 0 <= points.pop() < 40  # type: ignore[operator]
    assert Fault.seeded(26, "F", calls=40).describe().startswith("F invocation 1 after ")


def test_a_negative_point_is_refused() -> None:
    with pytest.raises(ValueError, match="after_aws_calls"):
        Fault("F", after_aws_calls=-1)
