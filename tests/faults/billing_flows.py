"""The billing and notices flows of the fault harness (`fault_harness`): Grafton's accounts,
a quarter's consumptions, the cycle, the print batch, a lockbox file and the day of the late
charges, 30 accounts, every other one billed by email. Shared by test_billing_faults and
test_notices_faults (each a module of its own, so CI runs them side by side)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

from fault_harness import Flow

from metering.events import ConsumptionDetermined, ConsumptionsDetermined
from sewerbill.local import LocalRuntime

GR = "grafton-sewer"
ACCOUNTS = 30
START = datetime(2027, 12, 31, 12, tzinfo=UTC)  # a Friday; Grafton's cycle fires 2028-01-01
CYCLE = datetime(2028, 1, 1, 13, tzinfo=UTC)
HEADER = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,email,email_opt_in\n"


def accounts_file() -> str:
    """Grafton accounts; every other one takes its bills by email, the rest by mail."""
    return HEADER + "".join(
        f"{GR},FG-{n:03d},Owner {n},{n} Main St,{n} Main St,53024,2027-07-01,residential,5/8,"
        + (f"owner{n}@example.com,true\n" if n % 2 else ",\n")
        for n in range(ACCOUNTS)
    )


def lockbox_file() -> str:
    return "tenant,account_id,reference,paid_on,amount\n" + "".join(
        f"{GR},FG-{n:03d},LBX-{n:03d},2028-01-20,{20 + n}.00\n" for n in range(0, ACCOUNTS, 2)
    )


def _accounts(rt: LocalRuntime) -> None:
    rt.upload("UploadsBucket", "accounts/faults.csv", accounts_file(), drain=False)


def _usage(rt: LocalRuntime) -> None:
    """The quarter's consumptions, as metering's outbox publishes them (chunks of 50)."""
    _accounts(rt)
    rt.drain()
    consumptions = [
        ConsumptionDetermined(
            event_id=f"00000000-0000-4000-8000-{n:012d}",
            occurred_at=START,
            tenant=GR,
            account_id=f"FG-{n:03d}",
            period_start=date(2027, 10, 1),
            period_end=date(2028, 1, 1),
            volume_gal=1000 * n + 500,
            source_file="reads/faults-q4.csv",
        )
        for n in range(ACCOUNTS)
    ]
    chunk = ConsumptionsDetermined(
        event_id="00000000-0000-4000-8000-100000000000",
        occurred_at=START,
        file_id="faults-q4",
        chunk=0,
        consumptions=tuple(consumptions),
    )
    rt.put_event(chunk.SOURCE, chunk.detail_type(), json.loads(chunk.detail_json()), bus="EventBus")


def _cycle(rt: LocalRuntime) -> None:
    rt.clock.advance(to=CYCLE)


def _billed(rt: LocalRuntime) -> None:
    _usage(rt)
    rt.drain()
    _cycle(rt)


def _lockbox(rt: LocalRuntime) -> None:
    rt.clock.advance(to=datetime(2028, 1, 20, 18, tzinfo=UTC))
    rt.upload("UploadsBucket", "payments/faults.csv", lockbox_file(), drain=False)


def _paid(rt: LocalRuntime) -> None:
    _billed(rt)
    rt.drain()
    _lockbox(rt)
    rt.drain()
    rt.clock.advance(to=datetime(2028, 1, 21, 14, tzinfo=UTC))  # day 20: no late charge yet


def _day_21(rt: LocalRuntime) -> None:
    rt.clock.advance(to=datetime(2028, 1, 22, 14, tzinfo=UTC))  # day 21: GR-LATE


def _print_day(rt: LocalRuntime) -> None:
    rt.clock.advance(to=datetime(2028, 1, 2, 14, tzinfo=UTC))  # 05:00 Chicago: the print batch


_ALL = (
    Flow("accounts file", "BillingOnFileUploadedFunction", START, lambda rt: None, _accounts),
    Flow("billing cycle (run)", "BillingRunBillingCycleFunction", START, _usage, _cycle),
    Flow("billing cycle (bills)", "BillingIssueBillsFunction", START, _usage, _cycle),
    Flow("notice delivery", "NoticesOnNoticeEventFunction", START, _usage, _cycle),
    Flow("print batch", "NoticesRunPrintBatchFunction", START, _billed, _print_day),
    Flow("lockbox file", "BillingOnFileUploadedFunction", START, _billed, _lockbox),
    Flow("daily assessment", "BillingRunDailyAssessmentFunction", START, _paid, _day_21),
)
FLOWS = {flow.name: flow for flow in _ALL}
