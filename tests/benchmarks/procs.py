"""CPU and memory of a local runtime's whole work: this process (moto, the runtime) and the
worker process of each function (isolate="process", the default), read from /proc.

`time.process_time()` and `ru_maxrss` alone see only this process, so with workers they
would leave out every handler's cost. A worker that exited before the reading is not counted
(the runtime replaces a dead worker; the benchmarks see none die)."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

TICK = os.sysconf("SC_CLK_TCK")


def workers(rt: Any) -> list[int]:
    """The processes of `rt`'s functions started so far (none with isolate="modules")."""
    return [pid for pid in rt.invoker.worker_pids().values() if pid]


def cpu_seconds(pids: Iterable[int | None] = ()) -> float:
    """CPU seconds of this process plus those of the live processes `pids`."""
    total = time.process_time()
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
    return total


def reset_peaks(pids: Iterable[int | None] = ()) -> bool:
    """Start the peak RSS of this process and of ``pids`` again from what each holds now
    (Linux's ``clear_refs`` 5), so that `peak_rss_mib` reads the peak of what comes next, not
    of what a benchmark measured before it. False where the kernel does not allow it (the
    peaks are then the processes' whole lives)."""
    done = True
    for pid in ("self", *(p for p in pids if p)):
        try:
            Path(f"/proc/{pid}/clear_refs").write_text("5")
        except OSError:
            done = False
    return done


def _hwm_mib(pid: int | str) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    hwm = next((line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")), None)
    return None if hwm is None else int(hwm) / 1024


def rss_mib() -> float:
    """This process's resident set now, in MiB (0 where /proc does not say)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return 0.0
    return next(
        (int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmRSS:")), 0.0
    )


def peak_rss_mib(pids: Iterable[int | None] = ()) -> tuple[float, float, float]:
    """(this process's peak RSS, the largest worker's, the sum of all: an upper bound of the
    whole runtime's peak, since the peaks need not coincide), in MiB: since `reset_peaks`
    where it was called, else over each process's life."""
    own = _hwm_mib("self")
    if own is None:
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = [m for m in (_hwm_mib(pid) for pid in pids if pid) if m is not None]
    return own, max(workers, default=0.0), own + sum(workers)
