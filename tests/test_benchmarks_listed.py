"""Every benchmark is on the page `make bench` writes (BENCHMARKS.md), or says why not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _report() -> object:
    spec = importlib.util.spec_from_file_location("bench_report", HERE / "benchmarks" / "report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_benchmark_is_run_by_make_bench_or_says_why_not() -> None:
    report = _report()
    listed = {name for name, _ in report.BENCHMARKS}  # type: ignore[attr-defined]
    by_hand = set(report.BY_HAND)  # type: ignore[attr-defined]
    found = {p.stem for p in (HERE / "benchmarks").glob("bench_*.py")}
    assert not listed & by_hand
    assert found == listed | by_hand, sorted(found ^ (listed | by_hand))


def test_each_benchmark_names_what_it_measures() -> None:
    report = _report()
    for name, _ in report.BENCHMARKS:  # type: ignore[attr-defined]
        title = report.title(name)  # type: ignore[attr-defined]
        assert 10 < len(title) < 160 and "not a test" not in title, (name, title)
