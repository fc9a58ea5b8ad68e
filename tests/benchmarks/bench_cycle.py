"""Benchmark of a billing cycle of 10,000 accounts on the local runtime (moto server).

    .venv/bin/python tests/benchmarks/bench_cycle.py [N]

Sets up N Grafton accounts and their quarter's consumption (written straight to billing's
table: setup, not timed), then times the cycle from the schedule's message to a drained
stack: the fan-out, every chunk rated and issued, the outbox published to the bus. The
services downstream of the bus (notices rendering and sending each bill, the portal) are
paused for the run: their work is the notices benchmark's, not the cycle's. Beside
it, in the same run, the very items the cycle wrote (captured from its requests, each put
again under a ``RAW#`` partition key) written by plain BatchWriteItem calls to the same
table, with a client made as the chunks make theirs (the raw-write bound), and the ratio of the two. Where the cycle's time goes is
printed per function (wall and CPU seconds inside its invocations: the handler's own work
and the emulator's answers to it, which run in this process), beside the runtime's own
polling and dispatch (the rest), and per AWS operation the functions called (the client's
work and the emulator's answer), the rest being the functions' own code. Both timed runs (the cycle, then the raw writes) start from a
settled heap (``sewerbill.local.heap``, as the runtime's after provisioning): what exists
before each is frozen out of the garbage collector's sight; the collector's pauses during the
cycle are printed (wall and CPU).

The bound is the median of three replays (one replay moved by a third between runs on this
shared machine). The cycle's floor is printed beside it: its own Queries (as made, again, with
the adapters' client), its own events (the same ``BillsIssued`` entries, 10 a PutEvents call,
with a default client as the publisher's, delivered to the same queues) and the rating engine
alone on the very inputs its chunks read (``billing.domain.issuing.rate_chunk``, domain code,
no I/O), each alone: with the writes, what the cycle costs before its bills are built,
written out or published and before any polling.

Counts every AWS request the cycle made (botocore, in-process; the runtime's own polling of queues and streams excluded, as
Lambda's event source mappings and stream reads are not billed per request) and prices them at
us-east-1 on-demand list prices (2025): Lambda $0.20 per 1M requests and $0.0000133334
per GB-s (arm64; durations are the in-process times on this machine); DynamoDB on-demand
$0.625 per 1M write request units and $0.125 per 1M read request units (1 WRU per 1 KB
written, 1 RRU per 4 KB strongly consistent read); SQS $0.40 per 1M requests; EventBridge
$1.00 per 1M events put. Wall and CPU seconds are both printed (everything runs in this process: on a shared machine
CPU time is the steadier figure). Targets (issue 12): under 60 s, within 3x of the raw writes, and at
most $0.05 per 10,000 bills.
"""

from __future__ import annotations

import gc
import json
import math
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for extra in (ROOT / "services", ROOT / "infra"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import botocore.client  # noqa: E402

from common.dynamo import to_item  # noqa: E402
from sewerbill.local import LocalRuntime, heap  # noqa: E402

PRICE = {
    "lambda_request": 0.20 / 1e6,
    "lambda_gb_s": 0.0000133334,
    "wru": 0.625 / 1e6,
    "rru": 0.125 / 1e6,
    "sqs": 0.40 / 1e6,
    "events": 1.00 / 1e6,
}


class Meter:
    """Counts requests and request units of every botocore call made in this process.

    While on, a call is only kept (its parameters and answer); the sizes are measured by
    ``tally()`` after the timed run, so the benchmark's own bookkeeping is not the cycle's time.
    """

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.wru = 0
        self.rru = 0.0
        self.items_written = 0
        self.events_put = 0
        self.written: list[dict[str, Any]] = []  # every item put, as sent (the raw-write replay)
        self.queries: list[dict[str, Any]] = []  # every Query, as made (the reads' replay)
        self.entries: list[dict[str, Any]] = []  # every PutEvents entry, as sent (the events' replay)
        self.bills_in_events = 0
        self.sent: list[str] = []  # every SQS message body sent (the chunks' requests)
        # wall and CPU seconds inside the calls, by operation (the client's work and the
        # emulator's answer, both in this process)
        self.wall: Counter[str] = Counter()
        self.cpu: Counter[str] = Counter()
        self.on = False
        self.kept: list[tuple[str, str, dict[str, Any], Any]] = []
        self._orig = botocore.client.BaseClient._make_api_call

    def install(self) -> None:
        meter = self

        def counted(client: Any, operation: str, params: dict[str, Any]) -> Any:
            if not meter.on:
                return meter._orig(client, operation, params)
            began, cpu = time.perf_counter(), time.process_time()
            result = meter._orig(client, operation, params)
            service = client.meta.service_model.service_name
            meter.wall[f"{service}:{operation}"] += time.perf_counter() - began
            meter.cpu[f"{service}:{operation}"] += time.process_time() - cpu
            meter.kept.append((service, operation, params, result))
            return result

        botocore.client.BaseClient._make_api_call = counted  # type: ignore[method-assign]

    def tally(self) -> None:
        for call in self.kept:
            self.record(*call)
        self.kept = []

    def record(self, service: str, op: str, params: dict[str, Any], result: Any) -> None:
        self.calls[f"{service}:{op}"] += 1
        if service == "dynamodb":
            if op == "BatchWriteItem":
                for reqs in params["RequestItems"].values():
                    for r in reqs:
                        item = r.get("PutRequest", {}).get("Item") or r.get("DeleteRequest", {}).get("Key")
                        if "PutRequest" in r:
                            self.written.append(item)
                        self.wru += max(1, math.ceil(len(json.dumps(item)) / 1024))
                        self.items_written += 1
            elif op in ("PutItem", "UpdateItem"):
                if "Item" in params:
                    self.written.append(params["Item"])
                self.wru += max(1, math.ceil(len(json.dumps(params.get("Item", params.get("Key")))) / 1024))
                self.items_written += 1
            elif op == "TransactWriteItems":
                for a in params["TransactItems"]:
                    body = next(iter(a.values()))
                    if "Item" in body:
                        self.written.append(body["Item"])
                    self.wru += 2 * max(
                        1, math.ceil(len(json.dumps(body.get("Item", body.get("Key")))) / 1024)
                    )
                    self.items_written += 1
            elif op in ("Query", "Scan", "GetItem", "BatchGetItem"):
                if op == "Query":
                    self.queries.append(params)
                size = len(
                    json.dumps(result.get("Items") or result.get("Item") or result.get("Responses") or {})
                )
                self.rru += max(1, math.ceil(size / 4096))
        elif service == "events" and op == "PutEvents":
            self.events_put += len(params["Entries"])
            self.entries.extend(params["Entries"])
            for e in params["Entries"]:  # bills: a BillsIssued's, or one a BillIssued
                if e["DetailType"] == "BillsIssued":
                    self.bills_in_events += len(json.loads(e["Detail"])["bills"])
                elif e["DetailType"] == "BillIssued":
                    self.bills_in_events += 1
        elif service == "sqs" and op == "SendMessageBatch":
            self.sent.extend(e["MessageBody"] for e in params["Entries"])


def accounts_items(n: int) -> list[dict[str, Any]]:
    """N Grafton accounts (as billing's adapter writes them) and their Q3 consumption."""
    from datetime import date

    from billing.adapters.items import account_item
    from billing.domain.accounts import AccountRecord

    items = []
    for i in range(n):
        aid = f"GR-{i:06d}"
        record = AccountRecord(
            tenant="grafton-sewer",
            account_id=aid,
            name=f"Customer {i}",
            service_address=f"{i} Main St",
            mailing_address=f"{i} Main St",
            zip="53024",
            opened_on=date(2026, 1, 1),
            # go-live with this quarter (X-PERIOD): no back periods, the common case timed
            bills_from=date(2026, 7, 1),
            account_class="residential",
            meter_size="5/8",
            parcel_id=f"GP-{i:06d}",
        )
        items.append(account_item(record, "2026-09-30T12:00:00+00:00"))
        items.append(
            {
                "pk": "USAGE#grafton-sewer#2026-07-01#2026-10-01",
                "sk": aid,
                "volume_gal": str(8000 + (i * 37) % 40000),
                "estimated": False,
                "source_event_id": f"bench-{i}",
            }
        )
    return items


def bulk_client(rt: Any) -> Any:
    """A DynamoDB client on the emulator made as billing's and metering's adapters make theirs
    (``common.dynamo.bulk_client``: ``BULK_CLIENT``, no client-side parameter validation). The raw-write
    bound is measured with it, so that the bound and the pipeline differ only in the
    pipeline's work (a slower client would flatter the ratio)."""
    import boto3

    from common.dynamo import BULK_CLIENT

    emulator = rt.emulator
    return boto3.client(
        "dynamodb",
        endpoint_url=emulator.endpoint_for("dynamodb"),
        region_name=emulator.region,
        aws_access_key_id=emulator.credentials["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=emulator.credentials["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=emulator.credentials.get("AWS_SESSION_TOKEN"),
        config=BULK_CLIENT,
    )


def rating_alone(client: Any, table: str, requests: list[str]) -> tuple[dict[str, tuple[float, float]], int]:
    """Wall and CPU seconds of the cycle's domain and serialization work alone, with no
    request: each chunk's inputs read beforehand (``load_chunk``, untimed) as the cycle read
    them, its bills now issued set aside; then timed, each alone: ``rating``, the engine
    (``rate_chunk``: domain code) over every chunk; ``items``, each rated bill's item as it is
    written (``bill_item``: its document and recipient as JSON); ``details``, each item's
    ``BillIssued`` detail as the publisher writes it (``issued_detail``). And how many bills
    were rated."""
    from dataclasses import replace

    from billing.adapters.items import bill_item, issued_detail
    from billing.adapters.repository import BillingRepo
    from billing.app.cycles import ChunkRequest, load_chunk, notice_of
    from billing.domain.issuing import ChunkResult, rate_chunk
    from billing.domain.rating import RatingEngine
    from billing.domain.terms import terms_of
    from common.tariff_files import load_tariff_book

    book = load_tariff_book(str(ROOT / "infra" / "tariffs"))
    engine = RatingEngine(book)
    repo = BillingRepo(client, table)
    chunks = [ChunkRequest.from_json(json.loads(body)) for body in requests]
    inputs = [replace(load_chunk(c, repo), billed=frozenset()) for c in chunks]
    terms = [terms_of(book.in_force(c.tenant, c.period_start)) for c in chunks]
    results: list[ChunkResult] = []
    rating = timed(
        lambda: results.extend(
            rate_chunk(inp, engine=engine, terms=term) for inp, term in zip(inputs, terms, strict=True)
        )
    )
    account = {a.account_id: a for inp in inputs for a in inp.accounts}
    bills = [b for result in results for b in result.bills]
    at = "2026-10-01T11:00:00+00:00"
    built: list[dict[str, Any]] = []
    items = timed(lambda: built.extend(bill_item(b, at, notice_of(account[b.account_id])) for b in bills))
    details = timed(lambda: [issued_detail(i["bill"], i["notice"], i["issued_at"]) for i in built])
    return {"rating": rating, "items": items, "details": details}, len(bills)


def timed(work: Any) -> tuple[float, float]:
    """Wall and CPU seconds of ``work()``, from a settled heap."""
    heap.settle()
    began, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - began, time.process_time() - cpu


def batch_write(client: Any, table: str, items: list[dict[str, Any]], *, typed: bool = False) -> None:
    """Put ``items`` 25 a request (``typed``: already in DynamoDB's attribute-value form)."""
    for start in range(0, len(items), 25):
        pending = [{"PutRequest": {"Item": i if typed else to_item(i)}} for i in items[start : start + 25]]
        while pending:
            resp = client.batch_write_item(RequestItems={table: pending})
            pending = resp.get("UnprocessedItems", {}).get(table, [])


class GcPauses:
    """Seconds spent in the garbage collector (everything shares this process's heap:
    moto's tables and every function's objects) while on."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.cpu = 0.0
        self.collections: Counter[int] = Counter()
        self.on = False
        self._began = (0.0, 0.0)
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if not self.on:
            return
        if phase == "start":
            self._began = (time.perf_counter(), time.process_time())
        else:
            self.seconds += time.perf_counter() - self._began[0]
            self.cpu += time.process_time() - self._began[1]
            self.collections[info["generation"]] += 1


class Profile:
    """Wall and CPU seconds spent inside each function's invocations."""

    def __init__(self) -> None:
        self.wall: Counter[str] = Counter()
        self.cpu: Counter[str] = Counter()
        self.on = False

    def install(self, invoker: Any) -> None:
        original = invoker.invoke
        profile = self

        def timed(logical_id: str, *args: Any, **kwargs: Any) -> Any:
            if not profile.on:
                return original(logical_id, *args, **kwargs)
            began, cpu = time.perf_counter(), time.process_time()
            try:
                return original(logical_id, *args, **kwargs)
            finally:
                profile.wall[logical_id] += time.perf_counter() - began
                profile.cpu[logical_id] += time.process_time() - cpu

        invoker.invoke = timed


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    meter = Meter()
    meter.install()
    profile = Profile()
    pauses = GcPauses()
    # The functions run in this process (isolate="modules"): the benchmark counts every AWS
    # request the cycle makes (to price it and to replay its writes as the raw bound) by
    # wrapping botocore here, which a function's own worker process would not see.
    with LocalRuntime.start(
        ROOT / "template.yaml",
        start_time=datetime(2026, 9, 30, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(ROOT / "infra" / "tariffs")},
        isolate="modules",
    ) as rt:
        ddb = rt.client("dynamodb")
        table = rt.resource("BillingTable")
        batch_write(ddb, table, accounts_items(n))
        rt.drain()
        downstream = [
            s
            for s in (*rt.stack.queue_sources, *rt.stack.stream_sources)
            if not s.function.startswith("Billing")
        ]
        for source in downstream:
            source.enabled = False
        # Each timed run starts from a settled heap, as the runtime's does after provisioning:
        # what exists (the setup's tables here; the cycle's, before the raw writes) is frozen
        # out of the collector's sight (sewerbill.local.heap; on AWS it lives in DynamoDB).
        heap.settle()
        before = len(rt.invocations)
        profile.install(rt.invoker)
        meter.on = profile.on = pauses.on = True
        began, cpu = time.perf_counter(), time.process_time()
        rt.send(
            "BillingRunBillingCycleQueue",
            {"tenant": "grafton-sewer", "scheduled_time": "2026-10-01T11:00:00Z"},
            drain=True,
        )
        cycle_s, cycle_cpu = time.perf_counter() - began, time.process_time() - cpu
        meter.on = profile.on = pauses.on = False
        meter.tally()
        invocations = rt.invocations[before:]
        bills = ddb.query(
            TableName=table,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "BILLS#grafton-sewer"}},
            Select="COUNT",
        )
        billed = bills["Count"]
        while "LastEvaluatedKey" in bills:
            bills = ddb.query(
                TableName=table,
                KeyConditionExpression="pk = :p",
                ExpressionAttributeValues={":p": {"S": "BILLS#grafton-sewer"}},
                Select="COUNT",
                ExclusiveStartKey=bills["LastEvaluatedKey"],
            )
            billed += bills["Count"]
        # The raw-write bound: the very items the cycle put, each again under a RAW# key (three
        # times, each under its own prefix; the median).
        bulk = bulk_client(rt)  # made as the chunks make theirs (common.dynamo.bulk_client)
        replays = []
        for n_replay in range(3):
            raw_items = [{**item, "pk": {"S": f"RAW{n_replay}#" + item["pk"]["S"]}} for item in meter.written]
            replays.append(timed(lambda items=raw_items: batch_write(bulk, table, items, typed=True)))
        raw_s, raw_cpu = sorted(replays, key=lambda wall_cpu: wall_cpu[1])[1]
        # The cycle's floor, beside the bound: its own reads, its own events and its rating, each alone.
        reads_s, reads_cpu = timed(lambda: [bulk.query(**q) for q in meter.queries])
        events = rt.client("events")  # made as the publisher's (a default client)
        events_s, events_cpu = timed(
            lambda: [
                events.put_events(Entries=meter.entries[i : i + 10]) for i in range(0, len(meter.entries), 10)
            ]
        )
        alone, rated = rating_alone(bulk, table, meter.sent)

    lambda_calls = len(invocations)
    memory = {"BillingIssueBillsFunction": 1024}
    gb_s = sum(i.duration_ms / 1000 * memory.get(i.function, 512) / 1024 for i in invocations)
    # The application's sends, and per SQS-triggered invocation the event source mapping's
    # receive and delete (the local runtime's own polling is not what AWS would bill).
    sqs_requests = sum(v for k, v in meter.calls.items() if k.startswith("sqs:Send"))
    sqs_requests += 2 * sum(1 for i in invocations if i.trigger == "sqs")
    cost = {
        "lambda": lambda_calls * PRICE["lambda_request"] + gb_s * PRICE["lambda_gb_s"],
        "dynamodb": meter.wru * PRICE["wru"] + meter.rru * PRICE["rru"],
        "sqs": sqs_requests * PRICE["sqs"],
        "eventbridge": meter.events_put * PRICE["events"],
    }
    total = sum(cost.values())
    per_10k = total * 10_000 / max(billed, 1)
    print(f"cycle of {n} accounts on moto server: {billed} bills issued")
    print(f"  wall time                 {cycle_s:8.2f} s   (target < 60 s); CPU {cycle_cpu:.2f} s")
    print(f"  DynamoDB items written    {meter.items_written:8d}   ({meter.wru} WRU, {meter.rru:.0f} RRU)")
    print(
        f"  raw BatchWriteItem of the same {len(raw_items)} items: {raw_s:.2f} s"
        f" ({len(raw_items) / raw_s:,.0f} items/s); CPU {raw_cpu:.2f} s"
    )
    print(
        f"  ratio cycle / raw writes  {cycle_s / raw_s:8.2f} x  (target within 3x); in CPU time {cycle_cpu / raw_cpu:.2f} x"
    )
    floor_cpu = raw_cpu + reads_cpu + events_cpu + alone["rating"][1]
    print(f"    (the bound: the median of 3 replays, CPU {', '.join(f'{c:.2f}' for _, c in replays)} s)")
    print(
        f"  the cycle's floor, each part alone: its {len(meter.queries)} Queries {reads_s:.2f} s"
        f" (CPU {reads_cpu:.2f} s), its {len(meter.entries):,} events ({meter.bills_in_events:,} bills) in PutEvents"
        f" of 10 {events_s:.2f} s (CPU {events_cpu:.2f} s), the engine rating its {rated:,} accounts"
        f" {alone['rating'][0]:.2f} s (CPU {alone['rating'][1]:.2f} s); with the writes {floor_cpu:.2f} s CPU ="
        f" {floor_cpu / raw_cpu:.2f}x the writes alone, before any bill is built, written or published"
    )
    serialized = alone["items"][1] + alone["details"][1]
    print(
        f"    and the bills' items written as JSON alone {alone['items'][0]:.2f} s (CPU {alone['items'][1]:.2f} s),"
        f" their events' details {alone['details'][0]:.2f} s (CPU {alone['details'][1]:.2f} s): with these"
        f" {(floor_cpu + serialized) / raw_cpu:.2f}x the writes alone, before any polling or invocation"
    )
    print(f"  Lambda invocations        {lambda_calls:8d}   ({gb_s:.1f} GB-s in-process)")
    print("  where the cycle's time went (wall s / CPU s inside each function's invocations):")
    for name, wall in profile.wall.most_common():
        print(f"    {name:40s} {wall:7.2f} / {profile.cpu[name]:6.2f}")
    rest_wall, rest_cpu = cycle_s - sum(profile.wall.values()), cycle_cpu - sum(profile.cpu.values())
    print(f"    {'runtime: polling and dispatch':40s} {rest_wall:7.2f} / {rest_cpu:6.2f}")
    print("  of which inside the functions' AWS calls (wall s / CPU s: client and emulator), by operation:")
    for name, wall in meter.wall.most_common():
        print(f"    {name:40s} {wall:7.2f} / {meter.cpu[name]:6.2f}   ({meter.calls[name]} calls)")
    own_wall, own_cpu = (
        sum(profile.wall.values()) - sum(meter.wall.values()),
        sum(profile.cpu.values()) - sum(meter.cpu.values()),
    )
    own = "the functions' own code"
    print(f"    {own:40s} {own_wall:7.2f} / {own_cpu:6.2f}")
    print(
        f"  of which garbage collection   {pauses.seconds:8.2f} s, CPU {pauses.cpu:.2f} s (collections by generation:"
        f" {dict(sorted(pauses.collections.items()))})"
    )
    print(f"  requests: {dict(sorted(meter.calls.items()))}")
    print("  AWS cost at on-demand list prices: " + ", ".join(f"{k} ${v:.4f}" for k, v in cost.items()))
    print(f"  cost per 10,000 bills     ${per_10k:.4f}   (target <= $0.05)")


if __name__ == "__main__":
    main()
