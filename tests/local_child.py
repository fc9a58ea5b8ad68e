"""`sewerbill local up` in a child process, as a user starts it, for the tests that drive
the CLI from outside (tests/runtime/test_local_cli.py, tests/demo/): started from the
repository, read until the stack says it is polling, stopped with Ctrl-C (SIGINT)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEWERBILL = [sys.executable, "-m", "sewerbill"]
READY = "polling queues and streams"


@dataclass
class Child:
    """What the child printed until it was ready (``text``, ``gateway`` found in it), and
    once stopped, what it printed after (``rest``) and its exit code."""

    proc: subprocess.Popen[str]
    text: str = ""
    gateway: str | None = None
    rest: str = ""
    returncode: int | None = None


@contextmanager
def local_up(
    args: list[str], *, state: Path, ready_within: float, stderr_too: bool = False
) -> Iterator[Child]:
    """Run ``sewerbill local up ARGS`` with its state file at ``state``; yield once it
    prints that it polls (or stops printing, or ``ready_within`` seconds pass), then stop it.
    ``stderr_too``: the services' log lines are read with its output (else discarded)."""
    env = {**os.environ, "SEWERBILL_LOCAL_STATE": str(state), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(  # noqa: S603 - our own interpreter and package
        [*SEWERBILL, "local", "up", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if stderr_too else subprocess.DEVNULL,
        text=True,
    )
    child = Child(proc)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + ready_within
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if READY in line:
                break
        child.text = "".join(lines)
        found = re.search(r"gateway\s+(http://127\.0\.0\.1:\d+)", child.text)
        child.gateway = found.group(1) if found else None
        yield child
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            child.rest, _ = proc.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        child.returncode = proc.returncode
