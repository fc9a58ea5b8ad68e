"""The local runtime's heap (sewerbill.local.heap): what the collector walks in the emulator's
process. Local-only: deployed functions never settle a heap."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from sewerbill.local import heap


class Node:
    """A tracked object that can be part of a reference cycle."""

    def __init__(self) -> None:
        self.other: object = None


@pytest.fixture
def settled() -> Iterator[None]:
    heap.settle()
    try:
        yield
    finally:
        heap.unsettle()


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
