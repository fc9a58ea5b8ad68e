"""Issue 26 on the local runtime (moto server, the real template): a lockbox file uploaded a
minute before the accounts file it pays. The payment waits in suspense, listed by the staff
suspense report, and is posted once, dated as paid, when its account arrives; the same
lockbox file sent again posts nothing more."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from billing_support import staff_get

from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
START = datetime(2026, 11, 2, 15, tzinfo=UTC)
ACCOUNTS = (
    "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size\n"
    "grafton-sewer,GR-1,Ann,1 Main St,1 Main St,53024,2026-07-01,residential,5/8\n"
)
LOCKBOX = "tenant,account_id,reference,paid_on,amount\ngrafton-sewer,GR-1,CHK-1,2026-10-30,42.00\n"


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=START,
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": "billing-suspense"},
        stack_name="billing-suspense",
    ) as runtime:
        yield runtime


def payments(rt: LocalRuntime) -> list[tuple[str, str]]:
    entries = staff_get(rt, "/staff/grafton-sewer/accounts/GR-1/ledger", "grafton-sewer")["entries"]
    return [(e["amount"], e["posted_on"]) for e in entries if e["kind"] == "payment"]


def test_a_payment_sent_a_minute_before_its_account_is_posted_once_when_the_account_arrives(
    rt: LocalRuntime,
) -> None:
    rt.upload("UploadsBucket", "payments/2026-11-02.csv", LOCKBOX)
    waiting = staff_get(rt, "/staff/grafton-sewer/reports/suspense", "grafton-sewer")["rows"]
    assert [(r["account_id"], r["reference"], r["amount"], r["paid_on"]) for r in waiting] == [
        ("GR-1", "CHK-1", "42.00", "2026-10-30")
    ]
    assert "not known at grafton-sewer yet" in waiting[0]["reason"]
    rt.clock.advance(to=START + timedelta(minutes=1))
    rt.upload("UploadsBucket", "accounts/2026-11-02.csv", ACCOUNTS)
    assert payments(rt) == [("-42.00", "2026-10-30")]
    assert staff_get(rt, "/staff/grafton-sewer/reports/suspense", "grafton-sewer")["rows"] == []
    rt.upload("UploadsBucket", "payments/2026-11-02-again.csv", LOCKBOX)
    assert payments(rt) == [("-42.00", "2026-10-30")]
    failed = [i for i in rt.invocations if i.failures or i.error]
    assert failed == [] and rt.dead_letters == []
