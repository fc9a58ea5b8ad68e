"""Benchmark of the local runtime's two ways to run functions, side by side (not a test).

    .venv/bin/python tests/benchmarks/bench_invoker.py [FIRINGS_UNTIL] [SQS_MESSAGES]

For isolate="process" (a worker process per function) and isolate="modules" (every
function in this process), in one run: start-up of template.yaml; the cold starts; the
template's schedules from 2025-01-01 to FIRINGS_UNTIL (default 2025-04-01: 90 daily
assessments, 6 monthly and 2 quarterly cycles), each drained before the next (ms per
firing); SQS_MESSAGES (default 100) ConsumptionDetermined events put on the bus one at a
time and drained (ms per SQS invocation, wall and inside the invoker). Wall seconds beside
CPU seconds of the runtime's process and of its workers (read from /proc), since the
machine is shared.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for extra in (ROOT / "services", ROOT / "infra"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from procs import cpu_seconds  # noqa: E402

from sewerbill.local import LocalRuntime  # noqa: E402


def _cpu(pids: list[int | None]) -> float:
    """CPU seconds of this process plus those of the live workers `pids`."""
    return cpu_seconds(pids)


def run(isolate: str, until: datetime, messages: int) -> dict[str, float]:
    logging.disable(logging.ERROR)  # the handlers' rejections of cycles before the first tariff
    with LocalRuntime.start(
        ROOT / "template.yaml",
        start_time=datetime(2025, 1, 1, tzinfo=UTC),
        parameters={"TariffsDir": str(ROOT / "infra" / "tariffs"), "Stage": f"bench{isolate}"},
        isolate=isolate,
        gateway=False,
    ) as rt:
        out = {"start-up s": rt.startup_seconds}

        def pids() -> list[int | None]:
            return list(rt.invoker.worker_pids().values())

        wall, cpu = time.perf_counter(), _cpu(pids())
        fired = rt.clock.advance(to=until)
        out["firings"] = len(fired)
        out["ms per firing (wall)"] = (time.perf_counter() - wall) / len(fired) * 1000
        out["ms per firing (CPU)"] = (_cpu(pids()) - cpu) / len(fired) * 1000
        consumer = "BillingOnConsumptionDeterminedFunction"
        rt.put_event("sewerbill.metering", "ConsumptionDetermined", _consumption(-1), bus="EventBus")
        rt.drain()  # its cold start, out of the measurement
        before = len(rt.invocations_of(consumer))
        wall, cpu = time.perf_counter(), _cpu(pids())
        for n in range(messages):
            rt.put_event("sewerbill.metering", "ConsumptionDetermined", _consumption(n), bus="EventBus")
            rt.drain()
        runs = rt.invocations_of(consumer)[before:]
        out["ms per SQS message (wall)"] = (time.perf_counter() - wall) / messages * 1000
        out["ms per SQS message (CPU)"] = (_cpu(pids()) - cpu) / messages * 1000
        out["ms per SQS invocation (invoker)"] = sum(r.duration_ms for r in runs) / max(1, len(runs))
        out["failed invocations"] = sum(1 for r in runs if r.error)
        out["workers"] = len(pids())
    logging.disable(logging.NOTSET)
    return out


def _consumption(n: int) -> dict[str, object]:
    return {
        "schema_version": 1,
        "event_id": f"evt-bench-{n}",
        "occurred_at": "2025-02-01T00:00:00Z",
        "correlation_id": f"bench-{n}",
        "tenant": "grafton-sewer",
        "account_id": f"GR-BENCH-{n}",
        "period_start": "2025-01-01",
        "period_end": "2025-02-01",
        "volume_gal": 1000 + n,
        "source_file": "reads/bench.csv",
    }


def main() -> None:
    until = datetime.fromisoformat(sys.argv[1]).replace(tzinfo=UTC) if len(sys.argv) > 1 else None
    messages = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    # The first run also pays moto's first imports: ORDER=modules,process puts "modules" first.
    order = os.environ.get("ORDER", "process,modules").split(",")
    results = {mode: run(mode, until or datetime(2025, 4, 1, tzinfo=UTC), messages) for mode in order}
    print(f"{'':34}{'process':>12}{'modules':>12}{'process/modules':>17}")
    for key in results["process"]:
        p, m = results["process"][key], results["modules"][key]
        ratio = f"{p / m:>17.2f}" if m else ""
        print(f"{key:34}{p:>12.1f}{m:>12.1f}{ratio}")


if __name__ == "__main__":
    main()
