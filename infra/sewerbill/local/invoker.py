"""Run each function as Lambda does: in its own environment, one invocation at a time.

Each function gets what Lambda gives it: its own environment variables (the template's
plus Lambda's), its own cold start (its handler imported once, so module-level state such
as a composition root is its own), a context object, and, locally, the runtime's simulated
clock. Two ways to keep functions apart (`isolate`, or `SEWERBILL_LOCAL_ISOLATE`):

- ``"process"`` (the default): one worker process per function (`sewerbill.local.worker`),
  forked from a forkserver that has imported boto3, botocore, pydantic, Powertools and the
  other heavy libraries once, and, when the functions share one code folder, the folder's
  pure modules (each service's events and domain: `code_preload`), so a worker starts in
  tens of milliseconds and imports only its handler's outer layers (a year of schedules'
  seven cold starts took 5.3-5.9 s of wall time before that, 1.0-1.2 s after, against
  1.0-1.1 s more CPU in the forkserver at start-up; `tests/benchmarks/bench_schedules.py`). A function's environment and modules cannot reach another's: they are in
  another process, as in Lambda. Its boto3 clients reach the emulator through the endpoint
  variables of its environment (`Emulator.function_env`), as a deployed function reaches
  AWS; when moto runs in the runtime's process, the calls to its endpoint travel over the
  worker's pipe to moto's application there (no HTTP server hop: over HTTP a call cost
  about twice as much), any other endpoint over HTTP. The runtime sends the event, the
  simulated time and any extra variables; the worker answers the result, the error and
  the duration. Workers stop with the runtime (and on their own if it dies: their pipe
  closes).
- ``"modules"``: every function in this process, one at a time under a lock, with
  `os.environ` and the modules of its code folder swapped in per invocation: kept apart
  by discipline, not by construction. Its boto3 calls to moto in this process skip HTTP
  (`motoshim.serve_in_process`). For tests that reach into a handler's modules (`module`,
  `call_in_function`).

Why "process" is the default: it is the only one that keeps functions apart by
construction, and it costs about what "modules" costs. Measured side by side on a shared
2-core machine (issue 6's closing note): `tests/benchmarks/bench_invoker.py` gives a
schedule firing 66 ms against 57 ms and an SQS message 33 ms against 33 ms (CPU, workers
included; over HTTP instead of the pipe a message cost about twice as much), start-up
0.6-2.4 s more (the forkserver's imports); the 12 runtime test modules, each in its own
process, took 1,265 s in "process" and 1,289 s in "modules" (run side by side).

Limits (process isolation only; `limits`, or `SEWERBILL_LOCAL_LIMITS`): an invocation is
held to its function's Timeout and MemorySize from the template, so what fails in Lambda
fails the same way here (issue 27). The runtime watches the worker while it waits for its
answer (`_Budget`: `conn.poll` with a timeout, every `MEMORY_POLL_S` and at each message):

- Timeout: past ``Timeout`` seconds of wall time (the AWS calls it makes included, as in
  Lambda) the worker is killed (SIGKILL) and the invocation fails with
  ``Sandbox.Timedout: Task timed out after N.NN seconds``.
- Memory: when the worker's resident set exceeds ``MemorySize`` MB, at a poll or when it
  hands back its answer (so a function that ends holding too much is caught however fast
  it ran), the worker is killed and the invocation fails with ``Runtime.OutOfMemory:
  Runtime exited with error: signal: killed``.

Either way the event source sees a failed invocation, as it sees Lambda's (an SQS message is
redelivered, then dead-lettered after its queue's maxReceiveCount; a stream batch retried
from its checkpoint; a route answered 504, see `sewerbill.local.gateway`), and the next
invocation is a cold start in a new process.

The measure of memory is the worker's whole RSS (`/proc/<pid>/statm`'s resident pages),
the pages it shares with the forkserver counted in full, as a Lambda sandbox, which shares
nothing, holds them itself. Measured on the real template (a 2-core machine, every
function cold-started once): the forkserver 88 MB RSS; a fresh worker 77-81 MB RSS, 17-46
MB PSS, 12-20 MB USS (its own pages only), against MemorySize 512 or 1024 MB (256 for the
portal's triggers, which the runtime does not run). USS alone would let a worker hold the
preloaded libraries for free (about 70 MB a Lambda process pays for too) and would grow
with each copy-on-write of a shared page; RSS overstates what Lambda would count only by
the preloaded modules the function's artifact lacks (a few MB of other services' domains),
so a function within its MemorySize here is within it in Lambda, with that margin.
statm costs about 35 us a read (smaps_rollup, for PSS and USS, 4-7 ms on a loaded machine),
so it is read at every answer. `/proc` is Linux's: elsewhere memory is not watched (logged
once). Functions in this process (isolate="modules") have no limits: nothing can be killed.

``SEWERBILL_LOCAL_LIMITS``: unset or ``on``: the template's limits (the default, in tests and
`local up`); ``off``: none (a debugger paused in a handler); a number: both limits scaled by
it (``3``: three times each Timeout and MemorySize, for a very slow machine).

Both modes answer `invoke`, `configure` (a function's variables, or the system clock as
deployed: the next invocation is a cold start) and `call_entry` (call something the
handler's module holds, e.g. its resolver's OpenAPI document, in the function's own
environment).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import select
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, Protocol

from sewerbill.local import heap, worker
from sewerbill.local.stack import Function
from sewerbill.local.worker import FakeLambdaContext

log = logging.getLogger("sewerbill.local")


@dataclass
class Invocation:
    function: str
    trigger: str  # sqs, dynamodb, http, schedule, eventbridge
    records: int
    failures: int = 0
    error: str | None = None
    duration_ms: float = 0.0
    at: datetime = field(default_factory=lambda: datetime.now(UTC))
    result: Any = None


ISOLATION_ENV = "SEWERBILL_LOCAL_ISOLATE"
ISOLATIONS = ("process", "modules")
LIMITS_ENV = "SEWERBILL_LOCAL_LIMITS"
# How often a running invocation's memory is read while the runtime waits for its worker.
MEMORY_POLL_S = 0.05
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
# Imported once by the forkserver, before it forks a worker: the libraries handlers import
# that cost most to import (about 4 s in all); a worker then imports only its own code.
# Only libraries: a function's own modules (its code folder) are imported by its worker.
PRELOAD = [
    "sewerbill.local.worker",
    "boto3",
    "boto3.dynamodb.types",
    "botocore.exceptions",
    "sewerbill.local.botodata",  # botocore's data files, read once for every worker's clients
    "pydantic",
    "pydantic_settings",
    "yaml",
    "aws_lambda_powertools",
    "aws_lambda_powertools.event_handler",
    "aws_lambda_powertools.event_handler.openapi.params",
    "aws_lambda_powertools.logging",
    "aws_lambda_powertools.metrics",
    "aws_lambda_powertools.utilities.batch",
    "aws_lambda_powertools.utilities.data_classes.sqs_event",
    "aws_lambda_powertools.utilities.parser",
    "aws_lambda_powertools.utilities.parser.models",
    "aws_lambda_powertools.event_handler.openapi.models",
    "aws_lambda_powertools.tracing",
    "aws_xray_sdk.core",  # Tracer's provider
    "reportlab.pdfgen.canvas",  # notices' PDFs
    "reportlab.lib.pagesizes",
    "reportlab.pdfbase.pdfmetrics",
    "jinja2",  # notices' templates
]


class ColdStartFailed(RuntimeError):
    """A function's handler could not be imported (Lambda's Runtime.ImportModuleError)."""


def isolation(isolate: str | None) -> str:
    """The mode asked for, else SEWERBILL_LOCAL_ISOLATE's, else the default ("process")."""
    mode = isolate or os.environ.get(ISOLATION_ENV) or "process"
    if mode not in ISOLATIONS:
        raise ValueError(f"isolate must be one of {ISOLATIONS}, got {mode!r}")
    return mode


def limits_scale(limits: str | float | None = None) -> float | None:
    """The factor applied to every function's Timeout and MemorySize (None: no limits), from
    `limits` or else SEWERBILL_LOCAL_LIMITS: unset, "on" or "1": 1.0; "off" or "0": None; a
    positive number: that factor."""
    value = limits if limits is not None else os.environ.get(LIMITS_ENV)
    if value is None:
        return 1.0
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("", "on", "true", "yes"):
            return 1.0
        if text in ("off", "false", "no", "none"):
            return None
        try:
            value = float(text)
        except ValueError:
            raise ValueError(
                f"{LIMITS_ENV} must be on, off or a positive number, got {limits or text!r}"
            ) from None
    if value < 0:
        raise ValueError(f"{LIMITS_ENV} must be on, off or a positive number, got {value!r}")
    return float(value) if value > 0 else None


def resident_bytes(pid: int) -> int | None:
    """The resident set of process `pid` in bytes (its statm's second field), None where
    /proc cannot tell (not Linux, or the process is gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def preload_in_process(isolate: str | None) -> None:
    """Functions run in this process (isolate="modules"): import the libraries the forkserver
    preloads for the functions' processes (`PRELOAD`), once, when the runtime starts, so that
    a cold start here imports what a worker's does (its own code), not also the libraries
    (X-Ray's SDK, Powertools' parser models, pydantic-settings: a tenth of a 10,000-account
    cycle's first invocations). A function's own modules are still its own, imported at its
    cold start. Nothing in `PRELOAD` reads a function's configuration when imported."""
    if isolation(isolate) != "modules":
        return
    for name in PRELOAD:
        importlib.import_module(name)


def start_forkserver(isolate: str | None, code: Iterable[tuple[Path | None, str]] = ()) -> None:
    """Start the forkserver (its imports take seconds) if functions will run in processes:
    the runtime calls this before it provisions the stack, so the two overlap. `code`: each
    function's code folder and handler; when they share one folder (a SAM template's Globals
    CodeUri), the forkserver also imports that folder's pure modules (`code_preload`), with
    the folder on its path. A forkserver already running is kept as it is."""
    if isolation(isolate) != "process":
        return
    functions = list(code)
    folders = {folder for folder, _ in functions}
    folder = folders.pop() if len(folders) == 1 else None
    modules = code_preload(folder, [handler for _, handler in functions]) if folder is not None else []
    _forkserver(modules)
    added = folder is not None and bool(modules) and str(folder) not in sys.path
    if added:  # the forkserver starts with this process's path (multiprocessing passes it)
        sys.path.append(str(folder))
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        if added:
            sys.path.remove(str(folder))


def code_preload(folder: Path, handlers: Iterable[str]) -> list[str]:
    """The modules of a code folder that the forkserver imports once for every function, so
    that a worker's cold start imports only the rest of its handler (the pydantic models of
    a service's events and domain were most of a cold start: 0.5 s of billing's 0.66 s).

    Only modules that read nothing of a function's configuration when imported, so that a
    worker forked with them behaves as one that imported them itself: each handler's
    package's `events` module and the modules of its `domain` package (pure by the
    import-linter contract "pure-domains": no os, no AWS SDK, no Powertools), and
    `common.events` and `common.messages` (pydantic models; they read no environment).
    Never a handler, a composition root, an adapter, `common.observability` or
    `common.config`: those read the function's environment variables at import or build
    clients. The code folder is the function's deployment package (a template's shared
    CodeUri holds every service), so a worker has these modules on disk as deployed."""
    modules: list[str] = []
    if (folder / "common").is_dir():
        modules += [
            f"common.{name}" for name in ("events", "messages") if (folder / "common" / f"{name}.py").exists()
        ]
    for top in sorted({handler.partition(".")[0] for handler in handlers}):
        if (folder / top / "events.py").exists():
            modules.append(f"{top}.events")
        domain = folder / top / "domain"
        if (domain / "__init__.py").exists():
            for path in sorted(domain.rglob("*.py")):
                parts = path.relative_to(folder).with_suffix("").parts
                modules.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return modules


# Imported last: what the forkserver preloaded, frozen out of the workers' collections.
FROZEN = "sewerbill.local.preloaded"
_preload: list[str] = [*PRELOAD, FROZEN]


def _forkserver(code_modules: list[str] | None = None) -> Any:
    """The forkserver context, its preload the libraries and, once set, the code's modules."""
    global _preload
    if code_modules is not None:
        _preload = PRELOAD + [m for m in code_modules if m not in PRELOAD] + [FROZEN]
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_preload)
    return context


_main_lock = threading.Lock()


@contextmanager
def _main_not_imported_again() -> Iterator[None]:
    """multiprocessing imports the parent's __main__ in each child (a script, `sewerbill`'s
    console script) unless __main__ names itself a package's `__main__`: say so while a
    worker starts, so it imports its handler and nothing of the runtime's caller."""
    main = sys.modules["__main__"]
    with _main_lock:
        had, spec = hasattr(main, "__spec__"), getattr(main, "__spec__", None)
        main.__spec__ = SimpleNamespace(name="__main__")  # type: ignore[assignment]
        try:
            yield
        finally:
            if had:
                main.__spec__ = spec
            else:
                del main.__spec__


class _Worker:
    """A function's process and the pipe to it; one invocation at a time."""

    def __init__(self, fn: Function, env: dict[str, str]) -> None:
        context = _forkserver()
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=worker.serve,
            args=(child, {**_spec(fn), "forward": _served_here(env.get("AWS_ENDPOINT_URL"))}, env),
            name=f"lambda:{fn.logical_id}",
            daemon=True,
        )
        self.lock = threading.Lock()
        self.busy = threading.Lock()  # held by the invocation it runs (`Invoker._checkout`)
        self.exited = False
        with _main_not_imported_again():
            self.process.start()
        child.close()
        kind, detail = self._receive()
        if kind != "ready":
            self.stop()
            raise ColdStartFailed(f"{fn.logical_id}: its handler {fn.handler} did not import:\n{detail}")
        self.cold_start_ms: float = detail

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def ask(
        self, message: tuple[Any, ...], watch: FaultWatch | None = None, budget: _Budget | None = None
    ) -> Any:
        with self.lock:
            try:
                worker.send(self.conn, message)
            except OSError:
                self.exited = True
                raise WorkerExited("its pipe is closed") from None
            if budget is not None:
                budget.start()
            return self._receive(watch, budget)

    def _receive(self, watch: FaultWatch | None = None, budget: _Budget | None = None) -> Any:
        """The worker's answer; meanwhile, the AWS calls it makes (see worker). ``watch`` (a
        fault plan's, `sewerbill.local.faults`) is asked before each call is answered and
        before the answer is taken: when it says so, the worker is killed there (SIGKILL).
        ``budget``: the invocation's Timeout and MemorySize, enforced while waiting and on
        the answer (the worker killed past either: `TimedOut`, `OutOfMemory`)."""
        try:
            while True:
                if budget is not None:
                    budget.wait(self)
                message = self.conn.recv()
                if message[0] == "done":
                    if budget is not None:
                        budget.check_memory(self)
                    if watch is not None and watch.kill_before_ack():
                        self._kill(watch)
                    return message[1]
                if watch is not None and watch.kill_before_call(_call_name(*message[1:4])):
                    self._kill(watch)
                worker.send(self.conn, _aws_call(*message[1:]))
        except (EOFError, OSError):
            self.exited = True
            raise WorkerExited(f"exit code {self.process.exitcode}") from None

    def _kill(self, watch: FaultWatch) -> None:
        """End the process as `kill -9` would, where the fault plan says (its call or its ack)."""
        self.process.kill()
        self.process.join(timeout=5)
        self.exited = True
        raise WorkerExited(f"killed by the fault plan {watch.describe()} (exit code {self.process.exitcode})")

    def end(self, reason: WorkerExited) -> None:
        """End the process as Lambda ends a sandbox past a limit (SIGKILL), raising `reason`."""
        self.process.kill()
        self.process.join(timeout=5)
        self.exited = True
        raise reason

    @property
    def usable(self) -> bool:
        """Not exited: what `Process.is_alive()` answers, asked of the process's sentinel with
        one `select` while its exit is unknown and the sentinel is not readable (is_alive then
        answers True after building a selector for the same question, a fiftieth of a
        firing's work in the runtime); otherwise is_alive itself, which reads the exit code."""
        if self.exited:
            return False
        popen = getattr(self.process, "_popen", None)
        if popen is not None and popen.returncode is None:
            try:
                readable, _, _ = select.select([self.process.sentinel], [], [], 0)
            except (OSError, ValueError):
                readable = [True]
            if not readable:
                return True
        return self.process.is_alive()

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        self.conn.close()


def _served_here(endpoint: str | None) -> str | None:
    """`endpoint` if moto answers it in this process (motoshim.serve_in_process), else None."""
    shim = sys.modules.get("sewerbill.local.motoshim")
    if not endpoint or shim is None:
        return None
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint in shim._clients else None


# One AWS call at a time on moto in this process: each is atomic, as a DynamoDB item's
# conditional write or an SQS receive is on AWS (moto's backends check and then change, with
# no lock of their own), while functions running at once (a gateway's requests, concurrent
# sources: `LocalRuntime`'s concurrency) interleave between their calls, as on AWS.
EMULATOR_LOCK = threading.RLock()


def _aws_call(method: str, url: str, headers: dict[str, str], body: bytes) -> Any:
    """A worker's AWS call, answered by moto in this process when the runtime started it
    here (motoshim's in-process transport, the same application its server runs); None
    otherwise (the worker then sends it over HTTP)."""
    from sewerbill.local import motoshim

    with EMULATOR_LOCK:
        return motoshim._answer_in_process(method, url, headers, body)


class Serialized:
    """`target` (the runtime's own SQS client, a stream reader) with each call made under
    `EMULATOR_LOCK`, so the runtime's pollers, running at once, and the workers' calls reach
    moto one at a time; attributes that are not methods are read as they are (each time:
    `DirectSqs.default_events` changes with each receive), a method's wrapper made once."""

    def __init__(self, target: Any) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value) or isinstance(value, type):
            return value

        def locked(*args: Any, **kwargs: Any) -> Any:
            with EMULATOR_LOCK:
                return value(*args, **kwargs)

        setattr(self, name, locked)  # found on the instance from now on, without __getattr__
        return locked

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with EMULATOR_LOCK:
            return self._target(*args, **kwargs)


def _call_name(method: str, url: str, headers: dict[str, str]) -> str:
    """A worker's AWS call as a fault plan's trace names it: JSON protocols' target, else S3's
    method and path."""
    target = headers.get("X-Amz-Target") or headers.get("x-amz-target")
    if target:
        return target.rpartition(".")[2] or target
    return f"{method} {url.split('?', 1)[0].split('/', 3)[-1][:60]}"


class WorkerExited(RuntimeError):
    """A function's process ended while the runtime was waiting on it."""

    error_type = "Runtime.ExitError"  # what the invocation's error says first, as Lambda's


class TimedOut(WorkerExited):
    """The runtime killed a worker that ran past its function's Timeout."""

    error_type = "Sandbox.Timedout"


class OutOfMemory(WorkerExited):
    """The runtime killed a worker whose resident set grew past its function's MemorySize."""

    error_type = "Runtime.OutOfMemory"


class _Budget:
    """One invocation's limits (see the module's docstring): ``timeout_s`` of wall time from
    `start` and ``memory_mb`` of resident set; None: that one is not enforced."""

    _unwatched_logged = False

    def __init__(self, timeout_s: float | None, memory_mb: float | None) -> None:
        self.timeout_s = timeout_s
        self.memory_bytes = None if memory_mb is None else int(memory_mb * 1024 * 1024)
        self.deadline = float("inf")
        self.next_check = float("inf")

    def start(self) -> None:
        now = time.monotonic()
        if self.timeout_s is not None:
            self.deadline = now + self.timeout_s
        if self.memory_bytes is not None:
            self.next_check = now + MEMORY_POLL_S

    def wait(self, proc: _Worker) -> None:
        """Return when the worker has a message; kill it meanwhile past a limit."""
        while True:
            now = time.monotonic()
            if now >= self.deadline:
                proc.end(TimedOut(f"Task timed out after {self.timeout_s:.2f} seconds"))
            if now >= self.next_check:
                self.check_memory(proc)
                self.next_check = now + MEMORY_POLL_S
            until = min(self.deadline, self.next_check)
            if proc.conn.poll(None if until == float("inf") else max(0.0, until - now)):
                return

    def check_memory(self, proc: _Worker) -> None:
        if self.memory_bytes is None or proc.pid is None:
            return
        used = resident_bytes(proc.pid)
        if used is None:
            if not _Budget._unwatched_logged:
                _Budget._unwatched_logged = True
                log.warning("memory limits are not enforced: /proc/<pid>/statm cannot be read here")
            self.memory_bytes = None
            return
        if used > self.memory_bytes:
            proc.end(
                OutOfMemory(
                    "Runtime exited with error: signal: killed "
                    f"(resident {used / 2**20:.0f} MB, MemorySize {self.memory_bytes / 2**20:.0f} MB)"
                )
            )


class FaultWatch(Protocol):
    """One invocation's fault plan (`sewerbill.local.faults`): asked by the runtime before it
    answers each AWS call the worker makes, and before it takes the worker's answer."""

    def kill_before_call(self, name: str) -> bool:
        """``name``: the call about to be answered (its X-Amz-Target, or method and path)."""
        ...

    def kill_before_ack(self) -> bool: ...

    def describe(self) -> str: ...


class FaultPlans(Protocol):
    def watch(self, function: str) -> FaultWatch | None:
        """The watch of this invocation of ``function`` (None: it runs without faults)."""
        ...


class Invoker:
    def __init__(
        self,
        functions: dict[str, Function],
        base_env: Callable[[], dict[str, str]],
        region: str,
        account: str,
        isolate: str | None = None,
        clock: Any = None,
        limits: str | float | None = None,
    ) -> None:
        self.functions = functions
        self.isolate = isolation(isolate)
        # the factor on each function's Timeout and MemorySize (None: not enforced); read
        # at each invocation, so a test may change it between two
        self.limits = limits_scale(limits)
        start_forkserver(self.isolate, [(fn.code_dir, fn.handler) for fn in functions.values()])
        # The simulated clock: sent with each invocation (process) or installed into each
        # function's own copy of common.clock at its cold start (modules). Deployed code
        # never installs one: it runs on the system clock.
        self.clock = clock
        self.base_env = base_env
        self.region = region
        self.account = account
        self.lock = threading.RLock()
        self.invocations: list[Invocation] = []
        self._overrides: dict[str, dict[str, str]] = {}  # configure(): variables per function
        self._system_clock: set[str] = set()  # configure(): functions on the system clock
        self._workers: dict[str, _Worker] = {}
        # concurrent: invocations of one function at once, each in a worker of its own (the
        # first in `_workers`, the others here), as Lambda scales out a function
        self.concurrent = False
        self._spares: dict[str, list[_Worker]] = {}
        self._starting = threading.Lock()
        self._handlers: dict[str, Callable[..., Any]] = {}
        self._modules: dict[str, dict[str, ModuleType]] = {}  # function -> its private modules
        self._entry_modules: dict[str, ModuleType] = {}
        self._tops: dict[Path, frozenset[str]] = {}
        self._specs: dict[str, dict[str, Any]] = {}
        # sewerbill.local.faults: where to kill a function's worker (tests only; None: never)
        self.faults: FaultPlans | None = None

    # --- environment ------------------------------------------------------------------
    def environment(self, fn: Function) -> dict[str, str]:
        env = dict(self.base_env())
        env.update(
            {
                "AWS_LAMBDA_FUNCTION_NAME": fn.name,
                "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(fn.memory_mb),
                "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{fn.name}",
                "AWS_EXECUTION_ENV": "AWS_Lambda_python3.11_local",
                "_HANDLER": fn.handler,
            }
        )
        env.update(fn.environment)
        env.update(self._overrides.get(fn.logical_id, {}))
        return env

    def configure(
        self, logical_id: str, environment: dict[str, str] | None = None, simulated_clock: bool = True
    ) -> None:
        """Change a function's configuration, as UpdateFunctionConfiguration does: its extra
        `environment` variables (None: none) and whether it runs on the runtime's simulated
        clock (False: the system clock, as deployed). Its next invocation is a cold start."""
        with self.lock:
            self._overrides[logical_id] = dict(environment or {})
            (self._system_clock.discard if simulated_clock else self._system_clock.add)(logical_id)
            retired = self._workers.pop(logical_id, None)
            spares = self._spares.pop(logical_id, [])
            self._handlers.pop(logical_id, None)
            self._entry_modules.pop(logical_id, None)
            self._modules.pop(logical_id, None)
        for old in [retired, *spares]:
            if old is not None:
                old.stop()

    def _now(self, logical_id: str) -> datetime | None:
        if self.clock is None or logical_id in self._system_clock:
            return None
        now: datetime = self.clock.now()
        return now

    def _spec(self, fn: Function) -> dict[str, Any]:
        """The function's spec for its context objects, built once (not per invocation)."""
        spec = self._specs.get(fn.logical_id)
        if spec is None:
            spec = self._specs[fn.logical_id] = _spec(fn)
        return spec

    # --- process isolation ------------------------------------------------------------
    def _worker(self, logical_id: str) -> _Worker:
        found = self._workers.get(logical_id)
        if found is not None and found.usable:
            return found
        with self._starting:
            found = self._workers.get(logical_id)
            if found is not None and not found.usable:  # it died: a cold start
                found.stop()
                found = None
            if found is None:
                fn = self.functions[logical_id]
                env = {k: v for k, v in os.environ.items() if k in worker.PASSED_THROUGH}
                env.update(self.environment(fn))
                found = self._workers[logical_id] = _Worker(fn, env)
            return found

    def _checkout(self, logical_id: str) -> _Worker:
        """A worker of the function for one invocation, its `busy` lock taken. One after
        another (not `concurrent`): the function's one worker, waited for while it works.
        Concurrent: the first one not busy, else a new one (a cold start), as Lambda gives
        a function another execution environment while each it has is busy."""
        first = self._worker(logical_id)
        if not self.concurrent:
            first.busy.acquire()
            return first
        if first.busy.acquire(blocking=False):
            return first
        with self._starting:
            spares = self._spares.setdefault(logical_id, [])
            for spare in list(spares):
                if not spare.usable:
                    spares.remove(spare)
                    spare.stop()
                elif spare.busy.acquire(blocking=False):
                    return spare
            fn = self.functions[logical_id]
            env = {k: v for k, v in os.environ.items() if k in worker.PASSED_THROUGH}
            env.update(self.environment(fn))
            spare = _Worker(fn, env)
            spare.busy.acquire()
            spares.append(spare)
            return spare

    def workers_started(self, logical_id: str) -> int:
        """How many workers the function has now (more than one only when `concurrent`)."""
        return int(logical_id in self._workers) + len(self._spares.get(logical_id, []))

    def worker_pids(self) -> dict[str, int | None]:
        """The process of each function started so far (isolate="process")."""
        return {lid: w.pid for lid, w in self._workers.items()}

    def stop(self) -> None:
        """Stop every function's process (the runtime's stop calls this)."""
        with self._starting:
            workers, self._workers = list(self._workers.values()), {}
            workers += [w for spares in self._spares.values() for w in spares]
            self._spares = {}
        for w in workers:
            w.stop()

    # --- modules isolation (in this process) ---------------------------------------------
    @contextmanager
    def _patched_env(self, fn: Function) -> Iterator[None]:
        saved = dict(os.environ)
        os.environ.update(self.environment(fn))
        try:
            yield
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def _private_names(self, code_dir: Path) -> frozenset[str]:
        """The top-level packages and modules of a code folder (its modules are private)."""
        names = self._tops.get(code_dir)
        if names is None:
            names = self._tops[code_dir] = frozenset(
                p.stem for p in code_dir.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()
            )
        return names

    @contextmanager
    def _function_modules(self, fn: Function) -> Iterator[None]:
        """Make the function's own copies of its code-folder modules the visible ones.

        A module is private to the function when its top-level package is in the code
        folder (one set lookup per name, so a switch costs microseconds, not a path check
        of every loaded module)."""
        code_dir = fn.code_dir
        if code_dir is None:
            yield
            return
        if str(code_dir) not in sys.path:
            sys.path.insert(0, str(code_dir))
        tops = self._private_names(code_dir)
        mine = self._modules.setdefault(fn.logical_id, {})
        hidden = {
            name: mod
            for name, mod in list(sys.modules.items())
            if name.partition(".")[0] in tops and name not in mine
        }
        for name in hidden:
            del sys.modules[name]
        replaced = {name: sys.modules[name] for name in mine if name in sys.modules}
        sys.modules.update(mine)
        try:
            yield
        finally:
            for name in [n for n in sys.modules if n.partition(".")[0] in tops]:
                mine[name] = sys.modules.pop(name)
            sys.modules.update(replaced)
            sys.modules.update(hidden)

    def _in_process(self, what: str) -> None:
        if self.isolate != "modules":
            raise RuntimeError(
                f"{what} reaches into a handler's modules: start the runtime with isolate='modules'"
            )

    def handler(self, logical_id: str) -> Callable[..., Any]:
        """Import (cold start) the function's handler in this process, in its environment."""
        self._in_process("handler()")
        with self.lock:
            if logical_id not in self._handlers:
                fn = self.functions[logical_id]
                module_name, _, attr = fn.handler.rpartition(".")
                with self._patched_env(fn), self._function_modules(fn):
                    module = importlib.import_module(module_name)
                    if self.clock is not None:
                        self._install_clock(None if logical_id in self._system_clock else self.clock)
                self._entry_modules[logical_id] = module
                self._handlers[logical_id] = getattr(module, attr)
            return self._handlers[logical_id]

    @staticmethod
    def _install_clock(clock: Any) -> None:
        try:
            clock_module = importlib.import_module("common.clock")
        except ImportError:  # a function whose code has no common package
            return
        clock_module.install(clock)

    def module(self, logical_id: str) -> ModuleType:
        """The handler's module (isolate="modules" only)."""
        self.handler(logical_id)
        return self._entry_modules[logical_id]

    def call_in_function(self, logical_id: str, call: Callable[[], Any]) -> Any:
        """Run `call` inside the function's environment (isolate="modules" only)."""
        self._in_process("call_in_function()")
        fn = self.functions[logical_id]
        with self.lock, self._patched_env(fn), self._function_modules(fn):
            return call()

    # --- either ------------------------------------------------------------------------------
    def call_entry(self, logical_id: str, dotted: str, *args: Any, **kwargs: Any) -> Any:
        """Call `dotted` (a path from the handler's module, e.g. "app.get_openapi_json_schema")
        in the function's environment; AttributeError if the module has no such thing."""
        if self.isolate == "modules":
            module = self.module(logical_id)
            return self.call_in_function(logical_id, lambda: worker.resolve(module, dotted)(*args, **kwargs))
        kind, value = self._worker(logical_id).ask(("call", dotted, args, kwargs))
        return self._answer(logical_id, dotted, kind, value)

    def has_entry(self, logical_id: str, dotted: str) -> bool:
        """Whether the handler's module holds a callable at `dotted` (e.g. "app.get_openapi_json_schema")."""
        if self.isolate == "modules":
            try:
                return callable(worker.resolve(self.module(logical_id), dotted))
            except AttributeError:
                return False
        kind, value = self._worker(logical_id).ask(("call", dotted, None, None))
        return kind == "ok" and bool(value)

    @staticmethod
    def _answer(logical_id: str, dotted: str, kind: str, value: Any) -> Any:
        if kind == "missing":
            raise AttributeError(value)
        if kind == "error":
            raise RuntimeError(f"{logical_id}: {dotted} failed: {value}")
        return value

    def invoke(
        self,
        logical_id: str,
        event: Any,
        trigger: str,
        records: int = 1,
        extra_env: dict[str, str] | None = None,
    ) -> Invocation:
        """Invoke and log; a handler exception is recorded on the Invocation, not raised."""
        entry = Invocation(function=logical_id, trigger=trigger, records=records)
        if self.isolate == "modules":
            self._invoke_here(entry, event, extra_env)
        else:
            self._invoke_in_worker(entry, event, extra_env)
        heap.after_invocation()  # what survived it is the emulator's state (see heap)
        if entry.error:
            entry.failures = records
        self.invocations.append(entry)
        return entry

    def _invoke_in_worker(self, entry: Invocation, event: Any, extra_env: dict[str, str] | None) -> None:
        logical_id = entry.function
        proc = self._checkout(logical_id)
        watch = self.faults.watch(logical_id) if self.faults is not None else None
        budget = self.budget(logical_id)
        started = time.perf_counter()
        try:
            entry.result, entry.error, trace, _ = proc.ask(
                ("invoke", event, self._now(logical_id), extra_env), watch, budget
            )
        except WorkerExited as exc:  # the process died mid-invocation: the next one is a cold start
            entry.error, trace = f"{exc.error_type}: {exc}", None
        finally:
            proc.busy.release()
        entry.duration_ms = (time.perf_counter() - started) * 1000
        if entry.error:
            log.warning("%s failed: %s\n%s", logical_id, entry.error, trace or "")

    def budget(self, logical_id: str) -> _Budget | None:
        """The limits of an invocation of `logical_id` now (None: limits are off)."""
        if self.limits is None:
            return None
        fn = self.functions[logical_id]
        return _Budget(fn.timeout_s * self.limits, fn.memory_mb * self.limits)

    def _invoke_here(self, entry: Invocation, event: Any, extra_env: dict[str, str] | None) -> None:
        if self.faults is not None:
            raise RuntimeError(
                "fault plans kill a function's process: start the runtime with isolate='process'"
            )
        fn = self.functions[entry.function]
        handler = self.handler(entry.function)
        started = time.perf_counter()
        with self.lock, self._patched_env(fn), self._function_modules(fn):
            if extra_env:
                os.environ.update(extra_env)
            try:
                entry.result = handler(event, FakeLambdaContext(self._spec(fn)))
            except Exception as exc:  # noqa: BLE001 - a failed invocation, as Lambda reports it
                entry.error = f"{type(exc).__name__}: {exc}"
                log.warning("%s failed: %s\n%s", fn.logical_id, entry.error, traceback.format_exc(limit=5))
        entry.duration_ms = (time.perf_counter() - started) * 1000


def _spec(fn: Function) -> dict[str, Any]:
    """What a worker (and the context object) needs to know of its function."""
    return {
        "name": fn.name,
        "arn": fn.arn,
        "handler": fn.handler,
        "memory_mb": fn.memory_mb,
        "timeout_s": fn.timeout_s,
        "code_dir": str(fn.code_dir) if fn.code_dir is not None else None,
        "imports": fn.imports,
    }
