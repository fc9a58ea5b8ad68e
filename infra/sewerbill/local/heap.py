"""The local runtime's process heap and Python's cyclic garbage collector.

Everything the runtime emulates lives in its process: moto's tables, queues and streams,
the provisioned stack, and the functions run in-process (``isolate="modules"``). Python's
collector walks every tracked object at each full collection and promotes young objects in
steps of 700 allocations, so a billing cycle that issues 10,000 bills spends seconds
walking moto's tables, which on AWS live in DynamoDB, not in a Lambda's memory.

:func:`settle` (after provisioning, and by a benchmark after its setup) collects once and
freezes what exists (``gc.freeze``: kept, never walked again), and collects the young
generation every 20,000 allocations instead of 700 (objects that die young are freed by
reference counting before the collector ever sees them). :func:`unsettle` (when the
runtime stops) puts the frozen objects back in the collector's sight, so a stopped
runtime's heap can be freed, and restores the thresholds.

:func:`after_invocation` (the invoker, after each invocation of a settled runtime) freezes
what survived the invocation without a collection: what a function leaves behind is the
emulator's state (the items, stream records and messages it wrote: on AWS in DynamoDB, SQS
and EventBridge, not in a Lambda's memory) and its warm module state. Left in sight, the
middle generation's collections walked them again and again (a 10,000-account cycle:
three collections of about 0.1 s each, half the collector's time). A cycle of garbage an
invocation leaves would then be kept until the runtime stops: every ``FULL_EVERY``
invocations the frozen objects are put back, collected once and frozen again, so a
long-running runtime (``sewerbill local``) frees what its invocations left.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000
FULL_EVERY = 10_000  # invocations between full collections of a settled heap

_since_full = [0]

_saved: list[tuple[int, int, int]] = []


def _freeze_survivors(phase: str, info: dict[str, int]) -> None:
    """Once the heap is settled, what survives a collection of the young generation is
    frozen as well (a ``gc.callbacks`` hook): the emulator's stored items and stream records
    (a read file's 20,000 items and their records, about 20 tracked objects each), which the
    middle generation's collections walked again, every object a second time (issue 7:
    0.2-0.3 s of the runtime's 5-7 s for a 10,000-row read file, measured with
    ``gc.callbacks``; most of it inside the metering function's one long invocation), and
    each full collection a third time. Each object is now walked once. What that defers: a
    reference cycle alive at a young collection that becomes garbage later is kept until
    the runtime stops (``unsettle`` unfreezes, and the next collection frees it) or the
    next full collection `after_invocation` makes; anything without a cycle is freed by
    reference counting as before."""
    if phase == "stop" and info["generation"] == 0:
        gc.freeze()


def settle() -> None:
    """Collect, freeze what exists, and collect the young generation less often (and freeze
    its survivors: `_freeze_survivors`)."""
    if _freeze_survivors not in gc.callbacks:
        gc.callbacks.append(_freeze_survivors)
    if not _saved:
        _saved.append(gc.get_threshold())
    gc.collect()
    gc.freeze()
    _, middle, old = _saved[0]
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)


def after_invocation() -> None:
    """Freeze what exists now, if the heap is settled (nothing is collected: a freeze only
    moves the generations' objects to the permanent one); every ``FULL_EVERY`` calls, a full
    collection first of everything, the frozen objects included."""
    if not _saved:
        return
    _since_full[0] += 1
    if _since_full[0] >= FULL_EVERY:
        _since_full[0] = 0
        gc.unfreeze()
        gc.collect()
    gc.freeze()


def unsettle() -> None:
    """Back to the collector as it was: nothing frozen, the thresholds restored."""
    if _freeze_survivors in gc.callbacks:
        gc.callbacks.remove(_freeze_survivors)
    gc.unfreeze()
    if _saved:
        gc.set_threshold(*_saved.pop())
