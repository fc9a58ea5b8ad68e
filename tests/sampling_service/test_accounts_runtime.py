"""Billing's accounts reach sampling and metering (issue 26), through the local runtime on
moto server: the real template, end to end.

An accounts file (accounts/) is taken in by billing, whose table stream publishes the
versions as ``AccountsChanged``; the rules deliver them to sampling's queue and to
metering's meters-file FIFO queue. Then:

- a lab file for a billed Pleasant Prairie account is taken in, sampled at the account's
  service address (no staff registration);
- a meters file uploaded before its account's accounts file waits in suspense and is taken
  in when the accounts arrive, as is a lab line for that account;
- a lab line for an account that never arrives stays listed at ``lab-suspense``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from runtime_support import HEADER, PP, REPO, call

from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

ACCOUNTS_HEADER = (
    "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,zone,meter_size\n"
)
METERS_HEADER = "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading,size\n"


def account(account_id: str, address: str) -> str:
    return f"{PP},{account_id},Brewer {account_id},{address},PO Box 9,53158,2024-12-01,nonresidential,PP,1\n"


def lab(sample_id: str, account_id: str, bod: str) -> str:
    return f"{PP},{sample_id},{account_id},2025-01-15,bod,{bod},mg/l,2025-01-17,Acme Labs,routine,,SM 5210B\n"


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2025, 2, 3, 15, 0, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": "accounts-flow"},
        stack_name="accounts-flow",
    ) as runtime:
        yield runtime


def meters_of(rt: LocalRuntime) -> list[str]:
    items = rt.client("dynamodb").scan(TableName=rt.resource("MeteringTable"))["Items"]
    return sorted(i["pk"]["S"] for i in items if i["sk"]["S"] == "METER")


def test_billings_accounts_reach_sampling_and_metering(rt: LocalRuntime) -> None:
    # The accounts file, then a lab file for one of its accounts: taken in at its service address.
    rt.upload(
        "UploadsBucket",
        "accounts/2025-02-03.csv",
        ACCOUNTS_HEADER + account("PP-0201", "9100 Bain Station Rd"),
    )
    rt.upload("UploadsBucket", "lab/2025-01-a.csv", HEADER + lab("LAB-A-1", "PP-0201", "220"))
    status, view = call(rt, "GET", f"/staff/{PP}/accounts/PP-0201/samples")
    assert status == 200, view
    assert (view["sampling_point"], view["category"]) == ("9100 Bain Station Rd", "B")  # BOD 220 > 180

    # A meters file and a lab file for PP-0202 before its accounts file: both wait.
    meters = METERS_HEADER + (
        f"{PP},M-201,PP-0201,water,gal,6,2024-12-01,0,1\n{PP},M-202,PP-0202,water,gal,6,2024-12-01,0,1\n"
    )
    rt.upload("UploadsBucket", "meters/2025-02-03.csv", meters)
    rt.upload(
        "UploadsBucket",
        "lab/2025-01-b.csv",
        HEADER + lab("LAB-B-2", "PP-0202", "150") + lab("LAB-B-9", "PP-0999", "100"),
    )
    assert meters_of(rt) == [f"METER#{PP}#M-201"]
    status, waiting_meters = call(rt, "GET", f"/staff/{PP}/meter-suspense")
    assert status == 200 and [(m["meter_id"], m["outcome"]) for m in waiting_meters["lines"]] == [
        ("M-202", "waiting")
    ]
    status, waiting_lab = call(rt, "GET", f"/staff/{PP}/lab-suspense")
    assert status == 200
    assert sorted((w["account_id"], w["outcome"]) for w in waiting_lab["lines"]) == [
        ("PP-0202", "waiting"),
        ("PP-0999", "waiting"),
    ]

    # The accounts arrive a minute later: the meter and the lab line are taken in.
    rt.clock.advance(by=timedelta(minutes=1))
    rt.upload(
        "UploadsBucket", "accounts/2025-02-03-b.csv", ACCOUNTS_HEADER + account("PP-0202", "8810 39th Ave")
    )
    assert meters_of(rt) == [f"METER#{PP}#M-201", f"METER#{PP}#M-202"]
    assert call(rt, "GET", f"/staff/{PP}/meter-suspense")[1]["lines"] == []
    status, view = call(rt, "GET", f"/staff/{PP}/accounts/PP-0202/samples")
    assert status == 200 and (view["sampling_point"], view["category"]) == ("8810 39th Ave", "A")

    # The account that never arrives stays reported.
    [left] = call(rt, "GET", f"/staff/{PP}/lab-suspense")[1]["lines"]
    assert (left["account_id"], left["sample_id"], left["file_key"]) == (
        "PP-0999",
        "LAB-B-9",
        "lab/2025-01-b.csv",
    )
    assert "not known to sampling yet" in left["reason"]
    assert rt.dead_letters == []
