"""The fault-injection harness's table (`fault_harness`): printed at the end of the session
and, when ``$SEWERBILL_FAULTS_TABLE`` names a file, appended to it (CI keeps it)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fault_harness import TABLE  # noqa: E402


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TABLE:
        return
    lines = ["| flow | kill point | lost | doubled |", "|---|---|---|---|"]
    lines += [f"| {flow} | {point} | {lost} | {doubled} |" for flow, point, lost, doubled in TABLE]
    terminalreporter.write_sep("-", "fault injection: flow x kill point -> lost / doubled")
    for line in lines:
        terminalreporter.write_line(line)
    target = os.environ.get("SEWERBILL_FAULTS_TABLE")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
