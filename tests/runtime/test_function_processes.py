"""Each function runs in a process of its own (the local runtime's default, as in Lambda):
its environment and modules cannot reach another function's, and its process ends with the
runtime. Proved on the fixture template."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest

from conftest import FIXTURES, START
from sewerbill.local import LocalRuntime
from sewerbill.local.invoker import WorkerExited


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        FIXTURES / "template.yaml", start_time=START, stack_name="fixture", isolate="process", gateway=False
    ) as runtime:
        yield runtime


def test_each_function_runs_in_a_process_of_its_own(rt: LocalRuntime) -> None:
    rt.upload("UploadsBucket", "reads/2025-01.csv", b"meter,gal\nm1,100\n")

    pids = rt.invoker.worker_pids()
    assert {"IngestFunction", "ConsumerFunction"} <= set(pids)  # the upload's chain ran
    assert len(set(pids.values())) == len(pids)
    assert os.getpid() not in pids.values()
    assert rt.invoker.call_entry("IngestFunction", "os.getpid") == pids["IngestFunction"]
    assert [i.error for i in rt.invocations] == [None] * len(rt.invocations)


def test_a_function_sees_its_own_variables_only(rt: LocalRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONLY_IN_THE_RUNTIME", "1")  # before the API function's cold start
    rt.invoker.configure("IngestFunction", {"ONLY_FOR_INGEST": "1"})

    def seen(function: str, name: str) -> str | None:
        value = rt.invoker.call_entry(function, "os.environ.get", name)
        return None if value is None else str(value)

    assert seen("IngestFunction", "UPLOADS_BUCKET") == rt.resource("UploadsBucket")  # its template variable
    assert seen("IngestFunction", "ONLY_FOR_INGEST") == "1"
    assert seen("IngestFunction", "AWS_LAMBDA_FUNCTION_NAME") == "fixture-IngestFunction"
    # Another function has neither Ingest's variables nor the runtime's own.
    assert seen("ApiFunction", "UPLOADS_BUCKET") is None
    assert seen("ApiFunction", "ONLY_FOR_INGEST") is None
    assert seen("ApiFunction", "ONLY_IN_THE_RUNTIME") is None
    assert seen("ApiFunction", "AWS_LAMBDA_FUNCTION_NAME") == "fixture-ApiFunction"
    assert "ONLY_FOR_INGEST" not in os.environ  # nor does the runtime get the function's
    rt.invoker.configure("IngestFunction")


def test_a_function_whose_process_dies_gets_a_new_one(rt: LocalRuntime) -> None:
    before = rt.invoker.call_entry("IngestFunction", "os.getpid")
    with pytest.raises(WorkerExited):
        rt.invoker.call_entry("IngestFunction", "os._exit", 3)

    assert rt.invoke("IngestFunction", {"Records": []}).error is None  # a cold start
    assert rt.invoker.worker_pids()["IngestFunction"] not in (None, before)
    assert not _alive(before)


def test_a_function_whose_process_is_killed_while_idle_gets_a_new_one(rt: LocalRuntime) -> None:
    """The runtime asks whether a function's process still runs before each invocation
    (`_Worker.usable`, the answer `Process.is_alive()` gives): killed from outside between
    invocations, it is replaced by a cold start instead of failing the invocation."""
    assert rt.invoke("IngestFunction", {"Records": []}).error is None
    worker = rt.invoker._workers["IngestFunction"]
    assert worker.usable and worker.process.is_alive()
    os.kill(worker.process.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while worker.usable and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not worker.usable and not worker.process.is_alive()

    assert rt.invoke("IngestFunction", {"Records": []}).error is None  # a cold start
    assert rt.invoker.worker_pids()["IngestFunction"] != worker.process.pid


def test_stopping_the_runtime_stops_every_function_process(rt: LocalRuntime) -> None:
    pids = [pid for pid in rt.invoker.worker_pids().values() if pid is not None]
    assert len(pids) >= 3

    rt.stop()  # the fixture's stop, again at its end, does nothing more

    deadline = time.monotonic() + 10
    while (alive := [pid for pid in pids if _alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive == []
    assert rt.invoker.worker_pids() == {}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
