"""Benchmark of lab file parsing (not a test: pytest does not collect it).

    .venv/bin/python tests/benchmarks/bench_lab_files.py [ROWS] [REPEATS]

Parses a lab file of ROWS rows (default 20,000; 5 parameters per sample, mixed units) with
``sampling.domain.lab_files.parse_lab_file`` and, beside it, the raw cost of the same
bytes through ``csv.reader`` plus a ``Decimal`` per value (no checks). Prints rows/s of
each and their ratio (best of REPEATS interleaved runs, default 5, the garbage collector
paused while timing). Every row must be accepted, so both loops do the same rows.
"""

from __future__ import annotations

import csv
import gc
import io
import sys
import time
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for extra in (ROOT / "services", ROOT / "infra"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from sampling.domain.lab_files import parse_lab_file  # noqa: E402
from sampling.domain.strength import CLASSIFIED_TENANTS  # noqa: E402

HEADER = (
    "tenant,sample_id,account_id,collected_on,parameter,value,units,analysed_on,lab,kind,resample_of,method\n"
)
PARAMETERS = (
    ("bod", "220", "mg/l"),
    ("tss", "150", "g/m³"),
    ("phosphorus", "4500", "µg/l"),
    ("tkn", "30", "mg/l"),
    ("fog", "40", "mg/L"),
)


def lab_file(rows: int) -> bytes:
    lines = [HEADER]
    for n in range(rows):
        parameter, value, units = PARAMETERS[n % 5]
        sample = n // 5
        lines.append(
            f"pleasant-prairie-sewer,S-{sample},PP-{sample % 10_000:05d},2025-01-15,{parameter},{value},{units},"
            "2025-01-17,Acme Labs,routine,,SM 5210B\n"
        )
    return "".join(lines).encode()


def best(run: Callable[[], int], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.disable()
        began = time.perf_counter()
        run()
        times.append(time.perf_counter() - began)
        gc.enable()
    return min(times)


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    data = lab_file(rows)

    def parse() -> int:
        parsed = parse_lab_file(data, today=date(2025, 2, 3), tenants=CLASSIFIED_TENANTS)
        assert not parsed.rejected and len(parsed.rows) == rows
        return len(parsed.rows)

    def raw() -> int:
        reader = csv.reader(io.StringIO(data.decode("utf-8-sig")))
        next(reader)
        return sum(1 for row in reader if Decimal(row[5]) >= 0)

    assert parse() == raw() == rows
    parse_s = best(parse, repeats)
    raw_s = best(raw, repeats)
    print(f"lab file rows: {rows:,}")
    print(f"parse_lab_file : {rows / parse_s:12,.0f} rows/s")
    print(f"csv + Decimal  : {rows / raw_s:12,.0f} rows/s")
    print(f"ratio          : {parse_s / raw_s:12.1f}x the raw cost")


if __name__ == "__main__":
    main()
