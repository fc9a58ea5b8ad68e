"""The fixture stack for the local runtime's tests, started once per module on moto server;
and the emulator alone (moto in this process, with the runtime's shim) for the tests that
compare the shim with moto as shipped."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "handlers"))

from sewerbill.local import LocalRuntime, motoshim  # noqa: E402
from sewerbill.local.emulator import Emulator  # noqa: E402

START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)  # a Monday, 03:00 in Chicago


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(FIXTURES / "template.yaml", start_time=START, stack_name="fixture") as runtime:
        yield runtime


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    """moto server in a thread of this process, with the runtime's shim; the shim is put back
    afterwards if a test left moto as shipped."""
    emulator = Emulator.start("thread")
    try:
        yield emulator
    finally:
        motoshim.install()
        emulator.stop()
