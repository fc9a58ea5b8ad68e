"""Run the project's benchmarks and write BENCHMARKS.md: every benchmark's figures, ratios
and targets, with the machine and the command, so a reader sees the performance on one page.

`make bench` runs this. Each benchmark runs in its own process, pinned to one core where
`taskset` exists (the ratios inside each are measured side by side in that one run), and
what it prints is kept whole in its section. A benchmark that fails is reported as failed
with its output; the page is written all the same and the exit status says so.

Usage: ``python tests/benchmarks/report.py [--out BENCHMARKS.md] [NAME ...]`` (names as
``bench_cycle``; none: all of ``BENCHMARKS``).
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

# (module, arguments): the order of `make bench`
BENCHMARKS: list[tuple[str, list[str]]] = [
    ("bench_rating", []),
    ("bench_metering", []),
    ("bench_schedules", []),
    ("bench_lab_files", []),
    ("bench_stormwater", []),
    ("bench_notices", []),
    ("bench_cycle", []),
    ("bench_invoker", []),
    ("bench_import_memory", []),
    ("bench_cost", []),
    ("bench_startup", []),
    ("bench_flow", [os.environ.get("FLOW_ACCOUNTS", "1000")]),
]
# run by hand, not by `make bench` (each says why)
BY_HAND = {
    "bench_dynamo_wire": "the DynamoDB client's wire work alone, a part measured in isolation",
    "bench_imports": "50 MB files of every kind: most of an hour on a two-core machine",
}


def machine() -> list[str]:
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = ""
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        total = next((ln for ln in meminfo.read_text().splitlines() if ln.startswith("MemTotal")), "")
        if total:
            memory = f"{int(total.split()[1]) / 1024 / 1024:.0f} GB"
    commit = subprocess.run(  # noqa: S603 - git of this checkout
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],  # noqa: S607
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return [
        f"- machine: {cpu}, {os.cpu_count()} cores, {memory}; {platform.system()} {platform.release()}",
        f"- Python {platform.python_version()}; commit `{commit or 'unknown'}`",
        f"- written {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average when it started {load:.2f}",
    ]


def title(module: str) -> str:
    """The first sentence of the benchmark's docstring."""
    tree = ast.parse((HERE / f"{module}.py").read_text(encoding="utf-8"))
    paragraph = (ast.get_docstring(tree) or module).strip().split("\n\n")[0].replace("\n", " ")
    return re.split(r"(?<=[.:])\s|\s\(not a test", paragraph)[0].rstrip(".:")


def run(module: str, args: list[str]) -> tuple[int, float, str, str]:
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    command = [*pin, sys.executable, f"tests/benchmarks/{module}.py", *args]
    began = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)  # noqa: S603
    seconds = time.perf_counter() - began
    shown = " ".join([*pin, ".venv/bin/python", f"tests/benchmarks/{module}.py", *args])
    output = done.stdout + (f"\n[stderr]\n{done.stderr[-4000:]}" if done.returncode and done.stderr else "")
    return done.returncode, seconds, shown, output.rstrip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "BENCHMARKS.md")
    parser.add_argument("names", nargs="*")
    options = parser.parse_args(argv)
    chosen = [b for b in BENCHMARKS if not options.names or b[0] in options.names]
    sections: list[str] = []
    failed: list[str] = []
    summary: list[str] = []
    for module, args in chosen:
        print(f"== {module} ...", flush=True)
        rc, seconds, command, output = run(module, args)
        print(output, flush=True)
        status = "ran" if rc == 0 else f"FAILED (exit {rc})"
        if rc:
            failed.append(module)
        met = "targets met" in output and "NOT MET" not in output
        verdict = "targets met" if met else ("TARGETS NOT MET" if "NOT MET" in output else status)
        summary.append(
            f"| [{module}](#{module.replace('_', '-')}) | {title(module)} | {verdict} | {seconds:.0f} s |"
        )
        sections.append(
            f"## {module}\n\n{title(module)}.\n\n"
            f"`{command}` ({status} in {seconds:.0f} s)\n\n```text\n{output}\n```\n"
        )
    page = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`tests/benchmarks/report.py`): each benchmark in its own process",
        "on one core, every ratio measured side by side within that one run. Figures move with",
        "the machine and its load; the ratios are what the targets are stated in.",
        "",
        *machine(),
        "",
        "| benchmark | what it measures | verdict | time |",
        "|---|---|---|---|",
        *summary,
        "",
        *sections,
    ]
    options.out.write_text("\n".join(page), encoding="utf-8")
    print(f"wrote {options.out}" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
