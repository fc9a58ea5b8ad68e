"""Benchmark of the local runtime's schedules and of the emulator's transactions (not a test).

    .venv/bin/python tests/benchmarks/bench_schedules.py [TRANSACTIONS]

1. Start-up of template.yaml on the embedded default (moto server in this process).
2. A simulated year of the template's schedules (2025: five daily schedules, two monthly
   and two quarterly = 1,857 firings), each drained before the next: firings/s, ms per
   firing and API calls per firing (every request moto serves, the handlers'; the runtime's
   own SQS calls go to moto's backend directly), wall and CPU seconds, and where the CPU
   went: inside the handlers, in the invoker around them (environment and module swap,
   cold starts) and in the rest of the runtime (clock, sends, receives, drains).
   Target (issue 7): the year in under 10 s.
3. Transactions of 2 items (a state item and its outbox item, as the services write them)
   on a growing table, moto as shipped beside moto with the runtime's shim (motoshim):
   transactions/s over the first and the last 200 of TRANSACTIONS (default 1,000; at least
   400, so the two windows write distinct keys), and the ratio of the two; the shim's rate
   stays flat, moto's falls with the table. TRANSACTIONS 0 runs the year only.
"""

from __future__ import annotations

import logging
import multiprocessing.forkserver
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# BENCH_ROOT: run this script on another checkout's code (a side-by-side with its own venv)
ROOT = Path(os.environ.get("BENCH_ROOT") or Path(__file__).resolve().parents[2])
for extra in (ROOT / "services", ROOT / "infra"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from moto.moto_server import werkzeug_app  # noqa: E402
from procs import cpu_seconds, workers  # noqa: E402

from sewerbill.local import LocalRuntime, motoshim  # noqa: E402
from sewerbill.local.emulator import Emulator  # noqa: E402

_requests = {"n": 0}
_serve = werkzeug_app.DomainDispatcherApplication.__call__


def _counted(self: Any, environ: Any, start_response: Any) -> Any:
    _requests["n"] += 1
    return _serve(self, environ, start_response)


werkzeug_app.DomainDispatcherApplication.__call__ = _counted  # type: ignore[method-assign]
_direct = motoshim._dynamodb_direct


def _counted_direct(request: Any, body: Any) -> Any:
    answer = _direct(request, body)
    if answer is not None:  # a DynamoDB request moto answered without its Flask application
        _requests["n"] += 1
    return answer


motoshim._dynamodb_direct = _counted_direct


def year_of_schedules() -> None:
    logging.disable(logging.ERROR)  # the handlers' rejections of cycles before the first tariff
    began = time.process_time()
    with LocalRuntime.start(
        ROOT / "template.yaml",
        start_time=datetime(2025, 1, 1, tzinfo=UTC),
        parameters={"TariffsDir": str(ROOT / "infra" / "tariffs")},
    ) as rt:
        # The forkserver imports the libraries (and, where the runtime preloads them, the
        # services' pure modules) while the stack is provisioned: its CPU is start-up's.
        server = multiprocessing.forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]
        startup_cpu = time.process_time() - began, cpu_seconds([server]) - time.process_time()
        print(
            f"start-up of template.yaml: {rt.startup_seconds:.2f} s wall, {sum(startup_cpu):.1f} s CPU "
            f"(this process {startup_cpu[0]:.1f} s, the forkserver's imports {startup_cpu[1]:.1f} s)"
        )
        isolate = rt.invoker.isolate
        spent = {"handlers": 0.0, "invoke": 0.0}
        if isolate == "modules":  # the handlers run in this process: time them apart
            _time_invocations(rt, spent)
        calls, wall, cpu = _requests["n"], time.perf_counter(), cpu_seconds(workers(rt))
        fired = rt.clock.advance(to=datetime(2026, 1, 1, tzinfo=UTC))
        wall, cpu = time.perf_counter() - wall, cpu_seconds(workers(rt)) - cpu
        n, calls = len(fired), _requests["n"] - calls
        print(
            f"a year of schedules (functions isolated by {isolate}): {n} firings in {wall:.1f} s wall "
            f"({cpu:.1f} s CPU, the functions' processes included): "
            f"{n / wall:.1f} firings/s, {wall / n * 1000:.0f} ms and {calls / n:.1f} API calls per firing, "
            f"{len(rt.invocations)} invocations, {len(rt.dead_letters)} dead letters"
        )
        cold = [w.cold_start_ms for w in rt.invoker._workers.values()]
        print(
            f"  {len(cold)} cold starts (workers' handler imports) {sum(cold) / 1000:.2f} s wall in all; "
            f"start-up and year together: {sum(startup_cpu) + cpu:.1f} s CPU"
        )
        around = spent["invoke"] - spent["handlers"]
        if isolate == "modules":
            print(
                f"  CPU: in the handlers {spent['handlers']:.1f} s, in the invoker around them {around:.1f} s "
                f"({around / len(rt.invocations) * 1000:.2f} ms an invocation), "
                f"the rest of the runtime {cpu - spent['invoke']:.1f} s"
            )
    logging.disable(logging.NOTSET)


def _time_invocations(rt: Any, spent: dict[str, float]) -> None:
    """CPU seconds inside the handlers and inside `Invoker.invoke` (which adds the function's
    environment and module swap and its cold start), measured by wrapping both here."""
    invoker = rt.invoker
    invoke, handler = invoker.invoke, invoker.handler

    def timed_handler(logical_id: str) -> Any:
        inner = handler(logical_id)

        def run(event: Any, context: Any) -> Any:
            began = time.process_time()
            try:
                return inner(event, context)
            finally:
                spent["handlers"] += time.process_time() - began

        return run

    def timed_invoke(*args: Any, **kwargs: Any) -> Any:
        began = time.process_time()
        try:
            return invoke(*args, **kwargs)
        finally:
            spent["invoke"] += time.process_time() - began

    invoker.handler = timed_handler
    invoker.invoke = timed_invoke


def transactions(count: int) -> None:
    emulator = Emulator.start("thread")
    try:
        ddb = emulator.client("dynamodb")
        print(f"{count} transactions of 2 items on a growing table (transactions/s):")
        print(f"{'':24}{'first 200':>12}{'last 200':>12}{'last/first':>12}")
        for label, shim in (("moto as shipped", False), ("moto + motoshim", True)):
            (motoshim.install if shim else motoshim.uninstall)()
            table = f"bench-{int(shim)}"
            ddb.create_table(
                TableName=table,
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                BillingMode="PAY_PER_REQUEST",
                StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
            )
            rates = []
            for window in (range(0, 200), range(max(200, count - 200), max(400, count))):
                if window.start:  # grow the table to where the last window starts
                    for n in range(200, window.start):
                        _transact(ddb, table, n)
                began = time.perf_counter()
                for n in window:
                    _transact(ddb, table, n)
                rates.append(len(window) / (time.perf_counter() - began))
            print(f"{label:24}{rates[0]:>12.0f}{rates[1]:>12.0f}{rates[1] / rates[0]:>12.2f}")
    finally:
        motoshim.install()
        emulator.stop()


def _transact(ddb: Any, table: str, n: int) -> None:
    new = "attribute_not_exists(pk)"
    ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": table, "Item": {"pk": {"S": f"READ#{n}"}}, "ConditionExpression": new}},
            {"Put": {"TableName": table, "Item": {"pk": {"S": f"OUTBOX#{n}"}}, "ConditionExpression": new}},
        ]
    )


if __name__ == "__main__":
    year_of_schedules()
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    if count:  # 0: the year only (a profile of the year)
        transactions(count)
