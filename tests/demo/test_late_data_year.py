"""A season of the demo utility with back-dated and late data (issue 26's completeness): the
unbilled report lists, for every tenant, only account-periods held for a reason a clerk can
act on (what is missing and who can supply it) or not yet due, and the late data is billed
by the next run.

The demo generator's files (its smallest size, three months from 2025-01-01) are moved in
time before the runner uploads them, as a utility's data arrives in practice:

- back-dated accounts: two accounts of each tenant that open on the first day reach billing
  in an accounts file 40 days later (after Pleasant Prairie's first monthly cycle);
- a late read: one Pleasant Prairie meter's read at the first period's end arrives 12 days
  after the others (after that period's cycle: the daily run estimates it, then the read
  replaces the estimate);
- a late parcel: one stormwater account's parcel is in a GIS extract 50 days late, so its
  first ERU determination must cover the account's unbilled periods.
"""

from __future__ import annotations

import dataclasses
import json
import urllib.request
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from common.tariff_files import default_tariffs_dir, load_tariff_book
from sewerbill.cli.demo_year import start_time
from sewerbill.demo.generator import MIN_SIZE, PP, PPW, TENANTS, DemoFile, DemoUtility, generate
from sewerbill.demo.year import YearRunner
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
START = date(2025, 1, 1)
MONTHS = 3
LATE_ACCOUNTS = timedelta(days=40)
LATE_READ = timedelta(days=12)
LATE_PARCEL = timedelta(days=50)


def _split(f: DemoFile, moved: set[str], column: str, later: timedelta, suffix: str) -> list[DemoFile]:
    """``f`` without the rows whose ``column`` is in ``moved``, and a file of those rows
    uploaded ``later`` (its key tells it apart)."""
    at = f.columns.index(column)

    def kept() -> Iterator[tuple[str, ...]]:
        return (r for r in f.rows() if r[at] not in moved)

    def late() -> Iterator[tuple[str, ...]]:
        return (r for r in f.rows() if r[at] in moved)

    key, dot, ext = f.key.rpartition(".")
    return [
        dataclasses.replace(f, rows=kept),
        dataclasses.replace(f, on=f.on + later, key=f"{key}-{suffix}{dot}{ext}", rows=late),
    ]


def _late(demo: DemoUtility) -> tuple[DemoUtility, dict[str, Any]]:
    first_accounts = next(f for f in demo.files if f.kind == "accounts" and f.on == demo.start)
    account_at = first_accounts.columns.index("account_id")
    tenant_at = first_accounts.columns.index("tenant")
    by_tenant: dict[str, list[str]] = {}
    for row in first_accounts.rows():
        by_tenant.setdefault(row[tenant_at], []).append(row[account_at])
    # the last two of each tenant (the demo identities are the first ones)
    back_dated = {t: ids[-2:] for t, ids in by_tenant.items()}
    moved_accounts = {a for ids in back_dated.values() for a in ids}

    pp_meters = next(f for f in demo.files if f.kind == "meters" and f.on == demo.start)
    meter_at, owner_at = pp_meters.columns.index("meter_id"), pp_meters.columns.index("account_id")
    pp_accounts = [a for a in by_tenant[PP] if a not in moved_accounts]
    late_meter = next(r[meter_at] for r in pp_meters.rows() if r[owner_at] == pp_accounts[-1])
    first_pp_read = min(
        (
            f
            for f in demo.files
            if f.kind == "reads" and any(r[0] == PP and r[1] == late_meter for r in f.rows())
        ),
        key=lambda f: f.on,
    )

    ppw_accounts = [a for a in by_tenant[PPW] if a not in moved_accounts]
    parcel_at = first_accounts.columns.index("parcel_id")
    late_parcel = next(r[parcel_at] for r in first_accounts.rows() if r[account_at] == ppw_accounts[-1])
    parcels = next(f for f in demo.files if f.kind == "gis" and f.format == "csv")

    files: list[DemoFile] = []
    for f in demo.files:
        if f is first_accounts:
            files += _split(f, moved_accounts, "account_id", LATE_ACCOUNTS, "back-dated")
        elif f is first_pp_read:
            files += _split(f, {late_meter}, "meter_id", LATE_READ, "late")
        elif f is parcels:
            files += _split(f, {late_parcel}, "parcel_id", LATE_PARCEL, "late")
        else:
            files.append(f)
    moved = {
        "back_dated": back_dated,
        "late_read": (pp_accounts[-1], late_meter, first_pp_read.on),
        "late_parcel": (ppw_accounts[-1], late_parcel),
    }
    return dataclasses.replace(demo, files=files), moved


def _get(rt: LocalRuntime, path: str, token: str) -> Any:
    request = urllib.request.Request(rt.gateway_url + path, headers={"authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=60) as resp:  # noqa: S310 - loopback gateway
        return json.loads(resp.read())


@pytest.fixture(scope="module")
def season() -> Iterator[tuple[LocalRuntime, YearRunner, dict[str, Any]]]:
    demo, moved = _late(generate(MIN_SIZE, 7, START, MONTHS, load_tariff_book(default_tariffs_dir())))
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=start_time(START),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
    ) as rt:
        runner = YearRunner(rt, demo, lambda _line: None)
        runner.run()
        yield rt, runner, moved


def _unbilled(rt: LocalRuntime, runner: YearRunner, tenant: str) -> list[dict[str, Any]]:
    return _get(rt, f"/staff/{tenant}/reports/unbilled", runner.staff_token(tenant))["rows"]


def _bill_periods(rt: LocalRuntime, runner: YearRunner, tenant: str, account: str) -> set[str]:
    bills = _get(rt, f"/staff/{tenant}/accounts/{account}/bills", runner.staff_token(tenant))["bills"]
    return {b["period"]["start"] for b in bills}


def test_the_unbilled_report_lists_only_what_a_clerk_can_act_on(season: Any) -> None:
    rt, runner, _ = season
    assert rt.dead_letters == []
    for tenant in TENANTS:
        for row in _unbilled(rt, runner, tenant):
            assert row["status"] in ("held", "not_yet_due"), row
            if row["status"] == "held":
                assert row["reason"].strip() and row["who_can_supply"].strip(), (tenant, row)
            else:  # ended after the last cycle that could have looked at it
                assert date.fromisoformat(row["period_end"]) > START + timedelta(days=28 * MONTHS), row


def test_every_bill_the_generator_expects_came_late_data_included(season: Any) -> None:
    rt, runner, moved = season
    expected = {(t, a, s) for (t, a, s) in runner.bills} | {
        (w["tenant"], w["account_id"], date.fromisoformat(w["period_start"]))
        for w in runner.log.intents_without_bill
    }
    for tenant, accounts in moved["back_dated"].items():
        for account in accounts:  # the moved accounts had bills to come, from the first period
            assert (tenant, account, START) in expected, (tenant, account)
    assert runner.log.intents_without_bill == []


def test_the_late_read_and_the_late_parcel_are_billed_from_the_first_period(season: Any) -> None:
    rt, runner, moved = season
    account, _meter, _ = moved["late_read"]
    assert START.isoformat() in _bill_periods(rt, runner, PP, account)
    stormwater_account, _parcel = moved["late_parcel"]
    assert START.isoformat() in _bill_periods(rt, runner, PPW, stormwater_account)
    held = [r for r in _unbilled(rt, runner, PPW) if r["account_id"] == stormwater_account]
    assert [r for r in held if r["status"] == "held"] == []
