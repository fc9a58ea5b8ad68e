"""Monthly AWS cost of a utility, from the requests a measured run makes (issue 30).

    .venv/bin/python tests/benchmarks/bench_cost.py [N]     (N accounts measured, default 1000)

Runs on the local runtime (real template.yaml, functions in this process so that every AWS
request is counted with its size: bench_cycle's Meter) a quarter's work for N Grafton
accounts, each part measured on its own:

- metering: a meters file and a register reads file of N rows uploaded (one read per account
  a quarter), through metering to billing;
- the billing cycle and its notices: N bills rated, issued and published (setup as
  bench_cycle's: accounts and their quarter's consumption written straight to billing's
  table), every bill's notice as the bus hands the cycle's events to notices, and the next
  morning's print batch (one part: the requests are counted in this process, not by function).

It counts Lambda invocations and GB-seconds (each function's MemorySize from the template;
durations as measured in this process on this machine), DynamoDB write and read request units
(1 WRU a KB written, 2 in a transaction; 1 RRU per 4 KB read), SQS requests (the application's
sends, and per SQS-triggered invocation the event source mapping's receive and delete),
EventBridge events put, S3 PUTs and GETs and the bytes stored, SES e-mails, and the bytes of
items written (DynamoDB storage). Then it scales per account to 1,000 / 10,000 / 100,000
accounts and prices a month (a quarter's counts / 3) at the PRICES below, adding the fixed
monthly items the template defines (CloudWatch alarms, the dashboard).

Not counted: payments and the daily runs (assessments, sampling and tariff checks: a few
invocations a day whatever the size), CloudWatch Logs ingestion, X-Ray beyond its free
tier, data transfer out, the portal (CloudFront, Cognito), KMS. The counts are per quarter of
quarterly billing (Grafton's cycle); a monthly-billing tenant triples the variable part.
"""

from __future__ import annotations

import json
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

from bench_cycle import Meter, accounts_items, batch_write  # noqa: E402

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

METERS_HEAD = "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading\n"
READS_HEAD = "tenant,meter_id,read_on,reading\n"


def _measure(rt: Any, meter: Meter, work: Any) -> dict[str, float]:
    """Run `work` with the meter on; what it cost in counts."""
    before, s3_before = len(rt.invocations), _s3_bytes(rt)
    meter.calls, meter.wru, meter.rru, meter.events_put = Counter(), 0, 0.0, 0
    meter.written = []
    meter.on = True
    work()
    meter.on = False
    meter.tally()
    invocations = rt.invocations[before:]
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


def measure(n: int) -> dict[str, dict[str, float]]:
    """A quarter's counts for n accounts, per part (metering, cycle, notices)."""
    meter = Meter()
    meter.install()
    parts: dict[str, dict[str, float]] = {}
    with LocalRuntime.start(
        ROOT / "template.yaml",
        start_time=datetime(2026, 9, 30, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(ROOT / "infra" / "tariffs"), "Stage": "cost"},
        isolate="modules",
    ) as rt:
        ddb = rt.client("dynamodb")
        batch_write(ddb, rt.resource("BillingTable"), accounts_items(n))
        rt.drain()
        meters = METERS_HEAD + "".join(
            f"grafton-sewer,GM-{i:06d},GR-{i:06d},water,gal,6,2026-01-01,1000\n" for i in range(n)
        )
        reads = READS_HEAD + "".join(
            f"grafton-sewer,GM-{i:06d},2026-09-28,{9000 + i % 5000}\n" for i in range(n)
        )

        def metering() -> None:
            rt.upload("UploadsBucket", "meters/2026-09-cost.csv", meters)
            rt.upload("UploadsBucket", "reads/2026-09-cost.csv", reads)
            rt.drain()

        parts["metering"] = _measure(rt, meter, metering)

        def cycle_and_notices() -> None:
            rt.send(
                "BillingRunBillingCycleQueue",
                {"tenant": "grafton-sewer", "scheduled_time": "2026-10-01T11:00:00Z"},
                drain=True,
            )
            rt.send("NoticesRunPrintBatchQueue", {"scheduled_time": "2026-10-02T10:00:00Z"}, drain=True)

        parts["cycle and notices"] = _measure(rt, meter, cycle_and_notices)
        parts["_bills"] = {"count": _count_bills(ddb, rt.resource("BillingTable"))}
        parts["_dead_letters"] = {"count": len(rt.dead_letters)}
    return parts


def _count_bills(ddb: Any, table: str) -> int:
    total, start = 0, None
    while True:
        page = ddb.query(
            TableName=table,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "BILLS#grafton-sewer"}},
            Select="COUNT",
            **({"ExclusiveStartKey": start} if start else {}),
        )
        total += page["Count"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return total


def fixed_monthly() -> dict[str, float]:
    """What the template costs a month whatever the size: its alarms and its dashboard."""
    cfn = translate_template(ROOT / "template.yaml")
    alarms = len(resources_of_type(cfn, "AWS::CloudWatch::Alarm"))
    dashboards = len(resources_of_type(cfn, "AWS::CloudWatch::Dashboard"))
    return {"alarms": alarms, "dashboards": dashboards}


def monthly_cost(
    quarter: dict[str, float], measured: int, accounts: int, months_kept: int = 12
) -> dict[str, float]:
    """One month's cost for `accounts`, from a quarter's counts for `measured` accounts: the
    variable part scaled per account and divided by 3; storage as `months_kept` months of
    what a quarter writes (DynamoDB items and S3 objects), one third written each month."""
    k = accounts / measured / 3
    stored_months = months_kept / 3  # quarters' worth of data kept, on average, at steady state
    return {
        "Lambda": k
        * (
            quarter["lambda_requests"] * PRICES["lambda_request"]
            + quarter["lambda_gb_s"] * PRICES["lambda_gb_s"]
        ),
        "DynamoDB requests": k
        * (quarter["ddb_wru"] * PRICES["ddb_wru"] + quarter["ddb_rru"] * PRICES["ddb_rru"]),
        "DynamoDB storage+PITR": accounts
        / measured
        * stored_months
        * quarter["ddb_bytes_written"]
        / 1e9
        * (PRICES["ddb_gb_month"] + PRICES["ddb_pitr_gb_month"]),
        "SQS": k * quarter["sqs_requests"] * PRICES["sqs_request"],
        "EventBridge": k * quarter["events"] * PRICES["events"],
        "S3": k * (quarter["s3_put"] * PRICES["s3_put"] + quarter["s3_get"] * PRICES["s3_get"])
        + accounts / measured * stored_months * quarter["s3_bytes"] / 1e9 * PRICES["s3_gb_month"],
        "SES": k * quarter["ses_emails"] * PRICES["ses_email"],
    }


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    began = time.perf_counter()
    parts = measure(n)
    bills, dead = parts.pop("_bills")["count"], parts.pop("_dead_letters")["count"]
    fixed = fixed_monthly()
    keys = next(iter(parts.values())).keys()
    quarter = {key: sum(part[key] for part in parts.values()) for key in keys}
    print(
        f"cost of a quarter's work measured on the local runtime: {n} accounts, {bills} bills, "
        f"{dead} dead letters ({time.perf_counter() - began:.0f} s)"
    )
    print(f"  command: .venv/bin/python tests/benchmarks/bench_cost.py {n}")
    print(f"  prices: {PRICES_AS_OF}")
    print("  counts for the quarter (per account in brackets):")
    for key in keys:
        row = "  ".join(f"{name} {part[key]:,.1f}" for name, part in parts.items())
        print(f"    {key:18s} {quarter[key]:>14,.1f} ({quarter[key] / n:.3f})   {row}")
    alarms = fixed["alarms"] * PRICES["alarm_month"]
    dashboard = max(0, fixed["dashboards"]) * PRICES["dashboard_month"]
    print(
        f"  fixed a month: {fixed['alarms']} CloudWatch alarms ${alarms:.2f}, "
        f"{fixed['dashboards']} dashboard ${dashboard:.2f}"
    )
    print()
    header = "| Monthly cost (USD) | " + " | ".join(f"{a:,} accounts" for a in SIZES) + " |"
    print(header)
    print("|" + "---|" * (len(SIZES) + 1))
    costs = {a: monthly_cost(quarter, n, a) for a in SIZES}
    for item in costs[SIZES[0]]:
        print(f"| {item} | " + " | ".join(f"${costs[a][item]:,.2f}" for a in SIZES) + " |")
    print(
        f"| CloudWatch alarms ({fixed['alarms']}) and dashboard | "
        + " | ".join(f"${alarms + dashboard:,.2f}" for _ in SIZES)
        + " |"
    )
    emailed = {a: a / 3 * PRICES["ses_email"] for a in SIZES}
    print(
        "| (SES if every notice were e-mailed) | " + " | ".join(f"(${emailed[a]:,.2f})" for a in SIZES) + " |"
    )
    print(
        "| **Total** | "
        + " | ".join(f"**${sum(costs[a].values()) + alarms + dashboard:,.2f}**" for a in SIZES)
        + " |"
    )


if __name__ == "__main__":
    main()
