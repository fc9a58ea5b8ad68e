"""The AWS endpoint the local stack runs against.

By default moto in server mode on a free loopback port (pure Python, no Docker). When
`AWS_ENDPOINT_URL` is set (LocalStack, or any other emulator), that endpoint is used and
nothing is started; `AWS_ENDPOINT_URL_<SERVICE>` (for example DynamoDB Local through
`AWS_ENDPOINT_URL_DYNAMODB`) overrides it per service, as botocore does.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.config import Config

REGION = "us-east-1"
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}

_SERVICE_ENV = {"dynamodbstreams": "DYNAMODB_STREAMS"}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Emulator:
    """An AWS-compatible endpoint plus a client factory bound to it."""

    endpoint_url: str
    region: str = REGION
    started_here: bool = False
    credentials: dict[str, str] = field(default_factory=lambda: dict(FAKE_CREDENTIALS))
    _server: Any = None
    _process: subprocess.Popen[bytes] | None = None

    @classmethod
    def start(cls, mode: str | None = None, region: str = REGION) -> Emulator:
        """Use AWS_ENDPOINT_URL if set; otherwise start moto ("thread" or "process" mode)."""
        external = os.environ.get("AWS_ENDPOINT_URL")
        if external:
            creds = {k: os.environ[k] for k in FAKE_CREDENTIALS if os.environ.get(k)} or dict(
                FAKE_CREDENTIALS
            )
            return cls(endpoint_url=external.rstrip("/"), region=region, credentials=creds)
        mode = mode or os.environ.get("SEWERBILL_LOCAL_EMULATOR", "thread")
        if mode == "process":
            return cls._start_process(region)
        return cls._start_thread(region)

    @classmethod
    def _start_thread(cls, region: str) -> Emulator:
        from moto.server import ThreadedMotoServer

        from sewerbill.local import motoshim

        motoshim.install()
        # moto logs every request through werkzeug; keep the console for our progress lines.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        endpoint = f"http://127.0.0.1:{port}"
        motoshim.serve_in_process(endpoint)
        return cls(endpoint_url=endpoint, region=region, started_here=True, _server=server)

    @classmethod
    def _start_process(cls, region: str) -> Emulator:
        from sewerbill.local import motoshim

        # Here too, so the refusal is read in this process rather than lost with the child's stderr.
        motoshim.require_moto_version()
        port = free_port()
        # moto_server with the runtime's shim (motoshim) installed in that process too.
        boot = "import sys; from sewerbill.local import motoshim; motoshim.install(); from moto.server import main; main(sys.argv[1:])"
        process = subprocess.Popen(  # noqa: S603 - our own interpreter's moto
            [sys.executable, "-c", boot, "-H", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1).close()  # noqa: S310 - loopback
                break
            except OSError:
                if process.poll() is not None:
                    raise RuntimeError("moto_server exited during start-up") from None
                time.sleep(0.1)
        else:
            process.kill()
            raise RuntimeError("moto_server did not start within 30 s")
        return cls(endpoint_url=url, region=region, started_here=True, _process=process)

    def stop(self) -> None:
        if self._server is not None:
            from sewerbill.local import motoshim

            motoshim.stop_serving(self.endpoint_url)
            self._server.stop()
            self._server = None
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
            self._process = None

    def observes_activity(self, kind: str) -> bool:
        """Whether `listen` hears of what arrives in queues ("sqs") or streams ("stream"):
        only for moto running in this process, and only where no endpoint overrides it."""
        services = {"sqs": ("sqs",), "stream": ("dynamodb", "dynamodbstreams")}[kind]
        return self._server is not None and all(self.endpoint_for(s) == self.endpoint_url for s in services)

    def listen(self, listener: Callable[[str, str], None]) -> contextlib.ExitStack:
        """Call `listener(kind, name)` on activity (see motoshim) until the stack is closed."""
        stack = contextlib.ExitStack()
        if self._server is not None:
            from sewerbill.local import motoshim

            stack.enter_context(motoshim.listening(listener))
        return stack

    def endpoint_for(self, service: str) -> str:
        key = _SERVICE_ENV.get(service, service.upper())
        return os.environ.get(f"AWS_ENDPOINT_URL_{key}") or self.endpoint_url

    def client(self, service: str) -> Any:
        return boto3.client(
            service,
            endpoint_url=self.endpoint_for(service),
            region_name=self.region,
            aws_access_key_id=self.credentials["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=self.credentials["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=self.credentials.get("AWS_SESSION_TOKEN"),
            config=Config(retries={"max_attempts": 3, "mode": "standard"}),
        )

    def function_env(self) -> dict[str, str]:
        """What a handler needs in its environment to reach this endpoint."""
        env = {
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            **self.credentials,
        }
        for key, value in os.environ.items():
            if key.startswith("AWS_ENDPOINT_URL_"):
                env[key] = value
        return env
