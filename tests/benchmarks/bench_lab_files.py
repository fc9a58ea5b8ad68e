"""Benchmarks of lab files (not a test: pytest does not collect it). Prints figures, asserts nothing.

    .venv/bin/python tests/benchmarks/bench_lab_files.py [parse|runtime|all] [ROWS] [REPEATS]

parse: parses a lab file of ROWS rows (default 20,000; 5 parameters per sample, mixed units) with
``sampling.domain.lab_files.parse_lab_file`` and, beside it, the raw cost of the same
bytes through ``csv.reader`` plus a ``Decimal`` per value (no checks). Prints rows/s of
each and their ratio (best of REPEATS interleaved runs, default 5, the garbage collector
paused while timing). Every row must be accepted, so both loops do the same rows.

runtime (issue 10): on the local runtime (moto server, the real template), a lab file of
1,000 rows for 50 registered Pleasant Prairie accounts (4 samples of 5 parameters each)
from upload under ``lab/`` to drained (stored, every account classified, the events
published and kept by billing): rows/s, the process's CPU seconds (steadier than the wall
clock on a shared machine) and peak RSS, then the same file again (nothing new);
beside moto's raw BatchWriteItem rate in the same run (``bench_metering``'s scratch
table of 10,000 items) and the ratio.
"""

from __future__ import annotations

import csv
import gc
import io
import json
import resource
import sys
import time
import urllib.request
from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for extra in (ROOT / "services", ROOT / "infra"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from bench_metering import raw_batch_write_rate  # noqa: E402

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


def bench_parse(rows: int, repeats: int) -> None:
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


# ---------------------------------------------------------------- lab files on the local runtime

PP = "pleasant-prairie-sewer"


def runtime_lab_file(accounts: int, samples_per_account: int) -> str:
    """Every account's samples on consecutive January days, 5 parameters each (all accepted)."""
    lines = [HEADER]
    for a in range(accounts):
        for s in range(samples_per_account):
            sample = f"RT-{a:03d}-{s}"
            for parameter, value, units in PARAMETERS:
                lines.append(
                    f"{PP},{sample},RT-{a:03d},2025-01-{6 + s:02d},{parameter},{value},{units},"
                    "2025-01-20,Acme Labs,routine,,SM 5210B\n"
                )
    return "".join(lines)


def bench_runtime(accounts: int = 50, samples_per_account: int = 4) -> None:
    from sewerbill.local import LocalRuntime

    rows = accounts * samples_per_account * len(PARAMETERS)
    print("a lab file on the local runtime (moto server, template.yaml), upload -> drained:")
    with LocalRuntime.start(
        ROOT / "template.yaml",
        start_time=datetime(2025, 2, 3, 15, tzinfo=UTC),
        parameters={"TariffsDir": str(ROOT / "infra" / "tariffs")},
    ) as rt:
        raw = raw_batch_write_rate(rt.client("dynamodb"), 10_000)
        print(f"  moto raw BatchWriteItem (25 a call)     : {raw:>8,.0f} items/s")
        token = rt.mint_token(sub="bench", claims={"role": "staff", "tenants": [PP]})
        for a in range(accounts):
            req = urllib.request.Request(
                f"{rt.gateway_url}/staff/{PP}/sampling-points/RT-{a:03d}",
                data=json.dumps({"sampling_point": f"MH-{a}"}).encode(),
                method="PUT",
                headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
            )
            with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - the local gateway
                assert resp.status == 200
        rt.drain()
        data = runtime_lab_file(accounts, samples_per_account)
        before = len(rt.invocations)
        cpu_began = time.process_time()
        began = time.perf_counter()
        rt.upload("UploadsBucket", "lab/bench.csv", data)
        first = time.perf_counter() - began
        cpu = time.process_time() - cpu_began
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        began = time.perf_counter()
        rt.upload("UploadsBucket", "lab/bench-again.csv", data)
        again = time.perf_counter() - began
        ddb = rt.client("dynamodb")
        pages = ddb.get_paginator("scan").paginate(TableName=rt.resource("SamplingTable"))
        items = [i for p in pages for i in p["Items"]]
        results = sum(1 for i in items if i["sk"]["S"].startswith("RESULT#"))
        classified = sum(1 for i in items if i["sk"]["S"] == "CLASSIFICATION")
        failed = [i for i in rt.invocations[before:] if i.failures or i.error]
        rate = rows / first
        print(
            f"  {rows:>6,} rows, {accounts} accounts: {first:6.2f} s ({cpu:.2f} s CPU), {rate:>7,.0f} rows/s; "
            f"results stored {results:,}, accounts classified {classified}; peak RSS {rss:,.0f} MiB; "
            f"raw/pipeline {raw / rate:.1f}x"
        )
        print(f"  the same file again (another key): {again:6.2f} s")
        print(f"  failed invocations: {len(failed)}; dead letters: {len(rt.dead_letters)}")


def main(argv: list[str]) -> None:
    what = argv[1] if len(argv) > 1 else "all"
    rows = int(argv[2]) if len(argv) > 2 else 20_000
    repeats = int(argv[3]) if len(argv) > 3 else 5
    if what in ("parse", "all"):
        bench_parse(rows, repeats)
    if what in ("runtime", "all"):
        bench_runtime()


if __name__ == "__main__":
    main(sys.argv)
