"""The quarter a utility waits for, end to end on the local runtime (embedded default).

    .venv/bin/python tests/benchmarks/bench_flow.py [N]        (N Grafton accounts, 1,000)

From upload to every bill delivered: N Grafton accounts (every other one opted in to email),
their meters and the quarter's reads uploaded as files (``accounts/``, ``meters/``,
``reads/``), the simulated clock moved to Grafton's cycle (2028-01-01), every bill issued
and delivered (an email with its PDF through SES, or a letter in the day's mail), then to the
next morning's print batch assembled. Nothing is paused: every function works as it would
for a utility, each in its worker process (the runtime's default, ``isolate="process"``).

Printed: the wall time of each step and in all; the CPU seconds and the peak memory of the
process tree (this process, moto and the runtime, beside its workers: `procs`); the AWS calls
the functions made, by service and operation, counted by the runtime as it answers each of
a worker's calls (the fault plans' hook, `sewerbill.local.faults`, here counting and never
killing), and the notices function's calls per bill. Beside it, in the same run, the raw
cost of the same writes: every item the flow left in the stack's tables written again
(under a ``RAW#`` partition key) with BatchWriteItem, 25 a call, by a client made as the
bulk paths make theirs (``common.dynamo.BULK_CLIENT``), and every object it left in the
buckets put again (under ``raw/``), and the ratio of the two. Targets (issue 31): 10,000
accounts in under 60 s and within 2x of the raw writes.

Prints figures, asserts only that every bill was delivered (timed assertions are not tests).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for extra in (ROOT / "services", ROOT / "infra", Path(__file__).resolve().parent):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from procs import cpu_seconds, peak_rss_mib, reset_peaks, workers  # noqa: E402

from sewerbill.local import LocalRuntime  # noqa: E402

GR = "grafton-sewer"
START = datetime(2028, 1, 1, 6, tzinfo=UTC)  # midnight in Grafton, the quarter's last read day
CYCLE = datetime(2028, 1, 1, 13, 30, tzinfo=UTC)  # Grafton's cycle fires at 13:00 UTC
PRINT_RUN = datetime(2028, 1, 2, 12, tzinfo=UTC)  # 05:00 Chicago: the print batch of 01-01
ACCOUNTS_HEADER = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,email,email_opt_in\n"
METERS_HEADER = "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading,size,removed_on,final_reading\n"
READS_HEADER = "tenant,meter_id,read_on,reading,read_type\n"


def gallons(i: int) -> int:
    return 8000 + (i * 37) % 30000


def accounts_file(n: int) -> str:
    return ACCOUNTS_HEADER + "".join(
        f"{GR},GA-{i:06d},Customer {i},{i} Main St,{i} Main St,530{i % 100:02d},2027-10-01,residential,5/8,"
        + (f"c{i}@example.org,true\n" if i % 2 == 0 else ",\n")
        for i in range(n)
    )


def meters_file(n: int) -> str:
    return METERS_HEADER + "".join(
        f"{GR},GM-{i:06d},GA-{i:06d},water,gal,7,2027-10-01,1000,5/8,,\n" for i in range(n)
    )


def reads_file(n: int) -> str:
    return READS_HEADER + "".join(
        f"{GR},GM-{i:06d},2028-01-01,{1000 + gallons(i)},actual\n" for i in range(n)
    )


# A worker's call as the runtime names it (`sewerbill.local.invoker._call_name`: a JSON
# protocol's operation, else the HTTP method and path: S3's, and SES's query protocol, which
# posts to the root path) as (service, operation).
SQS_OPS = {"SendMessage", "SendMessageBatch", "DeleteMessage", "ReceiveMessage", "GetQueueUrl"}


def label(name: str) -> tuple[str, str]:
    if " " in name:
        method, _, path = name.partition(" ")
        return ("ses", "send") if method == "POST" and not path else ("s3", method)
    if name in SQS_OPS:
        return "sqs", name
    if name == "PutEvents":
        return "events", name
    return "dynamodb", name


class CallCounter:
    """Counts every AWS call each function's worker makes (a fault plan that never kills)."""

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str, str]] = Counter()  # (function, service, operation)

    def watch(self, function: str) -> Any:
        calls = self.calls

        class Watch:
            def kill_before_call(self, name: str) -> bool:
                calls[(function, *label(name))] += 1
                return False

            def kill_before_ack(self) -> bool:
                return False

            def describe(self) -> str:
                return "counting"

        return Watch()

    def by_service(self, prefix: str = "") -> Counter[str]:
        out: Counter[str] = Counter()
        for (function, service, _), n in self.calls.items():
            if function.startswith(prefix):
                out[service] += n
        return out

    def of(self, function: str) -> Counter[str]:
        return Counter({f"{s}:{op}": n for (f, s, op), n in self.calls.items() if f == function})


def scan_all(client: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for page in client.get_paginator("scan").paginate(TableName=table):
        items.extend(page["Items"])
    return items


def raw_writes(rt: Any) -> tuple[float, int, float, int]:
    """Every item the flow left in the stack's tables and every object it left in its
    buckets, written again directly: (DynamoDB seconds, items, S3 seconds, objects)."""
    from bench_cycle import bulk_client

    ddb = bulk_client(rt)
    tables = [rt.resource(r) for r, kind in rt.stack.types.items() if kind == "AWS::DynamoDB::Table"]
    copies: list[tuple[str, list[dict[str, Any]]]] = []
    for table in tables:
        items = [{**i, "pk": {"S": "RAW#" + i["pk"]["S"]}} for i in scan_all(ddb, table) if "pk" in i]
        copies.append((table, items))
    s3 = rt.client("s3")
    buckets = [rt.resource(r) for r, kind in rt.stack.types.items() if kind == "AWS::S3::Bucket"]
    bodies: list[tuple[str, str, bytes]] = []
    for bucket in buckets:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for obj in page.get("Contents", []):
                body = s3.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read()
                bodies.append((bucket, obj["Key"], body))
    began = time.perf_counter()
    written = 0
    for table, items in copies:
        for start in range(0, len(items), 25):
            requests = [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]
            while requests:
                resp = ddb.batch_write_item(RequestItems={table: requests})
                requests = resp.get("UnprocessedItems", {}).get(table, [])
        written += len(items)
    ddb_s = time.perf_counter() - began
    began = time.perf_counter()
    for bucket, key, body in bodies:
        s3.put_object(Bucket=bucket, Key=f"raw/{key}", Body=body)
    s3_s = time.perf_counter() - began
    return ddb_s, written, s3_s, len(bodies)


def main() -> None:
    import tempfile

    from sewerbill.cli.demo_year import services_log

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    log = Path(tempfile.gettempdir()) / f"bench-flow-{n}.log"
    with services_log(log, verbose=False):
        lines = run(n)
    for line in lines:
        print(line)
    print(f"  (the services' logs: {log})")
    if lines[-1].startswith("FAILED"):
        raise SystemExit(1)


def run(n: int) -> list[str]:
    counter = CallCounter()
    steps: list[tuple[str, float]] = []
    with LocalRuntime.start(
        ROOT / "template.yaml",
        start_time=START,
        parameters={"TariffsDir": str(ROOT / "infra" / "tariffs")},
    ) as rt:
        rt.invoker.faults = counter
        files = {
            "accounts/q4.csv": accounts_file(n),
            "meters/q4.csv": meters_file(n),
            "reads/q4.csv": reads_file(n),
        }
        reset_peaks(workers(rt))
        cpu_began = cpu_seconds(workers(rt))
        began = time.perf_counter()
        for key, body in files.items():
            step = time.perf_counter()
            rt.upload("UploadsBucket", key, body)
            steps.append((f"upload {key}", time.perf_counter() - step))
        step = time.perf_counter()
        rt.clock.advance(to=CYCLE)
        rt.drain(max_seconds=3600)
        steps.append(("the cycle: bills issued and delivered", time.perf_counter() - step))
        step = time.perf_counter()
        rt.clock.advance(to=PRINT_RUN)
        rt.drain(max_seconds=3600)
        steps.append(("next morning: the print batch", time.perf_counter() - step))
        flow_s = time.perf_counter() - began
        pids = workers(rt)
        flow_cpu = cpu_seconds(pids) - cpu_began
        own, largest, total = peak_rss_mib(pids)
        ddb = rt.client("dynamodb")
        notices = scan_all(ddb, rt.resource("NoticesTable"))
        sent = Counter(
            i["channel"]["S"]
            for i in notices
            if i["pk"]["S"].startswith("NOTICE#") and i.get("status", {}).get("S") == "sent"
        )
        batch = next((i for i in notices if i["pk"]["S"] == "BATCH#2028-01-01"), None)
        letters = int(batch["letters"]["N"]) if batch else 0
        dead = len(rt.dead_letters)
        raw_ddb_s, raw_items, raw_s3_s, raw_objects = raw_writes(rt)
    delivered = sent["email"] + sent["mail"]
    out: list[str] = []
    raw_s = raw_ddb_s + raw_s3_s
    out.append(
        f"a quarter of {n:,} Grafton accounts, upload to every bill delivered (local runtime, embedded default)"
    )
    for name, seconds in steps:
        out.append(f"  {name:44s} {seconds:8.2f} s")
    out.append(f"  {'all':44s} {flow_s:8.2f} s   CPU {flow_cpu:.2f} s (process tree)")
    out.append(
        f"  bills delivered: {sent['email']:,} by email, {sent['mail']:,} by mail; print batch: {letters:,} letters; dead letters: {dead}"
    )
    out.append(f"  peak RSS: runtime {own:.0f} MiB, largest worker {largest:.0f} MiB, sum {total:.0f} MiB")
    out.append(
        f"  raw writes of what it stores: {raw_items:,} items {raw_ddb_s:.2f} s + {raw_objects:,} objects {raw_s3_s:.2f} s = {raw_s:.2f} s"
    )
    out.append(
        f"  ratio: {flow_s / raw_s:.2f}x the raw writes (target: under 2x; 10,000 accounts under 60 s)"
    )
    total_calls = counter.by_service()
    out.append(
        "  AWS calls by service (all functions): "
        + ", ".join(f"{s} {c:,}" for s, c in total_calls.most_common())
    )
    notices_calls = counter.by_service("Notices")
    on_event = counter.of("NoticesOnNoticeEventFunction")
    per_bill = sum(on_event.values()) / delivered if delivered else float("nan")
    out.append(
        "  notices' calls by service: " + ", ".join(f"{s} {c:,}" for s, c in notices_calls.most_common())
    )
    out.append(
        f"  notices' delivery calls per bill: {per_bill:.2f} ("
        + ", ".join(f"{k} {v:,}" for k, v in on_event.most_common())
        + ")"
    )
    if delivered != n or letters != sent["mail"]:
        out.append(
            f"FAILED: expected {n} bills delivered and every letter in the batch; got {delivered}, {letters}"
        )
    return out


if __name__ == "__main__":
    main()
