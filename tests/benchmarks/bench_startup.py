"""Start-up of `sewerbill local up` until its gateway answers, beside moto's server alone (issue 31).

What a developer waits for: from the command's start until the gateway answers a request
(the portal's page), with the template already translated once (its translation is cached
by content: the first start after a change of template.yaml translates it again; its time
is printed too). Each run is a fresh process; `sewerbill local up` and moto's own server
(`python -m moto.server`, until it answers) run in turn, and the medians are compared.

Run: ``.venv/bin/python tests/benchmarks/bench_startup.py [RUNS]`` (default 5).
"""

from __future__ import annotations

import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARGET_S = 2.0


def _answered(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).read()  # noqa: S310 - loopback
            return
        except OSError:
            time.sleep(0.01)
    raise RuntimeError(f"{url} did not answer")


def local_up(env: dict[str, str]) -> float:
    """Seconds from exec of `sewerbill local up` until its gateway serves the portal."""
    began = time.monotonic()
    child = subprocess.Popen(  # noqa: S603 - our own interpreter and package
        [sys.executable, "-m", "sewerbill", "local", "up"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert child.stdout is not None
        for line in child.stdout:
            found = re.search(r"gateway\s+(http://\S+)", line)
            if found:
                _answered(found.group(1) + "/portal/", began + 120)
                return time.monotonic() - began
        raise RuntimeError("sewerbill local up printed no gateway")
    finally:
        child.send_signal(signal.SIGINT)
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()


def moto_alone(port: int = 0) -> float:
    """Seconds from exec of moto's server until it answers (the emulator with nothing on it)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    began = time.monotonic()
    child = subprocess.Popen(  # noqa: S603 - our own interpreter's moto
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _answered(f"http://127.0.0.1:{port}/moto-api/", began + 60)
        return time.monotonic() - began
    finally:
        child.terminate()
        child.wait(timeout=30)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}
    with tempfile.TemporaryDirectory() as cold_cache:
        first = local_up({**env, "SEWERBILL_CACHE_DIR": cold_cache})  # translates, then keeps it
        warm_env = {**env, "SEWERBILL_CACHE_DIR": cold_cache}
        ups, motos = [], []
        for _ in range(runs):
            ups.append(local_up(warm_env))
            motos.append(moto_alone())
    up, moto = statistics.median(ups), statistics.median(motos)
    print(
        f"sewerbill local up until the gateway answers: median {up:.2f} s of {runs} (min {min(ups):.2f}, max {max(ups):.2f})"
    )
    print(f"  first start after a template change (translation not cached): {first:.2f} s")
    print(f"moto server alone until it answers: median {moto:.2f} s")
    print(f"ratio (local up / moto alone): {up / moto:.1f}x; target: local up under {TARGET_S:.0f} s")
    print("targets met" if up < TARGET_S else "TARGETS NOT MET")


if __name__ == "__main__":
    main()
