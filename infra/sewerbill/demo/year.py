"""A year of the generated demo utility on a running local stack (issue 32): ``make demo``.

Everything goes in through the paths a utility uses: each :class:`DemoFile` is uploaded to
the uploads bucket on its day (``rt.upload``: the S3 trigger takes it in), the staff calls
go through the gateway with a staff token of their tenant, payments are lockbox files on
their ``paid_on`` day (or, for the portal channel, ``POST /payments`` with the customer's
token), and the simulated clock moves a day at a time so every schedule fires in order
(billing cycles, the daily assessment, metering's daily run, the print batch, the tax roll).

A day's uploads are made at 00:30 in the utilities' time zone: the local date is the day
of the file (a read dated the 1st is not "in the future"), and it is before the first
schedule of the day (01:00), so the 1st's reads are in before its 06:00 billing cycle.

Bills are read back through the staff read routes (CONTRACTS.md) once their cycle has run,
to turn each payment intent into its payment. At the end :func:`collect` gathers what a
clerk checks (bills and revenue by tenant and fund, payments, arrears, penalties, notices,
holds, rejections, dead letters) and sets the generator's ``expected`` beside it.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from sewerbill.demo.generator import (
    PAYMENT_COLUMNS,
    TENANTS,
    DemoUtility,
    PaymentIntent,
    intent_paid_on,
    lockbox_row,
)

LOCAL = ZoneInfo("America/Chicago")
UPLOADS = "UploadsBucket"
ZERO = Decimal("0.00")


def local_instant(day: date, hour: int = 0, minute: int = 30) -> datetime:
    """``day`` at ``hour:minute`` in the utilities' zone, as an aware UTC datetime."""
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=LOCAL).astimezone(UTC)


class DemoError(RuntimeError):
    """The year could not go on (a route refused a staff call, a file was not taken in)."""


@dataclass
class Api:
    """The local gateway, called as a client would (JSON in and out)."""

    base: str

    def call(
        self,
        method: str,
        path: str,
        token: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("authorization", f"Bearer {token}")
        if data is not None:
            req.add_header("content-type", "application/json")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:  # noqa: S310 - loopback gateway
                status, text = resp.status, resp.read()
        except urllib.error.HTTPError as err:
            status, text = err.code, err.read()
        try:
            return status, json.loads(text or b"null")
        except ValueError:
            return status, text.decode(errors="replace")


@dataclass
class Payment:
    intent: PaymentIntent
    paid_on: date
    amount: Decimal


@dataclass
class YearLog:
    """What the runner did, counted as it went (the summary sets it beside the stack's view)."""

    uploads: dict[str, int] = field(default_factory=dict)
    staff_calls: dict[str, int] = field(default_factory=dict)
    refused_calls: list[dict[str, Any]] = field(default_factory=list)
    lockbox_files: int = 0
    lockbox_lines: int = 0
    portal_payments: int = 0
    payments_by_kind: dict[str, dict[str, int]] = field(default_factory=dict)
    paid_amount: dict[str, Decimal] = field(default_factory=dict)
    intents_without_bill: list[dict[str, str]] = field(default_factory=list)
    payments_after_year: dict[str, int] = field(default_factory=dict)
    read_files: list[tuple[str, str, int]] = field(default_factory=list)  # key, read_on, lines
    months: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


class YearRunner:
    """Runs ``demo`` on ``rt`` from its start, a day at a time; ``say`` gets one line a month."""

    def __init__(self, rt: Any, demo: DemoUtility, say: Callable[[str], None]) -> None:
        self.rt, self.demo, self.say = rt, demo, say
        self.api = Api(rt.gateway_url)
        self.log = YearLog()
        self._staff: dict[str, str] = {}
        self._customer: dict[tuple[str, str], str] = {}
        # intents waiting for their bill, by (tenant, account, period_start)
        self._waiting: dict[tuple[str, str, date], PaymentIntent] = {
            (p.tenant, p.account_id, p.period_start): p for p in demo.payment_intents()
        }
        self._due: dict[date, list[Payment]] = {}
        self.bills: dict[tuple[str, str, date], dict[str, Any]] = {}
        self._paid: list[Payment] = []
        self._last = demo.start

    # --- tokens -----------------------------------------------------------------------------
    def staff_token(self, tenant: str) -> str:
        if tenant not in self._staff:
            self._staff[tenant] = self.rt.mint_token(
                sub=f"demo-clerk-{tenant}",
                ttl=400 * 86400,
                claims={"role": "staff", "name": "Demo Clerk", "tenants": [tenant]},
            )
        return self._staff[tenant]

    def customer_token(self, tenant: str, account_id: str) -> str:
        key = (tenant, account_id)
        if key not in self._customer:
            self._customer[key] = self.rt.mint_token(
                sub=f"demo-customer-{tenant}-{account_id}",
                ttl=400 * 86400,
                claims={"role": "customer", "tenants": [tenant], "accounts": [account_id]},
            )
        return self._customer[key]

    # --- the year ---------------------------------------------------------------------------
    def run(self) -> YearLog:
        began = time.perf_counter()
        demo = self.demo
        files_by_day: dict[date, list[Any]] = {}
        for f in demo.files:
            files_by_day.setdefault(f.on, []).append(f)
        calls_by_day: dict[date, list[Any]] = {}
        for c in demo.api_calls:
            calls_by_day.setdefault(c.on, []).append(c)
        end = date.fromisoformat(demo.expected["generator"]["end"])
        cycle_days = {
            date.fromisoformat(e) for t in TENANTS for _, e in demo.expected["tenants"][t]["periods"]
        }
        day = demo.start
        self._last = end
        month_began, month_mark = time.perf_counter(), len(self.rt.invocations)
        month = (day.year, day.month)
        while day <= end:
            at = local_instant(day)
            if at > self.rt.clock.now:
                self.rt.clock.advance(to=at)
            if (day.year, day.month) != month:
                self._month_line(month, month_began, month_mark)
                month, month_began, month_mark = (
                    (day.year, day.month),
                    time.perf_counter(),
                    len(self.rt.invocations),
                )
            for call in calls_by_day.get(day, ()):
                self._staff_call(call)
            for f in files_by_day.get(day, ()):
                data = f.data()
                self.rt.upload(UPLOADS, f.key, data)
                self.log.uploads[f.kind] = self.log.uploads.get(f.kind, 0) + 1
                if f.kind == "reads":
                    self.log.read_files.append((f.key, f.on.isoformat(), max(0, data.count(b"\n") - 1)))
            self._pay(day)
            if day in cycle_days:
                # the cycle runs at 06:00 local: move past it, then read the new bills back
                self.rt.clock.advance(to=local_instant(day, 12, 0))
                self._learn_bills(day)
                self._pay(day)  # an intent due today (bill date and payment the same day)
            day += timedelta(days=1)
        # ``end`` is the first day after the year: its files (the last period's reads) went
        # in and its cycles ran. One day more releases the stormwater bills notices holds for
        # a partner until the day after their bill date (N-BILL-COMBINED), so every bill of
        # the year has its document; what the last bills' payers pay falls after the year.
        self.rt.clock.advance(to=local_instant(end + timedelta(days=1), 12, 0))
        self._month_line(month, month_began, month_mark, final=True)
        for payments in self._due.values():
            for p in payments:
                after = self.log.payments_after_year.setdefault(p.intent.tenant, 0)
                self.log.payments_after_year[p.intent.tenant] = after + 1
        self.log.intents_without_bill = [
            {"tenant": t, "account_id": a, "period_start": s.isoformat()}
            for (t, a, s) in sorted(self._waiting)
        ]
        self.log.seconds = time.perf_counter() - began
        return self.log

    def _month_line(self, month: tuple[int, int], began: float, mark: int, final: bool = False) -> None:
        y, m = month
        bills = sum(1 for (_, _, s), b in self.bills.items() if b["_learned"] == (y, m))
        paid = sum(1 for p in self._paid if (p.paid_on.year, p.paid_on.month) == (y, m))
        uploads = sum(1 for f in self.demo.files if (f.on.year, f.on.month) == (y, m) and f.on <= self._last)
        row: dict[str, Any] = {
            "month": f"{y:04d}-{m:02d}"
            + ("-01 year end: the last period's reads and cycles" if final else ""),
            "uploads": uploads,
            "bills_read_back": bills,
            "payments": paid,
            "invocations": len(self.rt.invocations) - mark,
            "dead_letters": len(self.rt.dead_letters),
            "seconds": round(time.perf_counter() - began, 1),
        }
        spent: dict[str, float] = {}
        for inv in self.rt.invocations[mark:]:
            spent[inv.function] = spent.get(inv.function, 0.0) + inv.duration_ms / 1000
        row["busiest"] = {k: round(v, 1) for k, v in sorted(spent.items(), key=lambda kv: -kv[1])[:4]}
        self.log.months.append(row)
        self.say(
            f"  {y:04d}-{m:02d}  {uploads:3d} files  {bills:4d} bills  {paid:4d} payments  "
            f"{row['invocations']:6d} invocations  dead letters {row['dead_letters']}  ({row['seconds']:.1f} s)"
            + ("  year end: the last period's reads and cycles" if final else "")
        )

    def _staff_call(self, call: Any) -> None:
        status, body = self.api.call(call.method, call.path, self.staff_token(call.tenant), call.body)
        kind = call.path.rsplit("/", 2)[-2] if call.method == "PUT" else call.path.rsplit("/", 1)[-1]
        self.log.staff_calls[kind] = self.log.staff_calls.get(kind, 0) + 1
        if status >= 300:
            self.log.refused_calls.append(
                {"on": call.on.isoformat(), "path": call.path, "status": status, "body": body}
            )

    # --- bills and payments -----------------------------------------------------------------
    def _learn_bills(self, day: date) -> None:
        """Read back the bills of every account still waiting for one whose period has ended."""
        wanted = sorted({(t, a) for (t, a, s), p in self._waiting.items() if p.period_end <= day})
        if not wanted:
            return

        def fetch(key: tuple[str, str]) -> tuple[tuple[str, str], list[dict[str, Any]]]:
            tenant, account = key
            status, body = self.api.call(
                "GET", f"/staff/{tenant}/accounts/{account}/bills", self.staff_token(tenant)
            )
            return key, (body.get("bills", []) if status == 200 and isinstance(body, dict) else [])

        with ThreadPoolExecutor(max_workers=4) as pool:
            found = list(pool.map(fetch, wanted))
        learned = (day.year, day.month)
        for (tenant, account), bills in found:
            for b in bills:
                start = date.fromisoformat(b["period"]["start"])
                key = (tenant, account, start)
                if key in self.bills:
                    continue
                self.bills[key] = {**b, "_learned": learned}
                intent = self._waiting.pop(key, None)
                if intent is not None:
                    self._schedule(intent, b, day)

    def _schedule(self, intent: PaymentIntent, bill: dict[str, Any], today: date) -> None:
        if intent.kind == "missing" or intent.channel == "none":
            return
        total = Decimal(bill["total"])
        bill_date, due = date.fromisoformat(bill["bill_date"]), date.fromisoformat(bill["due_date"])
        paid_on = max(today, intent_paid_on(intent, bill_date, due))
        amount = (total * intent.fraction).quantize(Decimal("0.01"))
        if intent.channel == "lockbox":
            row = lockbox_row(intent, total, bill_date, due)
            if row is None:
                return
            paid_on, amount = max(today, date.fromisoformat(row[3])), Decimal(row[4])
        if amount <= 0:
            return
        self._due.setdefault(paid_on, []).append(Payment(intent, paid_on, amount))

    def _pay(self, day: date) -> None:
        due = self._due.pop(day, [])
        if not due:
            return
        lockbox: dict[str, list[Payment]] = {}
        for p in due:
            if p.intent.channel == "portal":
                self._portal(p)
            else:
                lockbox.setdefault(p.intent.tenant, []).append(p)
        for tenant, payments in sorted(lockbox.items()):
            lines = [",".join(PAYMENT_COLUMNS)]
            for p in payments:
                i = p.intent
                lines.append(f"{i.tenant},{i.account_id},{i.reference},{p.paid_on.isoformat()},{p.amount}")
            key = f"payments/demo-{tenant}-{day.isoformat()}.csv"
            self.rt.upload(UPLOADS, key, "\n".join(lines) + "\n")
            self.log.lockbox_files += 1
            self.log.lockbox_lines += len(payments)
            for p in payments:
                self._count(p)
        self.log.uploads["payments"] = self.log.lockbox_files

    def _portal(self, p: Payment) -> None:
        i = p.intent
        status, body = self.api.call(
            "POST",
            "/payments",
            self.customer_token(i.tenant, i.account_id),
            {"tenant": i.tenant, "account_id": i.account_id, "amount": str(p.amount)},
            headers={"idempotency-key": i.reference},
        )
        if status != 200:
            self.log.refused_calls.append({"on": p.paid_on.isoformat(), "path": "/payments", "status": status,
                                           "body": body})  # fmt: skip
            return
        self.log.portal_payments += 1
        self._count(p)

    def _count(self, p: Payment) -> None:
        i = p.intent
        kinds = self.log.payments_by_kind.setdefault(i.tenant, {})
        kinds[i.kind] = kinds.get(i.kind, 0) + 1
        kinds[f"channel:{i.channel}"] = kinds.get(f"channel:{i.channel}", 0) + 1
        self.log.paid_amount[i.tenant] = self.log.paid_amount.get(i.tenant, ZERO) + p.amount
        self._paid.append(p)


# --- what happened --------------------------------------------------------------------------


def _sum(values: Iterable[Decimal]) -> Decimal:
    return sum(values, ZERO)


def collect(rt: Any, runner: YearRunner) -> dict[str, Any]:
    """The year in the figures a clerk checks, read back from the stack through its staff
    routes (bills, revenue, aging, unbilled, tax roll, notices) and its buckets (reports),
    with the generator's ``expected`` beside them in ``checks``."""
    demo, api, log = runner.demo, runner.api, runner.log
    expected = demo.expected
    start = date.fromisoformat(expected["generator"]["start"])
    end = date.fromisoformat(expected["generator"]["end"])
    tenants: dict[str, Any] = {}
    for t in TENANTS:
        token = runner.staff_token(t)
        bills = {k: b for k, b in runner.bills.items() if k[0] == t}
        per_period: dict[str, int] = {}
        for _, _, s in bills:
            per_period[s.isoformat()] = per_period.get(s.isoformat(), 0) + 1
        # through the year-end day: its cycles issue the last period's bills
        through = end + timedelta(days=1)
        q = urllib.parse.urlencode({"start": start.isoformat(), "end": through.isoformat()})
        _, revenue = api.call("GET", f"/staff/{t}/reports/revenue?{q}", token)
        by_fund: dict[str, Decimal] = {}
        by_kind: dict[str, Decimal] = {}
        for row in (revenue or {}).get("rows", []):
            by_fund[row["fund"]] = by_fund.get(row["fund"], ZERO) + Decimal(row["amount"])
            by_kind[row["kind"]] = by_kind.get(row["kind"], ZERO) + Decimal(row["amount"])
        _, aging = api.call("GET", f"/staff/{t}/reports/aging", token)
        aging_rows = (aging or {}).get("rows", [])
        buckets = {k: _sum(Decimal(r[k]) for r in aging_rows) for k in ("current", "30", "60", "90+")}
        _, unbilled = api.call("GET", f"/staff/{t}/reports/unbilled", token)
        held: dict[str, int] = {}
        for row in (unbilled or {}).get("rows", []):
            if row["status"] == "held":
                held[row["reason"]] = held.get(row["reason"], 0) + 1
        tax_roll: dict[str, Any] = {}
        for year in sorted({start.year, (end - timedelta(days=1)).year}):
            status, roll = api.call("GET", f"/staff/{t}/tax-roll/{year}", token)
            if status == 200 and isinstance(roll, dict):
                entries = roll.get("entries", [])
                tax_roll[str(year)] = {
                    "noticed_on": roll.get("noticed_on"),
                    "certified_on": roll.get("certified_on"),
                    "parcels": len(entries),
                    "arrears": str(_sum(Decimal(e["arrears"]) for e in entries)),
                    "penalty": str(_sum(Decimal(e["penalty"]) for e in entries)),
                    "amount": str(_sum(Decimal(e["amount"]) for e in entries)),
                }
        tenants[t] = {
            "bills": len(bills),
            "bills_per_period": dict(sorted(per_period.items())),
            "billed": str(_sum(Decimal(b["total"]) for b in bills.values())),
            "estimated_bills": sum(1 for b in bills.values() if b.get("estimated")),
            "revenue_by_fund": {k: str(v) for k, v in sorted(by_fund.items())},
            "revenue_by_kind": {k: str(v) for k, v in sorted(by_kind.items())},
            "late_charges": str(by_kind.get("late_charge", ZERO)),
            "penalties": str(by_kind.get("penalty", ZERO)),
            "payments": dict(sorted(log.payments_by_kind.get(t, {}).items())),
            "paid": str(log.paid_amount.get(t, ZERO)),
            "arrears": {k: str(v) for k, v in buckets.items()},
            "accounts_in_arrears": sum(1 for r in aging_rows if Decimal(r["balance"]) > 0),
            "balance": str(_sum(Decimal(r["balance"]) for r in aging_rows)),
            "held": dict(sorted(held.items())),
            "tax_roll": tax_roll,
        }
    notices = _notices(runner)
    for t in TENANTS:
        tenants[t]["notices"] = notices.get(t, {})
    reports = rejection_reports(rt)
    checks = _checks(runner, tenants, reports)
    return {
        "generator": expected["generator"],
        "ran": {
            "seconds": round(log.seconds, 1),
            "invocations": len(rt.invocations),
            "uploads": dict(sorted(log.uploads.items())),
            "staff_calls": dict(sorted(log.staff_calls.items())),
            "refused_calls": log.refused_calls,
            "lockbox_files": log.lockbox_files,
            "lockbox_lines": log.lockbox_lines,
            "portal_payments": log.portal_payments,
            "intents_without_bill": log.intents_without_bill,
            "payments_after_year": log.payments_after_year,
            "months": log.months,
        },
        "tenants": tenants,
        "rejections": reports,
        "dead_letters": [
            {"queue": d.queue, "function": d.function, "message_id": d.message_id, "body": d.body[:500]}
            for d in rt.dead_letters
        ],
        "checks": checks,
        "ok": all(c["ok"] for c in checks),
    }


def _notices(runner: YearRunner) -> dict[str, dict[str, int]]:
    """Every account's notice log (the staff route), counted by rule, channel and status."""
    accounts = sorted({(t, a) for t, a, _ in runner.bills})

    def fetch(key: tuple[str, str]) -> tuple[str, list[dict[str, Any]]]:
        tenant, account = key
        status, body = runner.api.call(
            "GET", f"/staff/{tenant}/accounts/{account}/notices", runner.staff_token(tenant)
        )
        return tenant, (body.get("notices", []) if status == 200 and isinstance(body, dict) else [])

    out: dict[str, dict[str, int]] = {}
    with ThreadPoolExecutor(max_workers=4) as pool:
        for tenant, found in pool.map(fetch, accounts):
            counts = out.setdefault(tenant, {})
            for n in found:
                k = f"{n['rule_id']} {n['channel']} {n['status']}"
                counts[k] = counts.get(k, 0) + 1
    return {t: dict(sorted(c.items())) for t, c in out.items()}


def _buckets(rt: Any) -> dict[str, str]:
    """The stack's buckets by logical id (name)."""
    return {lid: rt.resource(lid) for lid, kind in rt.stack.types.items() if kind == "AWS::S3::Bucket"}


def objects(rt: Any, bucket: str, prefix: str = "") -> Iterable[str]:
    s3 = rt.client("s3")
    token: dict[str, Any] = {}
    while True:
        page = s3.list_objects_v2(Bucket=bucket, Prefix=prefix, **token)
        for o in page.get("Contents", []):
            yield o["Key"]
        if not page.get("IsTruncated"):
            return
        token = {"ContinuationToken": page["NextContinuationToken"]}


def rejection_reports(rt: Any) -> list[dict[str, Any]]:
    """Every report the services wrote under ``reports/`` (common.reports), with its rows."""
    s3 = rt.client("s3")
    found = []
    for lid, name in sorted(_buckets(rt).items()):
        for k in objects(rt, name, "reports/"):
            body = s3.get_object(Bucket=name, Key=k)["Body"].read()
            rows = max(0, body.count(b"\n") - 1) if k.endswith(".csv") else None
            found.append({"bucket": lid, "key": k, "rows": rows, "bytes": len(body)})
    return found


def _checks(
    runner: YearRunner, tenants: dict[str, Any], reports: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    expected, log, rt = runner.demo.expected, runner.log, runner.rt
    checks: list[dict[str, Any]] = []

    def check(name: str, want: Any, got: Any) -> None:
        checks.append({"check": name, "expected": want, "actual": got, "ok": want == got})

    for t in TENANTS:
        check(f"bills per period, {t}", expected["bills_per_period"][t], tenants[t]["bills_per_period"])
    check("files uploaded by kind", {k: v for k, v in expected["files"].items()},
          {k: v for k, v in log.uploads.items() if k != "payments"})  # fmt: skip
    check("staff calls refused", [], log.refused_calls)
    check("sampling points set", expected["sampling_points"], log.staff_calls.get("sampling-points", 0))
    check("septage permits", expected["septage"]["permits"], log.staff_calls.get("permits", 0))
    check("septage disposals", expected["septage"]["disposals"], log.staff_calls.get("disposals", 0))
    paid_want = {t: sum(v for k, v in c.items() if not k.startswith("channel:") and k != "missing")
                 for t, c in expected["payment_intents"].items()}  # fmt: skip
    paid_got = {t: sum(v for k, v in log.payments_by_kind.get(t, {}).items() if not k.startswith("channel:"))
                for t in TENANTS}  # fmt: skip
    after = {t: log.payments_after_year.get(t, 0) for t in TENANTS}
    check(
        "payments made in the year + due after it (intents not missing)",
        paid_want,
        {t: paid_got[t] + after[t] for t in TENANTS},
    )
    check("intents whose bill never came", [], log.intents_without_bill)
    # reads taken in: each read file's lines less those metering's rejection report lists
    reads: dict[str, dict[str, int]] = {t: {} for t in expected["reads_per_period"]}
    for key, read_on, lines in log.read_files:
        tenant = next(t for t in reads if f"-{t}-" in key)
        refused = sum(r["rows"] or 0 for r in reports if key in r["key"] and "reject" in r["key"])
        reads[tenant][read_on] = reads[tenant].get(read_on, 0) + lines - refused
    check("register reads taken in per period end", expected["reads_per_period"], reads)
    rejected = sum(r["rows"] or 0 for r in reports if "reject" in r["key"])
    check("rejected lines in the demo's files", 0, rejected)
    check("dead letters", 0, len(rt.dead_letters))
    return checks


def render(summary: dict[str, Any]) -> str:
    """The summary as a clerk reads it: a block per tenant, then rejections, dead letters
    and the checks against the generator's expectations."""
    g, ran = summary["generator"], summary["ran"]
    out = [
        f"The demo year: {g['size']} accounts, seed {g['seed']}, {g['start']} to {g['end']} ({g['months']} months)",
        f"  {sum(ran['uploads'].values())} files uploaded ({', '.join(f'{k} {v}' for k, v in ran['uploads'].items())}), "
        f"{sum(ran['staff_calls'].values())} staff calls, {ran['lockbox_lines']} lockbox lines in "
        f"{ran['lockbox_files']} files, {ran['portal_payments']} portal payments; "
        f"{ran['invocations']} invocations in {ran['seconds']} s",
    ]
    for t, s in summary["tenants"].items():
        out.append("")
        out.append(f"{t}")
        out.append(f"  bills           {s['bills']} ({s['estimated_bills']} estimated), billed {s['billed']}")
        out.append("  per period      " + ", ".join(f"{p} {n}" for p, n in s["bills_per_period"].items()))
        out.append("  revenue by fund " + ", ".join(f"{f} {a}" for f, a in s["revenue_by_fund"].items()))
        out.append(f"  late charges    {s['late_charges']}   penalties {s['penalties']}")
        pays = s["payments"]
        out.append(
            f"  payments        {sum(v for k, v in pays.items() if not k.startswith('channel:'))} paid {s['paid']} ("
            + ", ".join(f"{k} {v}" for k, v in pays.items())
            + ")"
        )
        a = s["arrears"]
        out.append(
            f"  arrears         {s['accounts_in_arrears']} accounts, balance {s['balance']} "
            f"(current {a['current']}, 30 {a['30']}, 60 {a['60']}, 90+ {a['90+']})"
        )
        for year, roll in s["tax_roll"].items():
            out.append(
                f"  tax roll {year}   noticed {roll['noticed_on']}, certified {roll['certified_on']}: "
                f"{roll['parcels']} parcels, arrears {roll['arrears']} + penalty {roll['penalty']} = {roll['amount']}"
            )
        if s["held"]:
            out.append("  held            " + "; ".join(f"{n} x {r}" for r, n in s["held"].items()))
        else:
            out.append("  held            none")
        out.append(f"  notices         {sum(s['notices'].values())}")
        for k, n in s["notices"].items():
            out.append(f"    {n:5d}  {k}")
    out.append("")
    rejected = [r for r in summary["rejections"] if r["rows"]]
    out.append(
        f"rejected lines: {sum(r['rows'] for r in rejected)} in {len(rejected)} report(s)"
        + ("" if not rejected else " (" + ", ".join(f"{r['bucket']}/{r['key']}" for r in rejected) + ")")
    )
    out.append(f"dead letters: {len(summary['dead_letters'])}")
    for d in summary["dead_letters"]:
        out.append(f"  {d['queue']} {d['function']} {d['body'][:160]}")
    out.append("")
    out.append("beside the generator's expectations:")
    for c in summary["checks"]:
        mark = "ok  " if c["ok"] else "DIFF"
        line = f"  {mark} {c['check']}"
        if not c["ok"]:
            line += f": expected {json.dumps(c['expected'], default=str)[:300]}, got {json.dumps(c['actual'], default=str)[:300]}"
        else:
            line += f": {json.dumps(c['actual'], default=str)[:120]}"
        out.append(line)
    out.append(f"{'all figures match' if summary['ok'] else 'SOME FIGURES DIFFER'}")
    return "\n".join(out) + "\n"
