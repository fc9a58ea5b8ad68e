"""AWS cost of a utility's year, from the requests a measured run makes (issue 30).

    .venv/bin/python tests/benchmarks/bench_cost.py [N ...]  (N Grafton accounts, default 1000)
    BENCH_COST_SAVE=runs.jsonl .venv/bin/python tests/benchmarks/bench_cost.py 1000 10000
    .venv/bin/python tests/benchmarks/bench_cost.py --saved runs.jsonl   (price saved runs)

Runs on the local runtime (real template.yaml, functions in this process so that every AWS
request is counted with its size: bench_cycle's Meter) a year of N Grafton accounts through
the real paths, the simulated clock firing every schedule of the template on its day:

- set-up: the accounts file and the meters file uploaded (counted as "set-up", once);
- reads: each quarter's register reads file, uploaded on the cycle's morning;
- cycles and notices: the cycle's day and the next morning (bills rated, issued and
  published; every bill's notice, e-mail or letter; the print batch), four times;
- payments: a lockbox file fourteen days after each cycle, nine accounts in ten paying
  their bill's amount due;
- daily runs: every other day of the year, each daily schedule firing (metering's daily run,
  the daily assessment with the late charges of the unpaid tenth, sampling's daily run, the
  stormwater tariff check, the print batch).

It counts Lambda invocations and GB-seconds (each function's MemorySize from the template;
durations as measured in this process on this machine), DynamoDB write and read request units
(1 WRU a KB written, 2 in a transaction; 1 RRU per 4 KB read), SQS requests (the application's
sends, and per SQS-triggered invocation the event source mapping's receive and delete),
EventBridge events put, S3 PUTs and GETs and the bytes stored, SES e-mails, and the bytes of
items written (DynamoDB storage). Then it scales per account to 1,000 / 10,000 / 100,000
accounts and prices a month (the year's counts / 12) at the PRICES below, adding the fixed
monthly items the template defines (CloudWatch alarms, the dashboard).

It also checks the busiest DynamoDB partition keys against DynamoDB's per-partition limit of
1,000 WCU a second at 100,000 accounts: a key's writes within one invocation, scaled per
account and multiplied by its function's concurrency, over that invocation's measured time.

Not counted: CloudWatch Logs ingestion, X-Ray beyond its free tier, data transfer out, the
portal (CloudFront, Cognito), KMS. A monthly-billing tenant triples the cycles' part.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import math
import os
import re
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for extra in (ROOT / "services", ROOT / "infra", Path(__file__).resolve().parent):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import botocore.client  # noqa: E402
from bench_cycle import Meter  # noqa: E402

from sewerbill.local import LocalRuntime  # noqa: E402
from sewerbill.samtemplate import resources_of_type, translate_template  # noqa: E402

# us-east-1 on-demand list prices, USD (AWS's pricing pages as of 2025, the figures
# bench_cycle uses; not re-read online from this machine: check aws.amazon.com/pricing).
PRICES_AS_OF = "2025 (us-east-1, on-demand list prices, free tiers ignored)"
PRICES = {
    "lambda_request": 0.20 / 1e6,  # per request
    "lambda_gb_s": 0.0000133334,  # per GB-second, arm64
    "ddb_wru": 0.625 / 1e6,  # on-demand write request unit
    "ddb_rru": 0.125 / 1e6,  # on-demand read request unit
    "ddb_gb_month": 0.25,  # table storage
    "ddb_pitr_gb_month": 0.20,  # point-in-time recovery (every table has it)
    "sqs_request": 0.40 / 1e6,  # standard queue (FIFO: $0.50)
    "events": 1.00 / 1e6,  # custom events put on a bus
    "s3_put": 0.005 / 1e3,  # PUT, COPY, POST, LIST
    "s3_get": 0.0004 / 1e3,  # GET and others
    "s3_gb_month": 0.023,  # S3 Standard, first 50 TB
    "ses_email": 0.10 / 1e3,  # outbound e-mail
    "alarm_month": 0.10,  # standard-resolution metric alarm
    "dashboard_month": 3.00,  # per dashboard (the first three of an account are free)
}
SIZES = (1_000, 10_000, 100_000)
PARTITION_WCU_S = 1_000  # DynamoDB's write limit of one partition
PARTITIONS: Any = None  # the PartitionWrites of the run (main installs it)

METERS_HEAD = "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading\n"
READS_HEAD = "tenant,meter_id,read_on,reading\n"


class PartitionWrites:
    """Every DynamoDB write of a measured window, with its time, table, partition key and
    write units, attributed afterwards to the invocation that made it (functions run one at a
    time in this process, so an invocation's window holds only its own calls)."""

    REQUEST_S = 0.010  # an AWS request's latency from a Lambda, the fast case

    def __init__(self) -> None:
        self.on = False
        self.writes: list[tuple[datetime, str, str, int]] = []
        # (function, table, pk) -> (highest WRU/s measured, highest WRU/s at REQUEST_S a request:
        # the invocation's requests of every service, one after another)
        self.peaks: dict[tuple[str, str, str], tuple[float, float]] = {}
        self.units: Counter[tuple[str, str, str]] = Counter()
        self._orig = botocore.client.BaseClient._make_api_call

    def install(self) -> None:
        writes, orig = self, botocore.client.BaseClient._make_api_call

        def counted(client: Any, operation: str, params: dict[str, Any]) -> Any:
            if writes.on:
                now = datetime.now(UTC)
                writes.writes.append((now, "", "", 0))  # a request, of any service
                if client.meta.service_model.service_name == "dynamodb":
                    for table, pk, wru in _written(operation, params):
                        writes.writes.append((now, table, pk, wru))
            return orig(client, operation, params)

        botocore.client.BaseClient._make_api_call = counted  # type: ignore[method-assign]

    def attribute(self, invocations: list[Any]) -> None:
        spans = sorted(invocations, key=lambda i: i.at)
        starts = [i.at for i in spans]
        per: dict[tuple[int, str, str], int] = Counter()
        calls: Counter[int] = Counter()
        for at, table, pk, wru in self.writes:
            k = bisect.bisect_right(starts, at) - 1
            if k < 0 or at > spans[k].at + timedelta(milliseconds=spans[k].duration_ms + 50):
                continue  # the runtime's own write, not a function's
            if table:
                per[(k, table, pk)] += wru
            else:
                calls[k] += 1
        for (k, table, pk), wru in per.items():
            inv = spans[k]
            key = (inv.function, table, pk)
            measured = wru / max(inv.duration_ms / 1000, 0.001)
            fast = wru / max(calls[k] * self.REQUEST_S, 0.001)
            old = self.peaks.get(key, (0.0, 0.0))
            self.peaks[key] = (max(old[0], measured), max(old[1], fast))
            self.units[key] += wru
        self.writes = []


def _written(operation: str, params: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(table, pk, WRU) of each item a write request writes."""

    def units(item: dict[str, Any], factor: int = 1) -> int:
        return factor * max(1, math.ceil(len(json.dumps(item)) / 1024))

    def pk(item: dict[str, Any]) -> str:
        value = item.get("pk", {})
        return str(value.get("S", value)) if isinstance(value, dict) else str(value)

    out: list[tuple[str, str, int]] = []
    if operation == "BatchWriteItem":
        for table, reqs in params["RequestItems"].items():
            for r in reqs:
                item = r.get("PutRequest", {}).get("Item") or r.get("DeleteRequest", {}).get("Key")
                out.append((table, pk(item), units(item)))
    elif operation in ("PutItem", "UpdateItem", "DeleteItem"):
        item = params.get("Item", params.get("Key", {}))
        out.append((params["TableName"], pk(item), units(item)))
    elif operation == "TransactWriteItems":
        for action in params["TransactItems"]:
            body = next(iter(action.values()))
            item = body.get("Item", body.get("Key", {}))
            out.append((body["TableName"], pk(item), units(item, 2)))
    return out


def _key_shape(pk: str) -> str:
    """A partition key with its ids folded, so one key per account reads as one shape."""
    pk = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>", pk)
    return re.sub(r"\d{4}-\d{2}-\d{2}(T[\d:.+Z-]+)?", "<date>", re.sub(r"G[RM]-\d{6}", "<id>", pk))


def _measure(rt: Any, meter: Meter, work: Any) -> dict[str, float]:
    """Run `work` with the meter on; what it cost in counts."""
    before, s3_before = len(rt.invocations), _s3_bytes(rt)
    meter.calls, meter.wru, meter.rru, meter.events_put = Counter(), 0, 0.0, 0
    meter.written = []
    meter.on = PARTITIONS.on = True
    work()
    meter.on = PARTITIONS.on = False
    meter.tally()
    invocations = rt.invocations[before:]
    PARTITIONS.attribute(invocations)
    memory = {lid: fn.memory_mb for lid, fn in rt.stack.functions.items()}
    calls = meter.calls
    stored = sum(len(json.dumps(item)) for item in meter.written)
    by_function = Counter(i.function for i in invocations)
    print(f"  invocations: {dict(sorted(by_function.items()))}", file=sys.stderr)
    return {
        "lambda_requests": len(invocations),
        "lambda_gb_s": sum(i.duration_ms / 1000 * memory.get(i.function, 512) / 1024 for i in invocations),
        "ddb_wru": meter.wru,
        "ddb_rru": meter.rru,
        "ddb_bytes_written": stored,
        "sqs_requests": sum(v for k, v in calls.items() if k.startswith("sqs:Send"))
        + 2 * sum(1 for i in invocations if i.trigger == "sqs"),
        "events": meter.events_put,
        "s3_put": sum(
            v for k, v in calls.items() if k in ("s3:PutObject", "s3:CopyObject", "s3:ListObjectsV2")
        ),
        "s3_get": sum(v for k, v in calls.items() if k in ("s3:GetObject", "s3:HeadObject")),
        "s3_bytes": _s3_bytes(rt) - s3_before,
        "ses_emails": sum(v for k, v in calls.items() if k.startswith(("ses:Send", "sesv2:Send"))),
    }


def _s3_bytes(rt: Any) -> int:
    """The bytes stored in every bucket of the local stack (listed with the meter off)."""
    s3 = rt.client("s3")
    total = 0
    for bucket in s3.list_buckets()["Buckets"]:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket["Name"]):
            total += sum(o["Size"] for o in page.get("Contents", []))
    return total


GR = "grafton-sewer"
START = datetime(2026, 7, 15, 6, tzinfo=UTC)  # 01:00 in Grafton: before the day's schedules
CYCLES = [date(2026, 10, 1), date(2027, 1, 1), date(2027, 4, 1), date(2027, 7, 1)]
ACCOUNTS_HEAD = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,email,email_opt_in\n"
PAYMENTS_HEAD = "tenant,account_id,reference,paid_on,amount\n"


def _gallons(i: int, quarter: int) -> int:
    return 8000 + (i * 37 + quarter * 1301) % 30000


def accounts_file(n: int) -> str:
    """N Grafton residential accounts opened with the year, every third opted in to e-mail."""
    return ACCOUNTS_HEAD + "".join(
        f"{GR},GR-{i:06d},Customer {i},{i} Main St,{i} Main St,53024,2026-07-01,residential,5/8,"
        + (f"c{i}@example.org,true\n" if i % 3 == 0 else ",\n")
        for i in range(n)
    )


def meters_file(n: int) -> str:
    return METERS_HEAD + "".join(
        f"{GR},GM-{i:06d},GR-{i:06d},water,gal,7,2026-07-01,1000\n" for i in range(n)
    )


def reads_file(n: int, quarter: int, read_on: date) -> str:
    return READS_HEAD + "".join(
        f"{GR},GM-{i:06d},{read_on.isoformat()},{1000 + sum(_gallons(i, q) for q in range(quarter + 1))}\n"
        for i in range(n)
    )


def payments_file(rt: Any, period_start: date, paid_on: date) -> str:
    """Nine accounts in ten pay the bill of the period in full (the tenth pays nothing and is
    charged the late charge by the daily assessment)."""
    ddb = rt.client("dynamodb")
    lines = []
    for item in _query_all(ddb, rt.resource("BillingTable"), f"BILLS#{GR}"):
        account, start = item["sk"]["S"].split("#")
        if start != period_start.isoformat() or int(account.split("-")[1]) % 10 == 9:
            continue
        total = json.loads(item["bill"]["S"])["total"]
        lines.append(f"{GR},{account},LB-{account}-{start},{paid_on.isoformat()},{total}\n")
    return PAYMENTS_HEAD + "".join(lines)


def measure(n: int, meter: Meter) -> dict[str, dict[str, float]]:
    """A year's counts for n accounts, per part (set-up, reads, cycles and notices, payments,
    daily runs)."""
    parts: dict[str, dict[str, float]] = {}

    def add(name: str, counts: dict[str, float]) -> None:
        kept = parts.setdefault(name, dict.fromkeys(counts, 0.0))
        for key, value in counts.items():
            kept[key] += value

    with LocalRuntime.start(
        ROOT / "template.yaml",
        start_time=START,
        parameters={"TariffsDir": str(ROOT / "infra" / "tariffs"), "Stage": "cost"},
        isolate="modules",
    ) as rt:

        def setup() -> None:
            rt.upload("UploadsBucket", "accounts/cost.csv", accounts_file(n))
            rt.upload("UploadsBucket", "meters/cost.csv", meters_file(n))
            rt.drain()

        add("set-up", _measure(rt, meter, setup))
        period_start = date(2026, 7, 1)
        for quarter, cycle_day in enumerate(CYCLES):
            morning = datetime.combine(cycle_day, datetime.min.time(), UTC) + timedelta(hours=6)
            add("daily runs", _measure(rt, meter, lambda m=morning: _advance(rt, m)))

            def reads(q: int = quarter, day: date = cycle_day) -> None:
                rt.upload("UploadsBucket", f"reads/cost-{day.isoformat()}.csv", reads_file(n, q, day))
                rt.drain()

            add("reads", _measure(rt, meter, reads))
            after = morning + timedelta(days=1, hours=7)  # the next morning's print batch included
            add("cycles and notices", _measure(rt, meter, lambda a=after: _advance(rt, a)))
            pay_day = cycle_day + timedelta(days=14)
            add(
                "daily runs",
                _measure(
                    rt,
                    meter,
                    lambda p=pay_day: _advance(
                        rt, datetime.combine(p, datetime.min.time(), UTC) + timedelta(hours=6)
                    ),
                ),
            )

            def payments(start: date = period_start, day: date = pay_day) -> None:
                rt.upload(
                    "UploadsBucket", f"payments/lockbox-{day.isoformat()}.csv", payments_file(rt, start, day)
                )
                rt.drain()

            add("payments", _measure(rt, meter, payments))
            period_start = cycle_day
        # the year ends with the last cycle's payments, 365 days after the start
        assert rt.clock.now == START + timedelta(days=365), rt.clock.now
        ddb = rt.client("dynamodb")
        parts["_bills"] = {
            "count": sum(1 for _ in _query_all(ddb, rt.resource("BillingTable"), f"BILLS#{GR}"))
        }
        parts["_dead_letters"] = {"count": len(rt.dead_letters)}
        parts["_concurrency"] = _concurrency(rt)
    return parts


def _advance(rt: Any, to: datetime) -> None:
    rt.clock.advance(to=to)
    rt.drain(max_seconds=3600)


def _concurrency(rt: Any) -> dict[str, float]:
    """Each queue-fed function's concurrency on AWS: its event source's MaximumConcurrency (the
    runtime's reading of ScalingConfig; 1 on a FIFO queue's single message group). Stream-fed
    and scheduled functions run one at a time per shard or firing (1); an HTTP function is
    counted at 10 requests at once."""
    out: dict[str, float] = dict.fromkeys(rt.stack.functions, 1)
    for source in rt.stack.queue_sources:
        out[source.function] = max(out.get(source.function, 1), source.maximum_concurrency)
    for lid in rt.stack.functions:
        if "Api" in lid:
            out[lid] = 10
    return out


def _query_all(ddb: Any, table: str, pk: str) -> Any:
    start = None
    while True:
        page = ddb.query(
            TableName=table,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": pk}},
            **({"ExclusiveStartKey": start} if start else {}),
        )
        yield from page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return


def fixed_monthly() -> dict[str, float]:
    """What the template costs a month whatever the size: its alarms and its dashboard."""
    cfn = translate_template(ROOT / "template.yaml")
    alarms = len(resources_of_type(cfn, "AWS::CloudWatch::Alarm"))
    dashboards = len(resources_of_type(cfn, "AWS::CloudWatch::Dashboard"))
    return {"alarms": alarms, "dashboards": dashboards}


def monthly_cost(year: dict[str, float], measured: int, accounts: int) -> dict[str, float]:
    """One month's cost for `accounts`, from a year's counts for `measured` accounts: the
    variable part scaled per account and divided by 12; storage at the year's end (what the
    year wrote, DynamoDB items and S3 objects, all kept: X-RETENTION keeps bills for years)."""
    k = accounts / measured / 12
    stored = accounts / measured
    return {
        "Lambda": k
        * (year["lambda_requests"] * PRICES["lambda_request"] + year["lambda_gb_s"] * PRICES["lambda_gb_s"]),
        "DynamoDB requests": k * (year["ddb_wru"] * PRICES["ddb_wru"] + year["ddb_rru"] * PRICES["ddb_rru"]),
        "DynamoDB storage+PITR": stored
        * year["ddb_bytes_written"]
        / 1e9
        * (PRICES["ddb_gb_month"] + PRICES["ddb_pitr_gb_month"]),
        "SQS": k * year["sqs_requests"] * PRICES["sqs_request"],
        "EventBridge": k * year["events"] * PRICES["events"],
        "S3": k * (year["s3_put"] * PRICES["s3_put"] + year["s3_get"] * PRICES["s3_get"])
        + stored * year["s3_bytes"] / 1e9 * PRICES["s3_gb_month"],
        "SES": k * year["ses_emails"] * PRICES["ses_email"],
    }


def partition_check(concurrency: dict[str, float]) -> list[str]:
    """The busiest partition keys against DynamoDB's 1,000 WCU/s a partition: a key's highest
    write rate within one invocation, times its function's concurrency. An invocation's rate
    does not grow with the number of accounts (chunks and pages are of fixed size; a bigger
    file takes longer at the same rate), its function's concurrency bounds how many write at
    once (a key of one account or one event: one invocation): so the figure holds at 100,000
    accounts. Two rates: as measured here (the emulator
    in this process answers faster than DynamoDB) and at 10 ms a write request from a Lambda.
    Keys are folded by shape (one per account or per event reads as one)."""
    shapes: dict[tuple[str, str], list[float]] = {}
    for (function, table, pk), (measured, fast) in PARTITIONS.peaks.items():
        shape = (table.rsplit("-", 1)[-1], _key_shape(pk))
        # a key of one account or one event is written by one invocation at a time
        c = 1 if "<id>" in shape[1] or "<uuid>" in shape[1] else concurrency.get(function, 1)
        row = shapes.setdefault(shape, [0.0, 0.0, 0.0, 0.0])
        row[0] = max(row[0], measured * c)
        row[1] = max(row[1], fast * c)
        row[2] += PARTITIONS.units[(function, table, pk)]
        row[3] = max(row[3], c)
    out = [
        f"  partition keys (limit {PARTITION_WCU_S:,} WCU/s a partition): a key's highest WRU/s "
        "in one invocation x its function's concurrency"
    ]
    out.append(
        f"    {'table':9s} {'key shape':46s} {'measured':>9s} {'10 ms/req':>9s} {'conc.':>5s} {'WRU in run':>10s}  at 10 ms a request"
    )
    for (table, shape), (measured, fast, units, c) in sorted(shapes.items(), key=lambda kv: -kv[1][1])[:12]:
        if fast < PARTITION_WCU_S / 2:
            verdict = "ok"
        elif fast < PARTITION_WCU_S:
            verdict = "within the limit, less than 2x headroom"
        else:
            verdict = "at or over the limit: DynamoDB throttles, the SDK retries (slower, not lost)"
        out.append(
            f"    {table:9s} {shape[:46]:46s} {measured:9,.0f} {fast:9,.0f} {c:5.0f} {units:10,.0f}  {verdict}"
        )
    return out


def run_one(n: int) -> dict[str, Any]:
    """One measured year for n accounts, in this process (the emulator is process-wide)."""
    global PARTITIONS
    began = time.perf_counter()
    meter = Meter()
    meter.install()
    PARTITIONS = PartitionWrites()
    PARTITIONS.install()
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):  # the functions' logs
        parts = measure(n, meter)
    bills, dead = parts.pop("_bills")["count"], parts.pop("_dead_letters")["count"]
    concurrency = parts.pop("_concurrency")
    keys = list(next(iter(parts.values())).keys())
    return {
        "n": n,
        "seconds": time.perf_counter() - began,
        "bills": bills,
        "dead_letters": dead,
        "parts": parts,
        "year": {key: sum(part[key] for part in parts.values()) for key in keys},
        "partitions": partition_check(concurrency),
    }


def at_size(runs: list[dict[str, Any]], accounts: int) -> dict[str, float]:
    """A year's counts at `accounts`: measured where it was run; else the straight line
    through the two largest runs (a fixed part, the daily runs' firings, plus a part per
    account), or with one run, per account."""
    for run in runs:
        if run["n"] == accounts:
            return dict(run["year"])
    if len(runs) == 1:
        only = runs[0]
        return {k: v * accounts / only["n"] for k, v in only["year"].items()}
    a, b = sorted(runs, key=lambda r: r["n"])[-2:]
    out = {}
    for key, high in b["year"].items():
        slope = (high - a["year"][key]) / (b["n"] - a["n"])
        out[key] = max(0.0, high + slope * (accounts - b["n"]))
    return out


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(run_one(int(sys.argv[2]))))
        return
    runs = []
    if sys.argv[1:2] == ["--saved"]:
        # the report of runs measured earlier (each line one size's `--one N` output), so a
        # long run's counts are priced again without measuring them again
        runs = [json.loads(line) for line in Path(sys.argv[2]).read_text().splitlines() if line.strip()]
        sizes = [r["n"] for r in runs]
    else:
        sizes = [int(a) for a in sys.argv[1:]] or [1000]
    for n in sizes if not runs else ():  # each in its own process: the backends are process-wide
        child = subprocess.run(  # noqa: S603 - this script, by its path
            [sys.executable, __file__, "--one", str(n)], check=True, capture_output=True, text=True
        )
        for line in child.stdout.strip().splitlines()[-1:]:
            runs.append(json.loads(line))
            # kept as it comes: a later, larger size that fails or is stopped loses nothing
            with (Path(os.environ.get("BENCH_COST_SAVE", "/dev/null"))).open("a") as saved:
                saved.write(line + "\n")
    fixed = fixed_monthly()
    print(f"cost of a year's work measured on the local runtime (Grafton, quarterly); prices: {PRICES_AS_OF}")
    print(f"  command: .venv/bin/python tests/benchmarks/bench_cost.py {' '.join(map(str, sizes))}")
    for run in runs:
        n, year, parts = run["n"], run["year"], run["parts"]
        print(
            f"  {n:,} accounts: {run['bills']:,} bills, {run['dead_letters']} dead letters, "
            f"measured in {run['seconds']:.0f} s; counts for the year (per account), then by part: "
            + ", ".join(parts)
        )
        for key in year:
            row = "  ".join(f"{part[key]:,.1f}" for part in parts.values())
            print(f"    {key:18s} {year[key]:>14,.1f} ({year[key] / n:.3f})   {row}")
    alarms = fixed["alarms"] * PRICES["alarm_month"]
    dashboard = max(0, fixed["dashboards"]) * PRICES["dashboard_month"]
    print(
        f"  fixed a month: {fixed['alarms']} CloudWatch alarms ${alarms:.2f}, "
        f"{fixed['dashboards']} dashboard ${dashboard:.2f}"
    )
    columns = sorted(set(SIZES) | set(sizes))
    measured = {r["n"] for r in runs}
    print()
    print(
        "| Monthly cost (USD) | "
        + " | ".join(f"{a:,} accounts{'' if a in measured else ' (scaled)'}" for a in columns)
        + " |"
    )
    print("|" + "---|" * (len(columns) + 1))
    costs = {a: monthly_cost(at_size(runs, a), a, a) for a in columns}
    for item in costs[columns[0]]:
        print(f"| {item} | " + " | ".join(f"${costs[a][item]:,.2f}" for a in columns) + " |")
    print(
        f"| CloudWatch alarms ({fixed['alarms']}) and dashboard | "
        + " | ".join(f"${alarms + dashboard:,.2f}" for _ in columns)
        + " |"
    )
    print(
        "| **Total** | "
        + " | ".join(f"**${sum(costs[a].values()) + alarms + dashboard:,.2f}**" for a in columns)
        + " |"
    )
    print()
    for line in max(runs, key=lambda r: r["n"])["partitions"]:
        print(line)


if __name__ == "__main__":
    main()
