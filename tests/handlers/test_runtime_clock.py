"""Use cases get their time from the composition root's clock: the system clock in AWS,
and the local runtime's simulated clock only when the runtime installs it in-process
(DESIGN: time is an input). No environment variable can move it."""

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from common import clock as clock_module
from common.clock import FixedClock, RuntimeClock


@pytest.fixture(autouse=True)
def _uninstall() -> Iterator[None]:
    yield
    clock_module.install(None)


def test_runtime_clock_follows_an_installed_clock() -> None:
    simulated = FixedClock(datetime(2025, 4, 1, 11, 0, tzinfo=UTC))
    clock_module.install(simulated)
    clock = RuntimeClock()
    assert clock.now() == datetime(2025, 4, 1, 11, 0, tzinfo=UTC)
    simulated.set(datetime(2025, 7, 1, 11, 0, tzinfo=UTC))  # the runtime moved on
    assert clock.now() == datetime(2025, 7, 1, 11, 0, tzinfo=UTC)


def test_no_environment_variable_moves_a_deployed_functions_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEWERBILL_SIMULATED_NOW", "2001-01-01T00:00:00+00:00")
    before = datetime.now(UTC)
    now = RuntimeClock().now()
    assert before <= now <= datetime.now(UTC)
    assert now.tzinfo is not None
