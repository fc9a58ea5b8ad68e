"""The local runtime: the template's stack on an emulator, each function run in a worker process of its own.

with LocalRuntime.start(template="template.yaml", start_time=datetime(2025, 1, 1, tzinfo=UTC)) as rt:
    rt.upload("UploadsBucket", "reads/2025-01.csv", data)
    rt.drain()
    rt.clock.advance(by=timedelta(days=31))
    requests.get(rt.gateway_url + "/bills/...", headers={"authorization": "Bearer " + rt.mint_token()})
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from sewerbill import samtemplate
from sewerbill.local import alarms as local_alarms
from sewerbill.local import heap
from sewerbill.local import state as local_state
from sewerbill.local import template as templates
from sewerbill.local.archive import replay as replay_day
from sewerbill.local.auth import LocalIssuer
from sewerbill.local.clock import Firing, SimulatedClock
from sewerbill.local.emulator import Emulator
from sewerbill.local.gateway import Gateway
from sewerbill.local.invoker import Invocation, Invoker, Serialized, preload_in_process, start_forkserver
from sewerbill.local.retention import Retention
from sewerbill.local.sources import DeadLetter, DeadLetterWatch, SqsPoller, StreamPoller
from sewerbill.local.stack import Provisioner, ScheduledTarget, Stack, StreamSource
from sewerbill.local.worker import stamp_logs_with

log = logging.getLogger("sewerbill.local")


CONCURRENCY_ENV = "SEWERBILL_LOCAL_CONCURRENCY"
CONCURRENCIES = ("sequential", "concurrent")


def concurrency_mode(concurrency: str | None) -> str:
    """The mode asked for, else SEWERBILL_LOCAL_CONCURRENCY's, else "sequential"."""
    mode = concurrency or os.environ.get(CONCURRENCY_ENV) or "sequential"
    if mode not in CONCURRENCIES:
        raise ValueError(f"concurrency must be one of {CONCURRENCIES}, got {mode!r}")
    return mode


class DrainIncomplete(RuntimeError):
    """drain() hit its bound with work still pending (a handler keeps producing work?)."""


class LocalRuntime:
    """Use `LocalRuntime.start(...)`; it is a context manager that stops everything on exit."""

    def __init__(
        self,
        emulator: Emulator,
        stack: Stack,
        template_path: Path,
        cfn: dict[str, Any],
        start_time: datetime,
        isolate: str | None,
        limits: str | float | None = None,
        concurrency: str | None = None,
    ) -> None:
        self.emulator = emulator
        self.stack = stack
        self.template_path = template_path
        self.cfn = cfn
        self.issuer = LocalIssuer()
        self.dead_letters: list[DeadLetter] = []
        self.invoker = Invoker(
            stack.functions,
            self._function_env,
            stack.region,
            stack.account,
            isolate=isolate,
            clock=_SimulatedNow(self),
            limits=limits,
        )
        # concurrent: every due source at once, an SQS source up to its MaximumConcurrency
        # invocations at once (`_poll_concurrently`); sequential: one after another
        self.concurrent = concurrency_mode(concurrency) == "concurrent"
        self.invoker.concurrent = self.concurrent
        self._sqs = self._runtime_sqs()
        account = stack.account if emulator.started_here else None
        self._pollers: list[SqsPoller | StreamPoller] = [
            SqsPoller(source, self._sqs, self.invoker, stack.region, account)
            for source in stack.queue_sources
        ]
        streams = emulator.client("dynamodbstreams") if stack.stream_sources else None
        direct = None
        if emulator.observes_activity("stream"):  # moto in this process: read its shards directly
            from sewerbill.local import motoshim

            direct = Serialized(motoshim.stream_entries)
        self._stream_pollers = [
            StreamPoller(
                source,
                None if streams is None else Serialized(streams),
                self.invoker,
                stack.region,
                self._give_up,
                direct,
            )
            for source in stack.stream_sources
        ]
        self._pollers.extend(self._stream_pollers)
        polled = {s.queue_url for s in stack.queue_sources}
        self._dlq_watch = DeadLetterWatch(
            {url: lid for url, lid in stack.dead_letter_queues.items() if url not in polled},
            self._sqs,
            self.dead_letters,
        )
        # Sources the emulator reports activity on (moto in this process, motoshim) are
        # polled only when it says they received something; the others every pass.
        observed = emulator.observes_activity
        self._dlq_urls_by_arn = {
            arn: url for arn, url in stack.queue_urls_by_arn.items() if url in self._dlq_watch.dlqs
        }
        self._watched = {p.key for p in self._pollers if observed(p.key[0])}
        # A pass visits the pollers in this order: each unwatched one, and a watched one only
        # when it is pending (a firing makes one or two of some thirty pending).
        self._unwatched = [n for n, p in enumerate(self._pollers) if p.key not in self._watched]
        self._positions: dict[tuple[str, str], list[int]] = {}
        for n, p in enumerate(self._pollers):
            self._positions.setdefault(p.key, []).append(n)
        self._dlqs_watched = observed("sqs")
        self._pending: set[tuple[str, str]] = set()
        self._dlqs_pending: set[str] = set()
        # concurrent mode: each SQS poller's further slots (pollers of the same source, each
        # with its own receive state), and the threads the sources run in during a pass
        self._slots: dict[int, list[SqsPoller]] = {}
        self._threads: ThreadPoolExecutor | None = None
        self._activity = threading.Event()
        self._activity_lock = threading.Lock()
        # the bus's archives (sewerbill.local.archive): their queues moved to disk each pass
        # they received something (every pass, when the emulator reports no activity)
        self._archive_arns = {a.queue_arn for a in stack.archives}
        self._archive_pending = bool(stack.archives)
        self.clock = SimulatedClock(start_time, stack, self._fire, self.drain)
        # moto in this process: what it keeps beyond the stored data (stream records, sent
        # mail) trimmed as AWS does, each time a drain settles (sewerbill.local.retention)
        self.retention = Retention(lambda: self.clock.now) if observed("stream") else None
        self.gateway: Gateway | None = None
        self.startup_seconds = 0.0
        self._poll_lock = threading.RLock()
        self._stop = threading.Event()
        self._listening: contextlib.ExitStack = contextlib.ExitStack()
        # `--state DIR` (sewerbill.local.state): restored at start, saved at a clean stop
        self.state_dir: Path | None = None
        self.restored: dict[str, Any] | None = None  # what the start restored, if anything
        self.saved: dict[str, Any] | None = None  # what the last save wrote
        self._stopped = False

    # --- start / stop -------------------------------------------------------------------
    @classmethod
    def start(
        cls,
        template: str | Path = "template.yaml",
        start_time: datetime | None = None,
        parameters: dict[str, Any] | None = None,
        stack_name: str | None = None,
        emulator_mode: str | None = None,
        isolate: str | None = None,
        gateway: bool = True,
        gateway_port: int = 0,
        state_dir: str | Path | None = None,
        limits: str | float | None = None,
        concurrency: str | None = None,
    ) -> LocalRuntime:
        """Start (or reach) the emulator, create the template's resources, start the gateway.

        `parameters` override the template's Parameter defaults. `emulator_mode` is
        "thread" (moto in this process, the default) or "process" (a moto_server child).
        `stack_name` defaults to `sewerbill-<Stage>` (as `sewerbill.samtemplate` names it).
        `isolate`: "process" (a process per function, the default) or "modules" (see invoker).
        `state_dir`: restore the state saved there (if any) before the first invocation, and
        save there at a clean stop (`sewerbill.local.state`); None: nothing is kept.
        `limits`: each function's Timeout and MemorySize enforced ("on", the default), not
        ("off"), or scaled by a factor; None: SEWERBILL_LOCAL_LIMITS's (see invoker).
        `concurrency`: "sequential" (the default: one source, one invocation at a time, as
        the tests' expectations were written) or "concurrent" (`local up`: as AWS runs them,
        see `poll_once`); None: SEWERBILL_LOCAL_CONCURRENCY's.
        """
        began = time.perf_counter()
        if state_dir is not None:
            local_state.saved(state_dir)  # another version or a damaged state: refused now
        path = Path(template).resolve()
        sam = samtemplate.load_template(path)
        params = samtemplate.parameter_defaults(sam)
        params.update(parameters or {})
        stack_name = stack_name or f"sewerbill-{params.get('Stage', 'local')}"
        emulator = Emulator.start(emulator_mode)
        try:
            # the functions' processes get ready while we provision
            start_forkserver(isolate, _template_code(sam, path.parent))
            preload_in_process(isolate)  # or, functions in this process: their libraries now
            account = emulator.client("sts").get_caller_identity()["Account"]
            cfn = samtemplate.translate_template(
                path, dict(parameters or {}), region=emulator.region, account_id=account
            )
            gw_port = gateway_port
            if gateway:
                # The gateway's URL is part of the stack (ApiEndpoint), so bind it first.
                from http.server import ThreadingHTTPServer

                probe = ThreadingHTTPServer(("127.0.0.1", gw_port), lambda *a: None)  # type: ignore[arg-type]
                gw_port = probe.server_address[1]
                probe.server_close()
            stack = Provisioner(
                cfn,
                emulator,
                stack_name,
                params,
                account,
                templates.code_dirs(sam, path.parent),
                f"http://127.0.0.1:{gw_port}",
            ).provision()
            # Each function imports only what its artifact holds (its worker enforces it).
            for logical_id, rules in templates.import_rules(sam, path.parent).items():
                if logical_id in stack.functions:
                    stack.functions[logical_id].imports = rules
            runtime = cls(
                emulator,
                stack,
                path,
                cfn,
                start_time or datetime.now(UTC).replace(microsecond=0),
                isolate,
                limits,
                concurrency,
            )
            for poller in runtime._stream_pollers:
                poller.start()
            archives = Path(state_dir) / "archive" if state_dir is not None else None
            if runtime.stack.archives and archives is None:
                archives = Path(tempfile.mkdtemp(prefix="sewerbill-archive-"))
            for archive in runtime.stack.archives:
                archive.directory = None if archives is None else archives / archive.name
            runtime._listening = emulator.listen(runtime._on_activity)
            runtime._listening.callback(stamp_logs_with(lambda: runtime.clock.now))
            if state_dir is not None:
                try:
                    runtime.restored = local_state.restore(runtime, state_dir)
                except BaseException:
                    runtime._stopped = True  # never saved over: the directory keeps its state
                    runtime._shut_down()
                    raise
                runtime.state_dir = Path(state_dir)
            if gateway:
                runtime.gateway = Gateway(runtime, gw_port)
                runtime.gateway.start()
        except BaseException:
            emulator.stop()
            raise
        heap.settle()  # the provisioned stack out of the collector's sight (see heap)
        runtime.startup_seconds = time.perf_counter() - began
        log.info(
            "local stack %s up in %.2f s on %s", stack_name, runtime.startup_seconds, emulator.endpoint_url
        )
        return runtime

    def request_stop(self) -> None:
        """Ask `run_forever` to return after the pass in progress (a signal handler's call)."""
        self._stop.set()
        self._activity.set()

    def stop(self, save: bool | None = None) -> None:
        """Stop everything; first save the state when started with `state_dir` (`save`
        None or True; False: a stop that is not clean, the directory keeps its last state)."""
        if self._stopped:
            return
        self._stopped = True
        self.request_stop()
        try:
            if self.state_dir is not None and save is not False:
                self.save_state()
        finally:
            self._shut_down()

    def _shut_down(self) -> None:
        self._listening.close()
        if self.gateway is not None:
            self.gateway.stop()
            self.gateway = None
        if self._threads is not None:
            self._threads.shutdown(wait=True)
            self._threads = None
        self.invoker.stop()
        self.emulator.stop()
        heap.unsettle()

    def __enter__(self) -> LocalRuntime:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.stop(save=exc_type is None)

    # --- what tests look at -----------------------------------------------------------------
    @property
    def endpoint_url(self) -> str:
        return self.emulator.endpoint_url

    @property
    def gateway_url(self) -> str:
        if self.gateway is None:
            raise RuntimeError("started with gateway=False")
        return self.gateway.url

    @property
    def invocations(self) -> list[Invocation]:
        return self.invoker.invocations

    def invocations_of(self, function: str) -> list[Invocation]:
        return [i for i in self.invoker.invocations if i.function == function]

    def resource(self, logical_id: str) -> Any:
        """The physical id (what `Ref` gives): table/bucket/bus/function name, queue URL."""
        return self.stack.physical(logical_id)

    def attribute(self, logical_id: str, attribute: str) -> Any:
        return self.stack.resources[logical_id][attribute]

    def client(self, service: str) -> Any:
        """A boto3 client for the emulator (fake credentials, the stack's region)."""
        return self.emulator.client(service)

    def function_env(self, logical_id: str) -> dict[str, str]:
        return self.invoker.environment(self.stack.functions[logical_id])

    def _function_env(self) -> dict[str, str]:
        return self.emulator.function_env()

    # --- actions ----------------------------------------------------------------------------
    def upload(self, bucket: str, key: str, data: bytes | str, drain: bool = True) -> None:
        """Put an object in a bucket (logical id or name); S3 notifies EventBridge on its own."""
        name = self.stack.physical(bucket) if bucket in self.stack.resources else bucket
        body = data.encode() if isinstance(data, str) else data
        self.client("s3").put_object(Bucket=name, Key=key, Body=body)
        if drain:
            self.drain()

    def rejection_reports(self, bucket: str, key: str) -> dict[str, tuple[str, int]]:
        """The rejection reports written for the object ``key`` (``common.reports``' keys:
        ``reports/<service>/<key>/...``): report key -> (its LastModified, rejected lines)."""
        name = self.stack.physical(bucket) if bucket in self.stack.resources else bucket
        s3 = self.client("s3")
        found: dict[str, tuple[str, int]] = {}
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=name, Prefix="reports/"):
            for obj in page.get("Contents", []):
                parts = obj["Key"].split("/", 2)
                if len(parts) == 3 and parts[2].startswith(key + "/"):
                    found[obj["Key"]] = (str(obj["LastModified"]), -1)
        return found

    def count_rejected(self, bucket: str, report: str) -> int:
        """The rejected lines a report lists: JSON lines one each, a CSV report after its header."""
        name = self.stack.physical(bucket) if bucket in self.stack.resources else bucket
        body = self.client("s3").get_object(Bucket=name, Key=report)["Body"].read().decode("utf-8", "replace")
        lines = [line for line in body.splitlines() if line.strip()]
        return max(len(lines) - 1, 0) if report.endswith(".csv") else len(lines)

    def send(self, queue: str, body: str | dict[str, Any], drain: bool = False) -> str:
        url = self.stack.physical(queue) if queue in self.stack.resources else queue
        text = body if isinstance(body, str) else json.dumps(body)
        args: dict[str, Any] = {"QueueUrl": url, "MessageBody": text}
        if url.endswith(".fifo"):  # a FIFO queue (and its DLQ): one group, as its feeders send
            args["MessageGroupId"] = "local"
            args["MessageDeduplicationId"] = uuid.uuid4().hex
        message_id = self._sqs.send_message(**args)["MessageId"]
        if drain:
            self.drain()
        return str(message_id)

    def put_event(
        self, source: str, detail_type: str, detail: dict[str, Any], bus: str | None = None
    ) -> None:
        entry = {"Source": source, "DetailType": detail_type, "Detail": json.dumps(detail)}
        if bus:
            entry["EventBusName"] = self.stack.physical(bus) if bus in self.stack.resources else bus
        result = self.client("events").put_events(Entries=[entry])
        if result.get("FailedEntryCount"):
            raise RuntimeError(f"put_events failed: {result['Entries']}")

    def invoke(self, function: str, event: Any) -> Invocation:
        """Invoke a function directly (as `aws lambda invoke` would)."""
        return self.invoker.invoke(function, event, "direct")

    def mint_token(
        self,
        sub: str = "dev",
        scopes: Iterable[str] = (),
        ttl: float | timedelta = 3600,
        claims: dict[str, Any] | None = None,
        authorizer: str | None = None,
        audience: str | None = None,
        issuer: str | None = None,
    ) -> str:
        """A token the template's JWT authorizer accepts (issuer and audience from it)."""
        auths = self.stack.authorizers
        auth = auths[authorizer] if authorizer else next(iter(auths.values()), None)
        ttl_s = ttl.total_seconds() if isinstance(ttl, timedelta) else float(ttl)
        return self.issuer.mint(
            issuer=issuer or (auth.issuer if auth else "https://sewerbill.local/"),
            audience=audience
            or ((auth.audience[0] if auth.audience else "sewerbill") if auth else "sewerbill"),
            sub=sub,
            scopes=scopes,
            ttl_s=ttl_s,
            claims=claims,
        )

    # --- polling -----------------------------------------------------------------------------
    def _on_activity(self, kind: str, name: str) -> None:
        """motoshim's report: queue `name` (an ARN) or the stream of table `name` got something.
        A source already pending with the activity flag up needs nothing more (a read file's
        20,000 stream records each took the lock and set the flag again: a tenth of a put):
        the pass that takes it from pending polls it after this record was added."""
        if (kind, name) in self._pending and self._activity.is_set():
            return
        with self._activity_lock:
            if (kind, name) in self._watched:
                self._pending.add((kind, name))
            elif kind == "sqs" and name in self._dlq_urls_by_arn:
                self._dlqs_pending.add(self._dlq_urls_by_arn[name])
            elif kind == "sqs" and name in self._archive_arns:
                self._archive_pending = True
                return
            else:
                return
        self._activity.set()

    def _take_pending(self) -> tuple[set[tuple[str, str]], set[str] | None]:
        with self._activity_lock:
            pending, self._pending = self._pending, set()
            dlqs, self._dlqs_pending = self._dlqs_pending, set()
            self._activity.clear()
        return pending, (dlqs if self._dlqs_watched else None)

    def _runtime_sqs(self) -> Any:
        """An SQS client for the runtime's own calls, each made under the emulator's lock
        (`invoker.Serialized`): moto's queues directly when moto runs in this process."""
        sqs: Any = self.emulator.client("sqs")
        if self.emulator.observes_activity("sqs"):  # moto in this process: its queues directly
            from sewerbill.local import motoshim

            sqs = motoshim.DirectSqs(sqs, self.stack.account, self.stack.region)
        return Serialized(sqs)

    def poll_once(self, check_dead_letters: bool = True) -> int:
        """One pass over the sources that can have something; returns how many messages or
        records were handled. A source that may have more is kept pending. Sequential: each
        source in turn, one invocation each. Concurrent: `_poll_concurrently`."""
        with self._poll_lock:
            if self._archive_pending or (self._archive_arns and not self._dlqs_watched):
                self._flush_archives()
            pending, dlqs = self._take_pending()
            handled = 0
            due = sorted(self._unwatched + [n for key in pending for n in self._positions.get(key, ())])
            runs = self._poll_concurrently(due) if self.concurrent else self._poll_in_turn(due)
            for n, slot, count in runs:
                poller = self._pollers[n]
                handled += count
                if poller.key in self._watched and (slot.more or not count and self._waiting(poller)):
                    with self._activity_lock:
                        self._pending.add(poller.key)
            if check_dead_letters and (dlqs is None or dlqs):
                self._dlq_watch.check(dlqs)
            elif dlqs:
                with self._activity_lock:
                    self._dlqs_pending |= dlqs
            return handled

    def _poll_in_turn(self, due: list[int]) -> list[tuple[int, SqsPoller | StreamPoller, int]]:
        return [(n, self._pollers[n], self._pollers[n].poll_once()) for n in due]

    def _poll_concurrently(self, due: list[int]) -> list[tuple[int, SqsPoller | StreamPoller, int]]:
        """Every due source at once, each in a thread, as the Lambda service polls each event
        source on its own: different functions run at the same time, and an SQS source up to
        its ScalingConfig MaximumConcurrency invocations at once (1 without one), its visible
        messages shared among them (each takes at most its share, never more than BatchSize),
        each invocation in a worker of its own (`Invoker.concurrent`). A stream is read by one
        invocation at a time per shard, as Lambda reads it (moto keeps one shard a table).
        The pass returns when every invocation it started has ended, so `drain` still waits
        for everything to settle; AWS calls stay atomic (`invoker.EMULATOR_LOCK`), what runs
        between them interleaves however the threads are scheduled."""
        runs: list[tuple[int, SqsPoller | StreamPoller]] = []
        for n in due:
            poller = self._pollers[n]
            if (
                isinstance(poller, SqsPoller)
                and poller.source.enabled
                and poller.source.maximum_concurrency > 1
            ):
                visible = poller.visible()
                slots = max(1, min(poller.source.maximum_concurrency, visible))
                share = max(1, -(-visible // slots))
                for slot in self._slot_pollers(n, slots):
                    slot.batch_limit = share
                    runs.append((n, slot))
            else:
                runs.append((n, poller))
        if len(runs) <= 1:
            return [(n, slot, slot.poll_once()) for n, slot in runs]
        if self._threads is None:
            self._threads = ThreadPoolExecutor(max_workers=64, thread_name_prefix="sewerbill-source")
        counts = list(self._threads.map(lambda run: run[1].poll_once(), runs))
        return [(n, slot, count) for (n, slot), count in zip(runs, counts, strict=True)]

    def _slot_pollers(self, n: int, slots: int) -> list[SqsPoller]:
        """The SQS poller `n` and as many more pollers of its source as make `slots`."""
        poller = self._pollers[n]
        assert isinstance(poller, SqsPoller)
        extra = self._slots.setdefault(n, [])
        while len(extra) < slots - 1:
            extra.append(
                SqsPoller(poller.source, self._runtime_sqs(), self.invoker, self.stack.region, poller.account)
            )
        return [poller, *extra[: slots - 1]]

    @staticmethod
    def _waiting(poller: SqsPoller | StreamPoller) -> bool:
        """A queue told us of a message it did not hand out: delayed or still invisible? (A
        disabled mapping hands out nothing: what waits in its queue is not work to drain.)"""
        return isinstance(poller, SqsPoller) and poller.source.enabled and poller.in_flight() > 0

    def drain(self, max_seconds: float = 120.0, max_passes: int = 100_000) -> int:
        """Poll until no source can have anything left and nothing is in flight."""
        deadline = time.monotonic() + max_seconds
        total = 0
        with self._poll_lock:
            for _ in range(max_passes):
                handled = self.poll_once(check_dead_letters=False)
                total += handled
                if handled:
                    continue
                if self._watched:
                    waiting = bool(self._pending)
                else:
                    waiting = any(self._waiting(p) for p in self._pollers)
                if not waiting:
                    self._check_dead_letters()
                    if self.retention is not None:
                        self.retention.after_drain()
                    return total
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)  # delayed or invisible messages: wait for them
            raise DrainIncomplete(f"work still pending after {total} messages handled")

    def _check_dead_letters(self) -> None:
        with self._activity_lock:
            dlqs, self._dlqs_pending = self._dlqs_pending, set()
        if not self._dlqs_watched:
            self._dlq_watch.check()
        elif dlqs:
            self._dlq_watch.check(dlqs)

    def run_forever(self, interval: float = 0.25, on_pass: Callable[[int], None] | None = None) -> None:
        """Handle work as it arrives until stop() (or Ctrl-C) — what `sewerbill local up` does.

        Sources the emulator reports on cost nothing while idle (the loop waits for its
        report); others are polled every `interval`."""
        idle_wait = None if len(self._watched) == len(self._pollers) and self._dlqs_watched else interval
        while not self._stop.is_set():
            try:
                handled = self.poll_once()
            except Exception:  # noqa: BLE001 - keep the stack up; the log says what broke
                log.exception("poll failed")
                handled = 0
            if on_pass is not None and handled:
                on_pass(handled)
            if not handled:
                if self.retention is not None:
                    self.retention.after_drain()
                self._activity.wait(idle_wait if idle_wait is not None else 1.0)

    def _give_up(self, source: StreamSource, records: list[dict[str, Any]], shard_id: str) -> None:
        """A stream batch whose retries ran out: Lambda sends a record of it to the mapping's
        OnFailure destination (a queue: reported by the dead-letter watch) or drops it."""
        first, last = records[0]["dynamodb"], records[-1]["dynamodb"]
        log.error(
            "gave up on %d stream record(s) of %s (%s..%s) after %d attempts",
            len(records),
            source.table_name,
            first["SequenceNumber"],
            last["SequenceNumber"],
            source.max_retries + 1,
        )
        if source.on_failure is None:
            for record in records:
                self.dead_letters.append(
                    DeadLetter(
                        queue=f"stream:{source.table_name}",
                        message_id=record["dynamodb"]["SequenceNumber"],
                        body=json.dumps(record, default=str),
                        function=source.function,
                    )
                )
            return
        fn = self.stack.functions[source.function]
        arrived = [r["dynamodb"].get("ApproximateCreationDateTime") for r in (records[0], records[-1])]
        self._sqs.send_message(
            QueueUrl=self.stack.queue_urls_by_arn[source.on_failure],
            MessageBody=json.dumps(
                {
                    "requestContext": {
                        "requestId": str(uuid.uuid4()),
                        "functionArn": fn.arn,
                        "condition": "RetryAttemptsExhausted",
                        "approximateInvokeCount": source.max_retries + 1,
                    },
                    "responseContext": {
                        "statusCode": 200,
                        "executedVersion": "$LATEST",
                        "functionError": "Unhandled",
                    },
                    "version": "1.0",
                    "timestamp": self.clock.now.isoformat(),
                    "DDBStreamBatchInfo": {
                        "shardId": shard_id,
                        "startSequenceNumber": first["SequenceNumber"],
                        "endSequenceNumber": last["SequenceNumber"],
                        "approximateArrivalOfFirstRecord": arrived[0],
                        "approximateArrivalOfLastRecord": arrived[1],
                        "batchSize": len(records),
                        "streamArn": source.stream_arn,
                    },
                }
            ),
        )

    # --- state and redrive (sewerbill.local.state) -----------------------------------------
    def save_state(self, directory: str | Path | None = None) -> dict[str, Any]:
        """Save the stack's state to `directory` (default: the `state_dir` it started with).
        The streams are handed out first, so every outbox item written so far is published
        (a restore skips the records its own writes leave in the streams)."""
        target = directory if directory is not None else self.state_dir
        if target is None:
            raise RuntimeError("no state directory: started without state_dir")
        with self._poll_lock:
            self._catch_up_streams()
            self._flush_archives()
            self._dlq_watch.check()
            self.saved = local_state.save(self, target)
        return self.saved

    def _flush_archives(self) -> int:
        """The bus's events the archives' queues received, moved to their day files."""
        self._archive_pending = False
        return sum(archive.flush(self._sqs) for archive in self.stack.archives)

    def replay(self, day: date, queue: str, archive: str | None = None) -> dict[str, Any]:
        """Send the archived events of ``day`` to ``queue`` (a logical id, name or URL): a
        fresh consumer's queue receives exactly that day's events (sewerbill.local.archive;
        ``aws events start-replay`` on AWS)."""
        with self._poll_lock:
            self._catch_up_streams()
            self._flush_archives()
            found = [a for a in self.stack.archives if archive in (None, a.logical_id, a.name)]
            if not found:
                raise LookupError(f"no archive {archive!r}" if archive else "the stack has no archive")
            if queue in self.stack.resources and "QueueUrl" in self.stack.resources[queue]:
                url = self.stack.resources[queue]["QueueUrl"]
            elif queue.startswith(("http://", "https://")):
                url = queue
            else:
                try:
                    url = self.client("sqs").get_queue_url(QueueName=queue)["QueueUrl"]
                except Exception as exc:
                    raise LookupError(f"no queue {queue!r}") from exc
            sent = replay_day(found[0], self.client("sqs"), day, url)
        return {"archive": found[0].name, "day": day.isoformat(), "queue": url, "sent": sent}

    def _catch_up_streams(self, max_passes: int = 10_000) -> int:
        handled = 0
        for _ in range(max_passes):
            count = sum(p.poll_once() for p in self._stream_pollers)
            handled += count
            if not count and not any(p.more for p in self._stream_pollers):
                break
        return handled

    def redrive(self, queue: str, drain: bool = True) -> dict[str, Any]:
        """Move a dead-letter queue's messages back to their source queue (StartMessageMoveTask
        on AWS) and, with `drain`, handle them; `queue` names the DLQ or its source queue."""
        before = len(self.invocations)
        with self._poll_lock:
            result = local_state.redrive(self, queue)
        if drain:
            self.drain()
        result["invocations"] = [_invocation(i) for i in self.invocations[before:]]
        result["dead_letters"] = sum(1 for d in self.dead_letters if d.queue == result["dead_letter_queue"])
        return result

    # --- schedules ---------------------------------------------------------------------------
    def _fire(self, sched: ScheduledTarget, payload: str, at: datetime) -> None:
        """EventBridge Scheduler delivers the input to the target queue (the only target
        type the template uses; the provisioner refuses others)."""
        url = self.stack.queue_urls_by_arn[sched.target_arn]
        args: dict[str, Any] = {"QueueUrl": url, "MessageBody": payload}
        if url.endswith(".fifo"):
            args["MessageGroupId"] = sched.message_group_id or sched.name
            args["MessageDeduplicationId"] = uuid.uuid4().hex
        self._sqs.send_message(**args)

    # --- control endpoints (for the CLI against a running `sewerbill local up`) ----------------
    def status(self) -> dict[str, Any]:
        return {
            "stack": self.stack.name,
            "template": str(self.template_path),
            "endpoint_url": self.endpoint_url,
            "gateway_url": self.gateway.url if self.gateway else None,
            "startup_seconds": round(self.startup_seconds, 3),
            "clock": self.clock.now.isoformat(),
            "functions": sorted(self.stack.functions),
            "routes": [f"{r.route_key} -> {r.function}" for r in self.stack.routes],
            "schedules": [
                f"{s.logical_id}: {s.schedule.expression} {s.schedule.timezone}" for s in self.stack.schedules
            ],
            "resources": {lid: a.get("Ref") for lid, a in self.stack.resources.items() if a.get("Ref")},
            "invocations": len(self.invocations),
            "dead_letters": len(self.dead_letters),
            **self.alarms(),
        }

    def alarms(self) -> dict[str, Any]:
        """The template's alarms whose condition holds now (``alarms``), how many there are,
        and any whose metric the local stack cannot read (``alarms_not_evaluated``)."""
        by_name = {url.rsplit("/", 1)[-1]: url for url in self.stack.queue_urls_by_arn.values()}

        def visible(queue_name: str) -> int | None:
            url = by_name.get(queue_name)
            if url is None:
                return None
            attrs = self._sqs.get_queue_attributes(
                QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
            )
            return int(attrs["Attributes"]["ApproximateNumberOfMessages"])

        def function_of(name: str) -> str | None:
            fn = self.stack.function_by_arn(name)
            return fn.logical_id if fn else None

        api_ids = {
            str(a["ApiId"])
            for lid, a in self.stack.resources.items()
            if self.stack.types.get(lid) == "AWS::ApiGatewayV2::Api" and "ApiId" in a
        }
        metrics = local_alarms.Metrics(visible, lambda: list(self.invocations), function_of, api_ids)
        with self._poll_lock:
            firing, unknown = local_alarms.evaluate(self.stack.alarms, metrics)
        return {"alarms": firing, "alarms_watched": len(self.stack.alarms), "alarms_not_evaluated": unknown}

    def control(self, method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
        data = json.loads(body or b"{}") if path != "/_local/upload" else {}
        if path == "/_local/status" and method == "GET":
            return 200, self.status()
        if path == "/_local/dlq" and method == "GET":
            with self._poll_lock:
                self._dlq_watch.check()
            return 200, [asdict(d) for d in self.dead_letters]
        if path == "/_local/dlq/redrive" and method == "POST":
            try:
                return 200, self.redrive(data["queue"])
            except local_state.RedriveError as exc:
                return 404, {"message": str(exc)}
        if path == "/_local/replay" and method == "POST":
            try:
                return 200, self.replay(date.fromisoformat(data["day"]), data["queue"], data.get("archive"))
            except LookupError as exc:
                return 404, {"message": str(exc)}
        if path == "/_local/drain" and method == "POST":
            return 200, {"handled": self.drain()}
        if path == "/_local/clock" and method == "POST":
            before = len(self.invocations)
            if data.get("to"):
                fired = self.clock.advance(to=datetime.fromisoformat(data["to"].replace("Z", "+00:00")))
            else:
                fired = self.clock.advance(by=timedelta(seconds=float(data.get("by_seconds", 0))))
            return 200, {
                "now": self.clock.now.isoformat(),
                "fired": [_firing(f) for f in fired],
                "invocations": len(self.invocations) - before,
            }
        if path == "/_local/upload" and method == "POST":
            before = len(self.invocations)
            reports_before = self.rejection_reports(query["bucket"], query["key"])
            self.upload(query["bucket"], query["key"], body)
            written = [
                k
                for k, (modified, _) in self.rejection_reports(query["bucket"], query["key"]).items()
                if reports_before.get(k, ("", 0))[0] != modified
            ]
            return 200, {
                "bucket": query["bucket"],
                "bucket_name": self.stack.physical(query["bucket"])
                if query["bucket"] in self.stack.resources
                else query["bucket"],
                "key": query["key"],
                "bytes": len(body),
                "invocations": [_invocation(i) for i in self.invocations[before:]],
                # issue 26: how many lines the file's readers rejected, and where the report is
                "reports": [
                    {"key": k, "rejected": self.count_rejected(query["bucket"], k)} for k in sorted(written)
                ],
            }
        if path == "/_local/token" and method == "POST":
            return 200, {
                "token": self.mint_token(
                    sub=data.get("sub", "dev"),
                    scopes=data.get("scopes", []),
                    ttl=float(data.get("ttl", 3600)),
                    claims=data.get("claims"),
                )
            }
        return 404, {"message": f"no control endpoint {method} {path}"}


def _firing(f: Firing) -> dict[str, Any]:
    return {"schedule": f.schedule, "at": f.scheduled_time.isoformat(), "target": f.target_arn}


def _invocation(i: Invocation) -> dict[str, Any]:
    return {
        "function": i.function,
        "trigger": i.trigger,
        "records": i.records,
        "failures": i.failures,
        "error": i.error,
        "duration_ms": round(i.duration_ms, 1),
    }


class _SimulatedNow:
    """What the runtime installs as every function's clock (common.clock.install)."""

    def __init__(self, runtime: LocalRuntime) -> None:
        self._runtime = runtime

    def now(self) -> datetime:
        return self._runtime.clock.now


def _template_code(sam: dict[str, Any], base: Path) -> list[tuple[Path | None, str]]:
    """Each serverless function's code folder and handler (the forkserver's preload)."""
    default = ((sam.get("Globals") or {}).get("Function") or {}).get("Handler")
    resources = sam.get("Resources") or {}
    code: list[tuple[Path | None, str]] = []
    for logical_id, folder in templates.code_dirs(sam, base).items():
        handler = (resources[logical_id].get("Properties") or {}).get("Handler", default)
        if isinstance(handler, str):
            code.append((folder, handler))
    return code
