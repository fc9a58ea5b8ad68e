"""Benchmarks of billing's import files (not a test: pytest does not collect it). Prints
figures, asserts nothing.

    .venv/bin/python tests/benchmarks/bench_imports.py [payments|accounts|all] [MB] [inproc|runtime]

inproc (default): the function's use case on a file of about MB megabytes (default 50),
streamed in 1 MB chunks as the handler streams the S3 body, against a table that keeps
nothing (``NullTable``): the function's own peak memory and time, without an emulator.

runtime: the file uploaded on the local runtime (moto server, the real template), from
upload to drained; moto's writes bound it (run it with a few MB). A payments file of
lines for accounts billing does not know (every line waits in suspense: the heaviest case,
three items a line), an accounts file of new accounts. Prints lines, seconds, lines/s, the
peak RSS of the billing file worker (the process that runs the function's handler, from
/proc: ``procs.peak_rss_mib``) beside the function's ``MemorySize`` and ``Timeout`` from
template.yaml, and moto's raw BatchWriteItem rate in the same run beside the pipeline's
item rate (the bound of this path: it is writes).
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
for extra in (ROOT / "services", ROOT / "infra", Path(__file__).resolve().parent):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from bench_metering import raw_batch_write_rate  # noqa: E402
from procs import peak_rss_mib, reset_peaks, workers  # noqa: E402

FUNCTION = "BillingOnFileUploadedFunction"
TENANT = "grafton-sewer"


def function_limits() -> tuple[int, int]:
    """The function's MemorySize (MB) and Timeout (s), its own or the template's Globals."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    doc = yaml.load((ROOT / "template.yaml").read_text(), Loader=Loader)  # noqa: S506 - SafeLoader subclass
    glob = doc.get("Globals", {}).get("Function", {})
    props = doc["Resources"][FUNCTION]["Properties"]
    return int(props.get("MemorySize", glob.get("MemorySize", 128))), int(
        props.get("Timeout", glob.get("Timeout", 3))
    )


def payments_file(megabytes: float) -> tuple[bytes, int]:
    lines = ["tenant,account_id,reference,paid_on,amount\n"]
    size, n = len(lines[0]), 0
    while size < megabytes * 1_000_000:
        line = f"{TENANT},U-{n:07d},R{n:08d},2026-10-05,{10 + n % 90}.{n % 100:02d}\n"  # 900,000 in 50 MB
        lines.append(line)
        size += len(line)
        n += 1
    return "".join(lines).encode(), n


def accounts_file(megabytes: float) -> tuple[bytes, int]:
    header = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,parcel_id,owner_name\n"
    lines = [header]
    size, n = len(header), 0
    while size < megabytes * 1_000_000:
        line = (
            f"{TENANT},GR-{n:07d},Resident {n},{n} Main Street,PO Box {n} Grafton WI,53024,2026-01-01,"
            f"residential,5/8,GP-{n:07d},Owner {n}\n"
        )
        lines.append(line)
        size += len(line)
        n += 1
    return "".join(lines).encode(), n


def bench(kind: str, megabytes: float) -> None:
    from sewerbill.local import LocalRuntime

    memory, timeout = function_limits()
    data, lines = payments_file(megabytes) if kind == "payments" else accounts_file(megabytes)
    print(
        f"{kind} file: {len(data) / 1e6:,.1f} MB, {lines:,} lines; {FUNCTION} MemorySize {memory} MB, Timeout {timeout} s"
    )
    with LocalRuntime.start(
        ROOT / "template.yaml",
        start_time=datetime(2026, 11, 2, 15, tzinfo=UTC),
        parameters={"TariffsDir": str(ROOT / "infra" / "tariffs")},
    ) as rt:
        raw_wall, _ = raw_batch_write_rate(rt.client("dynamodb"), 10_000, drop=True)
        # a small file first, so the worker exists (and its cold start is not in the peak)
        small, _ = payments_file(0.001) if kind == "payments" else accounts_file(0.001)
        rt.upload("UploadsBucket", f"{kind}/warm.csv", small)
        pids = workers(rt)
        reset_peaks(pids)
        before = len(rt.invocations)
        began = time.perf_counter()
        rt.upload("UploadsBucket", f"{kind}/bench.csv", data)
        took = time.perf_counter() - began
        _, worker_peak, _ = peak_rss_mib(workers(rt))
        failed = [i for i in rt.invocations[before:] if i.failures or i.error]
        items = lines * (3 if kind == "payments" else 3)
        print(
            f"  {lines:,} lines in {took:,.1f} s ({lines / took:,.0f} lines/s, {items / took:,.0f} items/s;"
            f" moto raw BatchWriteItem {raw_wall:,.0f} items/s, {raw_wall / (items / took):.1f}x)"
        )
        print(f"  peak RSS of the billing file worker: {worker_peak:,.0f} MiB (MemorySize {memory} MB)")
        print(f"  failed invocations: {len(failed)}; dead letters: {len(rt.dead_letters)}")


class NullTable:
    """A DynamoDB client that keeps nothing and finds nothing: what the function itself
    holds, without an emulator's table in the same process (in Lambda the table is not in
    the function's memory either). Counts the items it was sent."""

    def __init__(self) -> None:
        self.items = 0
        self.calls = 0

    def batch_get_item(self, **_: object) -> dict[str, object]:
        self.calls += 1
        return {"Responses": {}}

    def batch_write_item(self, RequestItems: dict[str, list[object]]) -> dict[str, object]:  # noqa: N803
        self.calls += 1
        self.items += sum(len(v) for v in RequestItems.values())
        return {}

    def query(self, **_: object) -> dict[str, object]:
        self.calls += 1
        return {"Items": []}

    def update_item(self, **_: object) -> dict[str, object]:
        self.calls += 1
        return {}


class NullS3:
    def put_object(self, **kwargs: object) -> None:
        body = kwargs["Body"]
        while body.read(1 << 20):  # type: ignore[attr-defined]
            pass


def chunked(data: bytes, size: int = 1 << 20):  # type: ignore[no-untyped-def]
    """An S3 body's ``iter_chunks``: the file a megabyte at a time."""
    view = memoryview(data)
    for start in range(0, len(data), size):
        yield bytes(view[start : start + size])


def bench_inproc(kind: str, megabytes: float) -> None:
    """The function's use case on the whole file, streamed in 1 MB chunks, against
    :class:`NullTable`: the function's own peak memory (the file's bytes, held by this
    benchmark, are subtracted: they are S3's in Lambda) and its CPU time without the
    emulator's."""
    from billing.adapters.repository import BillingRepo
    from billing.app.accounts import bills_from_rules, take_in_account_file
    from billing.app.payments import release_waiting, take_in_lockbox_file
    from common.reports import ReportStream
    from common.tariff_files import default_tariffs_dir, load_tariff_book

    memory, _ = function_limits()
    data, lines = payments_file(megabytes) if kind == "payments" else accounts_file(megabytes)
    book = load_tariff_book(default_tariffs_dir())
    now = datetime(2026, 11, 2, 15, tzinfo=UTC)
    table = NullTable()
    repo = BillingRepo(table, "bench")
    report = ReportStream(NullS3(), bucket="b", service="billing", parts=(kind, "bench"), count_by="column")
    reset_peaks()
    base, _, _ = peak_rss_mib()
    began, cpu = time.perf_counter(), time.process_time()
    if kind == "payments":
        result = take_in_lockbox_file(
            chunked(data),
            run="bench",
            source="payments/bench.csv",
            repo=repo,
            tenants=book.tenants,
            now=now,
            book=book,
            report=report,
        )
    else:
        result = take_in_account_file(
            chunked(data),
            source="accounts/bench.csv",
            run="bench",
            repo=repo,
            tenants=book.tenants,
            now=now,
            rules=bills_from_rules(book, now.date()),
            report=report,
            release=lambda t, ids: release_waiting(t, ids, repo=repo, now=now, book=book),
            redelivered=False,
        )
    report.close()
    took, cpu = time.perf_counter() - began, time.process_time() - cpu
    peak, _, _ = peak_rss_mib()
    print(
        f"{kind} file in-process (no emulator): {len(data) / 1e6:,.1f} MB, {lines:,} lines in {took:,.1f} s"
        f" ({cpu:,.1f} s CPU, {lines / took:,.0f} lines/s); {result.counts.as_dict()}"
    )
    print(
        f"  peak RSS {peak:,.0f} MiB, of which the file's bytes held by the benchmark {base:,.0f} MiB before;"
        f" growth while taking it in {peak - base:,.0f} MiB (MemorySize {memory} MB);"
        f" {table.items:,} items written in {table.calls:,} calls"
    )


def main(argv: list[str]) -> None:
    what = argv[1] if len(argv) > 1 else "all"
    megabytes = float(argv[2]) if len(argv) > 2 else 50.0
    where = argv[3] if len(argv) > 3 else "inproc"
    for kind in ("payments", "accounts"):
        if what in (kind, "all"):
            (bench_inproc if where == "inproc" else bench)(kind, megabytes)


if __name__ == "__main__":
    main(sys.argv)
