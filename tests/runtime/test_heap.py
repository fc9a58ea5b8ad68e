"""The local runtime's heap (sewerbill.local.heap): what survives an invocation, or a young
collection once the heap is settled, is kept out of the collector's sight. Local-only:
deployed functions never settle a heap.

Everything the emulator keeps (moto's items, stream records, messages) lives in the runtime's
process; on AWS it lives in DynamoDB, SQS and EventBridge, not in a Lambda's memory. The
runtime settles the heap after provisioning (``heap.settle``) and, after each invocation,
freezes what survived it (``heap.after_invocation``), so the collector's middle generation
does not walk a cycle's bills again and again. Stopping the runtime gives everything back.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from conftest import FIXTURES, START
from sewerbill.local import LocalRuntime, heap


class Node:
    """A tracked object that can be part of a reference cycle."""

    def __init__(self) -> None:
        self.other: object = None


def in_sight(obj: object) -> bool:
    """Whether the collector's generations hold ``obj`` (frozen objects are in none)."""
    return any(o is obj for o in gc.get_objects())


@pytest.fixture
def unsettled() -> Iterator[None]:
    heap.unsettle()
    yield
    heap.unsettle()


@pytest.fixture
def settled() -> Iterator[None]:
    heap.settle()
    try:
        yield
    finally:
        heap.unsettle()


def test_an_unsettled_heap_freezes_nothing_after_an_invocation(unsettled: None) -> None:
    kept = [{"item": "a survivor"}]
    heap.after_invocation()
    assert in_sight(kept)
    assert gc.get_freeze_count() == 0


def test_a_settled_heap_freezes_what_survived_an_invocation_until_unsettled(unsettled: None) -> None:
    heap.settle()
    kept = [{"item": "a survivor"}]
    assert in_sight(kept)
    heap.after_invocation()
    assert not in_sight(kept)
    heap.unsettle()
    assert in_sight(kept)
    assert gc.get_threshold()[0] != heap.YOUNG_THRESHOLD


@pytest.mark.integration
def test_the_runtime_freezes_what_an_invocation_left_and_gives_it_back_when_stopped() -> None:
    with LocalRuntime.start(FIXTURES / "template.yaml", start_time=START, stack_name="heap") as rt:
        left = [{"made": "after provisioning"}]
        assert in_sight(left)
        invocation = rt.invoke(
            "TickFunction",
            {
                "Records": [
                    {"body": '{"scheduled_time": "2025-01-06T09:00:00Z", "job": "j", "execution_id": "e"}'}
                ]
            },
        )
        assert invocation.error is None
        assert not in_sight(left)
    assert in_sight(left)
    assert gc.get_freeze_count() == 0


def test_a_settled_heap_frees_the_garbage_invocations_left_every_so_many_invocations(
    unsettled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heap, "FULL_EVERY", 3)
    heap.settle()
    heap._since_full[0] = 0
    garbage = Node()
    garbage.other = garbage  # a cycle: only the collector frees it
    gone = weakref.ref(garbage)
    del garbage
    heap.after_invocation()  # frozen with what survived the first invocation
    heap.after_invocation()
    gc.collect()
    assert gone() is not None  # a frozen cycle is not collected
    heap.after_invocation()  # the third: everything collected, then frozen again
    assert gone() is None
    kept = [{"item": "a survivor"}]
    heap.after_invocation()
    assert not in_sight(kept)


def test_what_survives_a_young_collection_is_frozen_once_settled(settled: None) -> None:
    """The emulator's stored items survive young collections: frozen there, the middle and
    oldest generations never walk them again."""
    frozen = gc.get_freeze_count()
    kept = [Node() for _ in range(1_000)]
    gc.collect(0)
    assert gc.get_freeze_count() >= frozen + len(kept)


def test_before_settling_a_young_collection_freezes_nothing() -> None:
    gc.collect()
    frozen = gc.get_freeze_count()
    kept = [Node() for _ in range(1_000)]
    gc.collect(0)
    assert gc.get_freeze_count() == frozen
    assert kept


def test_a_frozen_cycle_dropped_later_is_freed_once_the_runtime_stops() -> None:
    """What the freezing defers: a cycle alive at a young collection and dropped afterwards is
    kept while the runtime runs and freed after `unsettle` (the runtime's stop)."""
    heap.settle()
    try:
        a, b = Node(), Node()
        a.other, b.other = b, a
        watch = weakref.ref(a)
        gc.collect(0)  # a and b survive: frozen
        del a, b
        gc.collect()
        assert watch() is not None  # frozen, so not collected while settled
    finally:
        heap.unsettle()
    gc.collect()
    assert watch() is None
    assert heap._freeze_survivors not in gc.callbacks


def test_unsettling_restores_the_thresholds_and_unfreezes() -> None:
    before = gc.get_threshold()
    heap.settle()
    assert gc.get_threshold()[0] == heap.YOUNG_THRESHOLD
    heap.unsettle()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
