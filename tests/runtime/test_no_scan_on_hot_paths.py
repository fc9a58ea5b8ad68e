"""No Scan on a hot path, in any service (issue 31): what a daily run, an event consumer, a
route or a report needs is found by a Query or a read of keys built for it, so its cost
follows its work, not the size of its table.

A quarter of the demo utility (the generator's smallest: MIN_SIZE accounts, every tenant's
cycle, the daily schedules, uploads, staff calls and payments through the real paths) runs
on the local runtime while every AWS call each function's process makes is counted, by
function and by operation (the invoker asks a fault plan's watch before it answers each
call: here a watch that only counts); then the clerk's reports (the failed-notices report,
an account's notice log, the unbilled report) are opened through the gateway. Scans are
allowed only to the functions of ``ADMIN_SCANS``, each with why it is not a hot path.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from sewerbill.local import LocalRuntime, invoker

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

# function -> why its Scans are not on a hot path (admin or rare work)
ADMIN_SCANS: dict[str, str] = {
    "StormwaterRunTariffCheckFunction": (
        "a tariff version coming into force re-determines every parcel of the tenant (every "
        "parcel is the work, once per version); a day without a new version reads nothing"
    ),
}


class CountingPlans:
    """A fault plan that kills nothing: it counts each function's AWS calls by name."""

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()

    def watch(self, function: str) -> Any:
        return _Counting(self.calls, function)


class _Counting:
    def __init__(self, calls: Counter[tuple[str, str]], function: str) -> None:
        self.calls, self.function = calls, function

    def kill_before_call(self, name: str) -> bool:
        self.calls[(self.function, name)] += 1
        return False

    def kill_before_ack(self) -> bool:
        return False

    def describe(self) -> str:
        return f"counting {self.function}'s calls"


@pytest.fixture(scope="module")
def quarter() -> Iterator[tuple[Any, CountingPlans, Counter[str], Any]]:
    from common.tariff_files import default_tariffs_dir, load_tariff_book
    from sewerbill.cli.demo_year import start_time
    from sewerbill.demo.generator import MIN_SIZE, generate
    from sewerbill.demo.year import YearRunner

    start = date(2025, 1, 1)
    demo = generate(MIN_SIZE, 1, start, 3, load_tariff_book(default_tariffs_dir()))
    scanned: Counter[str] = Counter()  # table -> Scans, whoever made them
    answer = invoker._aws_call

    def seen(method: str, url: str, headers: dict[str, str], body: bytes) -> Any:
        target = headers.get("X-Amz-Target") or headers.get("x-amz-target") or ""
        if target.endswith(".Scan"):
            scanned[json.loads(body).get("TableName", "?")] += 1
        return answer(method, url, headers, body)

    with (
        pytest.MonkeyPatch.context() as patch,
        LocalRuntime.start(
            ROOT / "template.yaml",
            start_time=start_time(start),
            parameters={"TariffsDir": str(ROOT / "infra" / "tariffs")},
            isolate="process",
        ) as rt,
    ):
        patch.setattr(invoker, "_aws_call", seen)
        plans = CountingPlans()
        rt.invoker.faults = plans
        runner = YearRunner(rt, demo, lambda _line: None)
        runner.run()
        yield rt, plans, scanned, runner


def test_a_quarter_of_schedules_uploads_and_calls_makes_no_scan_on_a_hot_path(
    quarter: tuple[Any, CountingPlans, Counter[str], Any],
) -> None:
    rt, plans, scanned, _ = quarter
    assert len(rt.dead_letters) == 0
    functions = {f for f, _ in plans.calls}
    # the counting saw the schedules' functions, the consumers and the routes
    assert {
        "MeteringRunDailyFunction",
        "BillingRunDailyAssessmentFunction",
        "BillingIssueBillsFunction",
        "NoticesOnNoticeEventFunction",
    } <= functions, sorted(functions)
    assert sum(n for (_, name), n in plans.calls.items() if name == "Query") > 0  # it counts calls
    scans = {f: n for (f, name), n in plans.calls.items() if name == "Scan"}
    assert {f: n for f, n in scans.items() if f not in ADMIN_SCANS} == {}, (scans, dict(scanned))


def test_the_clerks_reports_query_their_own_keys(
    quarter: tuple[Any, CountingPlans, Counter[str], Any],
) -> None:
    import urllib.request

    rt, plans, _, runner = quarter
    account = next(a for t, a, _ in runner.bills if t == "grafton-sewer")
    token = runner.staff_token("grafton-sewer")
    before = Counter(plans.calls)
    for path in (
        "/staff/grafton-sewer/notices/failed",
        f"/staff/grafton-sewer/accounts/{account}/notices?limit=5",
        "/staff/grafton-sewer/reports/unbilled",
        "/staff/grafton-sewer/reports/aging",
    ):
        request = urllib.request.Request(rt.gateway_url + path, headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 - the local gateway
            assert answer.status == 200, path
    opened = plans.calls - before
    assert sum(opened.values()) > 0
    assert {f: n for (f, name), n in opened.items() if name == "Scan"} == {}
