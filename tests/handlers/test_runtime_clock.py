"""Use cases get their time from the composition root's clock, which follows the local
runtime's simulated clock when one is set (DESIGN: time is an input)."""

from datetime import UTC, datetime

from common.config import RuntimeClock


def test_runtime_clock_follows_the_simulated_time_when_set() -> None:
    env = {"SEWERBILL_SIMULATED_NOW": "2025-04-01T11:00:00+00:00"}
    clock = RuntimeClock(env)
    assert clock.now() == datetime(2025, 4, 1, 11, 0, tzinfo=UTC)
    env["SEWERBILL_SIMULATED_NOW"] = "2025-07-01T11:00:00+00:00"  # the runtime moved on
    assert clock.now() == datetime(2025, 7, 1, 11, 0, tzinfo=UTC)


def test_runtime_clock_is_the_system_clock_in_aws() -> None:
    before = datetime.now(UTC)
    now = RuntimeClock({}).now()
    assert before <= now <= datetime.now(UTC)
    assert now.tzinfo is not None
