"""Run handlers in-process, one invocation at a time, each in its function's environment.

Each function gets what Lambda gives it: its own environment variables (from the
template), its own cold start (the modules under its code folder are imported separately
for each function, so module-level state such as a composition root is not shared
between functions), and a context object.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from sewerbill.local.stack import Function

log = logging.getLogger("sewerbill.local")


class FakeLambdaContext:
    """The attributes of a Lambda context that handlers and Powertools read."""

    def __init__(self, fn: Function, region: str, account: str) -> None:
        self.function_name = fn.name
        self.function_version = "$LATEST"
        self.invoked_function_arn = fn.arn
        self.memory_limit_in_mb = fn.memory_mb
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{fn.name}"
        self.log_stream_name = f"{datetime.now(UTC):%Y/%m/%d}/[$LATEST]local"
        self.identity = None
        self.client_context = None
        self.tenant_id = None
        self._deadline = time.monotonic() + fn.timeout_s

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


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


class Invoker:
    def __init__(
        self,
        functions: dict[str, Function],
        base_env: Callable[[], dict[str, str]],
        region: str,
        account: str,
        isolate_modules: bool = True,
        clock: Any = None,
    ) -> None:
        self.functions = functions
        # The simulated clock, installed into each function's own copy of common.clock at its
        # cold start (deployed code never installs one: it runs on the system clock).
        self.clock = clock
        self.base_env = base_env
        self.region = region
        self.account = account
        self.isolate_modules = isolate_modules
        self.lock = threading.RLock()
        self.invocations: list[Invocation] = []
        self._handlers: dict[str, Callable[..., Any]] = {}
        self._modules: dict[str, dict[str, ModuleType]] = {}  # function -> its private modules
        self._entry_modules: dict[str, ModuleType] = {}
        self._tops: dict[Path, frozenset[str]] = {}

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
        return env

    @contextmanager
    def _patched_env(self, fn: Function) -> Iterator[None]:
        saved = dict(os.environ)
        os.environ.update(self.environment(fn))
        try:
            yield
        finally:
            os.environ.clear()
            os.environ.update(saved)

    # --- modules ----------------------------------------------------------------------
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
        if code_dir is not None and str(code_dir) not in sys.path:
            sys.path.insert(0, str(code_dir))
        if not self.isolate_modules or code_dir is None:
            yield
            return
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

    def handler(self, logical_id: str) -> Callable[..., Any]:
        """Import (cold start) the function's handler, in its environment."""
        with self.lock:
            if logical_id not in self._handlers:
                fn = self.functions[logical_id]
                module_name, _, attr = fn.handler.rpartition(".")
                with self._patched_env(fn), self._function_modules(fn):
                    module = importlib.import_module(module_name)
                    if self.clock is not None:
                        self._install_clock()
                self._entry_modules[logical_id] = module
                self._handlers[logical_id] = getattr(module, attr)
            return self._handlers[logical_id]

    def _install_clock(self) -> None:
        try:
            clock_module = importlib.import_module("common.clock")
        except ImportError:  # a function whose code has no common package
            return
        clock_module.install(self.clock)

    def module(self, logical_id: str) -> ModuleType:
        self.handler(logical_id)
        return self._entry_modules[logical_id]

    def call_in_function(self, logical_id: str, call: Callable[[], Any]) -> Any:
        """Run `call` inside the function's environment (e.g. to build its OpenAPI)."""
        fn = self.functions[logical_id]
        with self.lock, self._patched_env(fn), self._function_modules(fn):
            return call()

    # --- invocation -------------------------------------------------------------------
    def invoke(
        self,
        logical_id: str,
        event: Any,
        trigger: str,
        records: int = 1,
        extra_env: dict[str, str] | None = None,
    ) -> Invocation:
        """Invoke and log; a handler exception is recorded on the Invocation, not raised."""
        fn = self.functions[logical_id]
        handler = self.handler(logical_id)
        entry = Invocation(function=logical_id, trigger=trigger, records=records)
        started = time.perf_counter()
        with self.lock, self._patched_env(fn), self._function_modules(fn):
            if extra_env:
                os.environ.update(extra_env)
            try:
                entry.result = handler(event, FakeLambdaContext(fn, self.region, self.account))
            except Exception as exc:  # noqa: BLE001 - a failed invocation, as Lambda reports it
                entry.error = f"{type(exc).__name__}: {exc}"
                entry.failures = records
                log.warning("%s failed: %s\n%s", logical_id, entry.error, traceback.format_exc(limit=5))
        entry.duration_ms = (time.perf_counter() - started) * 1000
        self.invocations.append(entry)
        return entry
