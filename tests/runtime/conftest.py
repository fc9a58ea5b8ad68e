"""The fixture stack for the local runtime's tests, started once per module on moto server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "handlers"))

from sewerbill.local import LocalRuntime  # noqa: E402

START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)  # a Monday, 03:00 in Chicago


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(FIXTURES / "template.yaml", start_time=START, stack_name="fixture") as runtime:
        yield runtime
