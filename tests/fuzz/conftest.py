"""The hostile import suite (issue 27): every import kind's reader under generated files.

Each property draws files mixing valid rows with mutated ones (``fuzz_cells``) and runs the
kind's own use case on in-memory fakes (no socket, no moto: the pure tier). Hypothesis runs
derandomized under ``make test`` (tests/conftest.py's ``ci`` profile); each property's
``max_examples`` keeps the whole directory well under a minute on one core.

At the end of the session the inputs tried per kind are printed (``fuzz_cells.TRIED``), so
a run shows how much each reader was exercised, not just that it passed, and how many
lines were taken in (the lines the column rules were checked on). Under pytest-xdist each
worker hands its counts to the controller, which prints the sum (tests/conftest.py).
"""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "metering"))  # metering's in-memory Utility (support.py)

import fuzz_cells  # noqa: E402


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its counts to the controller (tests/conftest.py adds them up)."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["fuzz_tally"] = {"tried": dict(fuzz_cells.TRIED), "taken": dict(fuzz_cells.TAKEN)}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not fuzz_cells.TRIED:  # nothing ran here (or this is xdist's controller)
        return
    terminalreporter.section("hostile import files tried, per kind")
    for kind, n in sorted(fuzz_cells.TRIED.items()):
        taken = f"{fuzz_cells.TAKEN[kind]:>7} lines taken in" if kind in fuzz_cells.TAKEN else ""
        terminalreporter.write_line(f"{kind:<40} {n:>6} files {taken}".rstrip())
    total, taken = sum(fuzz_cells.TRIED.values()), sum(fuzz_cells.TAKEN.values())
    terminalreporter.write_line(f"{'total':<40} {total:>6} files {taken:>7} lines taken in")
