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


def peak_rss_mib(pids: Iterable[int | None] = ()) -> tuple[float, float, float]:
    """(this process's peak RSS, the largest worker's, the sum of all: an upper bound of the
    whole runtime's peak, since the peaks need not coincide), in MiB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = []
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        hwm = next((line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")), "0")
        workers.append(int(hwm) / 1024)
    return own, max(workers, default=0.0), own + sum(workers)
