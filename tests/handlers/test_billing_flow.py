"""Billing's handlers on moto (in-process): accounts, cycles that issue bills exactly once,
payments from lockbox files and the API, the daily assessment, producer fixtures."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from handler_support import (
    FIXTURES,
    TABLES,
    Stack,
    eventbridge_body,
    fixture_text,
    lambda_context,
    rejections,
    sqs_event,
)

from billing.handlers import (
    issue_bills,
    on_consumption_determined,
    on_file_uploaded,
    on_producer_event,
    publish_outbox,
    run_billing_cycle,
    run_daily_assessment,
)
from metering.events import ConsumptionDetermined, ConsumptionsDetermined

HEADER = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,parcel_id,owner_name"
ACCOUNTS = (
    HEADER + "\n"
    "grafton-sewer,GR-1,Ann,1 Main St,1 Main St,53024,2026-01-01,residential,5/8,GP-1,Ann\n"
    "grafton-sewer,GR-2,Bob,2 Main St,2 Main St,53024,2026-01-01,residential,5/8,GP-2,Bob\n"
    "grafton-sewer,GR-3,Cy,3 Main St,3 Main St,53024,2026-01-01,residential,5/8,GP-3,Cy\n"
    "grafton-sewer,GR-4,Di,4 Main St,4 Main St,53024,2026-01-01,commercial,5/8,GP-4,Di\n"
    "grafton-sewer,GR-5,Ed,5 Main St,5 Main St,53024,2027-02-01,residential,5/8,GP-5,Ed\n"
)


@pytest.fixture
def flow(billing: Stack, monkeypatch: pytest.MonkeyPatch) -> Stack:
    url = billing.sqs.create_queue(QueueName="sewerbill-local-billing-issue-bills")["QueueUrl"]
    monkeypatch.setenv("ISSUE_BILLS_QUEUE_URL", url)
    billing.issue_queue_url = url  # type: ignore[attr-defined]
    return billing


def upload(stack: Stack, key: str, text: str) -> dict[str, Any]:
    return on_file_uploaded.lambda_handler(
        sqs_event(json.dumps(stack.put_upload(key, text.encode()))), lambda_context()
    )


def consume(
    stack: Stack,
    account: str,
    gallons: int,
    start: date = date(2026, 7, 1),
    end: date = date(2026, 10, 1),
    **reads: Any,
) -> None:
    event = ConsumptionDetermined(
        occurred_at=datetime(2026, 10, 1, tzinfo=UTC),
        tenant="grafton-sewer",
        account_id=account,
        period_start=start,
        period_end=end,
        volume_gal=gallons,
        source_file="reads/q.csv",
        **reads,
    )
    on_consumption_determined.lambda_handler(sqs_event(eventbridge_body(event)), lambda_context())


def run_cycle(stack: Stack, at: str = "2026-10-01T11:00:00Z") -> int:
    """The cycle schedule, then every chunk message it sent (as the queue would deliver)."""
    run_billing_cycle.lambda_handler(
        sqs_event(json.dumps({"tenant": "grafton-sewer", "scheduled_time": at})), lambda_context()
    )
    sent = 0
    while True:
        msgs = stack.sqs.receive_message(QueueUrl=stack.issue_queue_url, MaxNumberOfMessages=10).get(
            "Messages", []
        )  # type: ignore[attr-defined]
        if not msgs:
            return sent
        for m in msgs:
            issue_bills.lambda_handler(sqs_event(m["Body"]), lambda_context())
            stack.sqs.delete_message(QueueUrl=stack.issue_queue_url, ReceiptHandle=m["ReceiptHandle"])  # type: ignore[attr-defined]
            sent += 1


def of(stack: Stack, prefix: str) -> list[dict[str, Any]]:
    """Items under a key prefix; a bill's JSON document is opened for reading."""
    found = [i for i in stack.items("billing") if i["pk"].startswith(prefix)]
    return [{**i, **json.loads(i["bill"])} if "bill" in i else i for i in found]


def ledger(stack: Stack, account: str | None = None, tenant: str = "grafton-sewer") -> list[Any]:
    """The derived ledger: bill entries (from each bill's lines) and entry items."""
    from billing.adapters.repository import BillingRepo

    repo = BillingRepo(stack.ddb, TABLES["billing"])
    return repo.entries_of(tenant, account) if account else repo.all_entries(tenant)


def published(stack: Stack, detail_type: str) -> list[dict[str, Any]]:
    """Run billing's stream publisher over the new stream records; the events of that type."""
    publish_outbox.lambda_handler({"Records": stack.stream_records("billing")}, lambda_context())
    return [e["detail"] for e in stack.captured() if e["detail-type"] == detail_type]


def issued_bills(stack: Stack) -> list[dict[str, Any]]:
    """The bills published (each a BillIssued, packed in BillsIssued chunks), in order."""
    return [bill for chunk in published(stack, "BillsIssued") for bill in chunk["bills"]]


def test_accounts_file_keeps_good_lines_as_history_and_reports_bad_ones(flow: Stack) -> None:
    assert upload(flow, "accounts/2026.csv", ACCOUNTS) == {"batchItemFailures": []}
    current = of(flow, "ACCOUNTS#grafton-sewer")
    # GR-4's class is not residential/nonresidential: that line is rejected, the rest kept.
    assert sorted(i["sk"] for i in current) == ["GR-1", "GR-2", "GR-3", "GR-5"]
    # An owner change is a new version; the same file again changes nothing.
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    upload(
        flow,
        "accounts/owner.csv",
        HEADER + "\ngrafton-sewer,GR-1,Ann,1 Main St,1 Main St,53024,2026-01-01,residential,5/8,GP-1,Zed\n",
    )
    history = of(flow, "ACCOUNT-HISTORY#grafton-sewer#GR-1")
    assert sorted(json.loads(h["record"])["owner_name"] for h in history) == ["Ann", "Zed"]


def test_an_accounts_file_with_an_unknown_column_is_rejected_whole(flow: Stack) -> None:
    upload(
        flow,
        "accounts/bad.csv",
        HEADER + ",colour\ngrafton-sewer,GR-9,A,1,1,1,2026-01-01,residential,5/8,P,A,red\n",
    )
    assert of(flow, "ACCOUNTS#") == []
    [rejected] = rejections(flow)
    assert "colour" in rejected["detail"]["reason"]


def test_a_cycle_issues_one_bill_per_account_and_holds_those_missing_consumption(flow: Stack) -> None:
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    consume(flow, "GR-1", 23000)
    consume(flow, "GR-2", 0)
    assert run_cycle(flow) == 1  # 3 accounts open in the quarter: one chunk message
    bills = {i["account_id"]: i for i in of(flow, "BILLS#grafton-sewer")}
    assert sorted(bills) == ["GR-1", "GR-2"]
    # 45.00 + 23 kgal x 6.50 = 194.50; due the first of the month after the quarter (GR-BILLING).
    assert (bills["GR-1"]["total"], bills["GR-1"]["due_date"], bills["GR-1"]["bill_date"]) == (
        "194.50",
        "2026-10-01",
        "2026-10-01",
    )
    [held] = [h for h in of(flow, "HELD#grafton-sewer") if h["period_start"] == "2026-07-01"]
    assert (held["sk"], held["reason"], held["who"]) == (
        "GR-3#2026-07-01",
        "no consumption for 2026-07-01..2026-10-01 from metering: waiting for a read of the account's meter",
        "metering: a read of the account's meter (reads/ file or estimate)",
    )
    # X-PERIOD: the accounts opened in January; their first and second quarters, with no
    # consumption on file, are held with the reason too (never silently skipped).
    assert sorted(h["sk"] for h in of(flow, "HELD#grafton-sewer") if h["period_start"] != "2026-07-01") == [
        f"GR-{n}#2026-{m}-01" for n in (1, 2, 3) for m in ("01", "04")
    ]
    # GR-5 opens in 2027: its first period is later; never billed for this quarter.
    entries = ledger(flow)
    assert sum(e.amount for e in entries) == Decimal("194.50") + Decimal("45.00")
    # One entry per line and fund (GR-FUNDS: 12% replacement): GR-SVC 45.00 -> 5.40 + 39.60.
    assert {(e.rule_id, e.fund, str(e.amount)) for e in entries if e.account_id == "GR-2"} == {
        ("GR-SVC", "replacement", "5.40"),
        ("GR-SVC", "om", "39.60"),
    }
    # Each bill item is its own outbox: its stream INSERT is published as its BillIssued,
    # packed with the batch's other bills of the tenant in a BillsIssued chunk.
    issued = issued_bills(flow)
    assert sorted((b["account_id"], b["total"], b["recipient"]["name"]) for b in issued) == [
        ("GR-1", "194.50", "Ann"),
        ("GR-2", "45.00", "Bob"),
    ]
    # Each bill carries the consumption behind it with its quality (the bill prints it);
    # billing keeps no register readings from metering's event, so those are absent.
    reads = {b["account_id"]: b["reads"] for b in issued}
    assert reads["GR-1"] == [
        {
            "meter_id": None,
            "previous_read_on": None,
            "previous_reading": None,
            "present_read_on": None,
            "present_reading": None,
            "quality": "actual",
            "estimated": False,
            "consumption_gal": "23000",
        }
    ]
    assert {b["schema_version"] for b in issued} == {2}
    # the premise served, printed on the bill and named in later notices
    assert {b["account_id"]: b["service_address"] for b in issued} == {
        "GR-1": "1 Main St",
        "GR-2": "2 Main St",
    }
    # The cycle run again changes nothing (exactly once per account and period).
    before = flow.items("billing")
    run_cycle(flow)
    kept = ("BILLS#", "LEDGER#", "OUTBOX#")
    assert [i for i in flow.items("billing") if i["pk"].startswith(kept)] == [
        i for i in before if i["pk"].startswith(kept)
    ]
    assert issued_bills(flow) == []


def test_the_bill_carries_the_register_reads_metering_determined_its_volume_from(flow: Stack) -> None:
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    reads_used = [
        {"meter_id": "GR-M-1", "read_on": "2026-07-01", "reading": "481200", "read_type": "actual"},
        {"meter_id": "GR-M-1", "read_on": "2026-10-01", "reading": "504200", "read_type": "actual"},
    ]
    meters = [{"meter_id": "GR-M-1", "kind": "water", "volume_gal": "23000", "quality": "actual"}]
    consume(flow, "GR-1", 23000, reads_used=reads_used, meters=meters)  # 504,200 - 481,200
    consume(flow, "GR-2", 0)
    run_cycle(flow)
    [bill] = [b for b in issued_bills(flow) if b["account_id"] == "GR-1"]
    assert bill["reads"] == [
        {
            "meter_id": "GR-M-1",
            "previous_read_on": "2026-07-01",
            "previous_reading": "481200",
            "present_read_on": "2026-10-01",
            "present_reading": "504200",
            "quality": "actual",
            "estimated": False,
            "consumption_gal": "23000",
        }
    ]


def test_a_held_account_is_billed_by_a_later_run_once_its_data_arrives(flow: Stack) -> None:
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    consume(flow, "GR-1", 0)
    consume(flow, "GR-2", 0)
    run_cycle(flow)
    consume(flow, "GR-3", 10000)  # the late read for Q3
    for account in ("GR-1", "GR-2", "GR-3"):
        consume(flow, account, 0, date(2026, 10, 1), date(2027, 1, 1))
    run_cycle(flow, "2027-01-01T12:00:00Z")
    periods = sorted(
        (i["account_id"], i["period_start"], i["bill_date"]) for i in of(flow, "BILLS#grafton-sewer")
    )
    assert ("GR-3", "2026-07-01", "2027-01-01") in periods  # Q3, billed on the next run
    assert len(periods) == 6
    # left held: only the first two quarters (opened in January, no consumption on file)
    assert {h["period_start"] for h in of(flow, "HELD#")} == {"2026-01-01", "2026-04-01"}


def test_a_crash_mid_cycle_then_a_rerun_gives_one_bill_per_account(
    flow: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    import billing.app.cycles as cycles
    from billing.adapters.repository import BillingRepo

    upload(flow, "accounts/2026.csv", ACCOUNTS)
    for account in ("GR-1", "GR-2", "GR-3"):
        consume(flow, account, 1000)
    monkeypatch.setattr(cycles, "WRITE_STEP", 1)
    real_write = BillingRepo.write_issued
    calls = {"n": 0}

    def crashing(self: BillingRepo, *args: Any, **kwargs: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("injected crash after the first bill")
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(BillingRepo, "write_issued", crashing)
    run_cycle(flow)  # the chunk fails: reported as a batch item failure (SQS would retry)
    assert len(of(flow, "BILLS#")) == 1
    monkeypatch.setattr(BillingRepo, "write_issued", real_write)
    run_cycle(flow)  # the rerun
    bills = of(flow, "BILLS#grafton-sewer")
    assert sorted(b["account_id"] for b in bills) == ["GR-1", "GR-2", "GR-3"]
    charges = [e for e in ledger(flow) if e.kind == "charge"]
    # 3 bills x (GR-SVC + GR-VOL) x 2 funds, each once.
    assert len(charges) == 12 and len({e.entry_id for e in charges}) == 12
    assert len(issued_bills(flow)) == 3


def lockbox(rows: str) -> str:
    return "tenant,account_id,reference,paid_on,amount\n" + rows


def test_a_lockbox_file_posted_twice_posts_once_and_unknown_accounts_wait_until_they_arrive(
    flow: Stack,
) -> None:
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    rows = lockbox(
        "grafton-sewer,GR-1,CHK-1,2026-10-05,100.00\n"
        "grafton-sewer,NOPE-9,CHK-2,2026-10-05,20.00\n"
        "grafton-sewer,GR-1,CHK-3,2026-10-05,abc\n"
    )
    upload(flow, "payments/2026-10-05.csv", rows)
    upload(flow, "payments/2026-10-05-again.csv", rows)
    payments = [e for e in of(flow, "LEDGER#") if e["kind"] == "payment"]
    # NOPE-9 is not known yet: its payment waits in suspense (issue 26), not in the ledger
    assert sorted((e["account_id"], e["amount"]) for e in payments) == [("GR-1", "-100.00")]
    assert [(i["account_id"], i["amount"]) for i in of(flow, "SUSPENSE#grafton-sewer")] == [
        ("NOPE-9", "20.00")
    ]
    # the account arrives: the payment is taken in, once, dated as paid
    upload(
        flow,
        "accounts/nope.csv",
        HEADER + "\ngrafton-sewer,NOPE-9,No,9 Main St,9 Main St,53024,2026-01-01,residential,5/8,GP-9,No\n",
    )
    payments = [e for e in of(flow, "LEDGER#") if e["kind"] == "payment"]
    assert sorted((e["account_id"], e["amount"], e["posted_on"]) for e in payments) == [
        ("GR-1", "-100.00", "2026-10-05"),
        ("NOPE-9", "-20.00", "2026-10-05"),
    ]
    assert of(flow, "SUSPENSE#") == [] and of(flow, "SUSPENDED#") == []
    # A returned check: a negative amount with a new reference reverses it.
    upload(flow, "payments/returned.csv", lockbox("grafton-sewer,GR-1,RET-1,2026-10-09,-100.00\n"))
    gr1 = [Decimal(e["amount"]) for e in of(flow, "LEDGER#grafton-sewer") if e["account_id"] == "GR-1"]
    assert sum(gr1) == 0
    # The same reference with another amount is refused, never posted.
    upload(flow, "payments/conflict.csv", lockbox("grafton-sewer,GR-1,CHK-1,2026-10-05,90.00\n"))
    assert len([e for e in of(flow, "LEDGER#") if e["kind"] == "payment"]) == 3
    assert len([o for o in flow.outbox("billing") if o["detail_type"] == "PaymentApplied"]) == 3


def assess(at: str) -> None:
    run_daily_assessment.lambda_handler(sqs_event(json.dumps({"scheduled_time": at})), lambda_context())


def test_the_daily_assessment_charges_grafton_late_once_and_announces_overdue(flow: Stack) -> None:
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    consume(flow, "GR-1", 23000)
    run_cycle(flow)
    # Part paid on day 19: 194.50 - 150.00 = 44.50 unpaid; 3% = 1.335 -> 1.34 on day 21.
    upload(flow, "payments/p.csv", lockbox("grafton-sewer,GR-1,CHK-1,2026-10-20,150.00\n"))
    assess("2026-10-21T12:00:00Z")  # day 20: nothing yet
    assert [e for e in of(flow, "LEDGER#") if e["kind"] == "late_charge"] == []
    assess("2026-10-22T12:00:00Z")
    assess("2026-10-22T12:00:00Z")  # twice on one day: nothing more
    assess("2026-11-30T12:00:00Z")
    late = [e for e in of(flow, "LEDGER#") if e["kind"] == "late_charge"]
    assert [(e["amount"], e["posted_on"], e["rule_id"], e["fund"]) for e in late] == [
        ("1.34", "2026-10-22", "GR-LATE", "om")
    ]
    overdue = [json.loads(o["detail"]) for o in flow.outbox("billing") if o["detail_type"] == "BillOverdue"]
    assert [(o["amount_unpaid"], o["disconnection_eligible_on"]) for o in overdue] == [
        ("44.50", "2026-11-01")
    ]


PRODUCER_FIXTURES = [
    "StrengthClassified",
    "StrengthCategoryChanged",
    "SamplingCostCharged",
    "SamplingCostsCharged",
    "ERUDetermined",
    "ERUsDetermined",
    "CreditChanged",
    "FeeCharged",
    "RefundGranted",
]


@pytest.mark.parametrize("name", PRODUCER_FIXTURES)
def test_every_producer_fixture_is_kept_by_billings_consumer_once(flow: Stack, name: str) -> None:
    body = fixture_text(f"{name}.json")
    assert on_producer_event.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}
    rejected = rejections(flow)
    detail = json.loads(body)["detail"]
    if name == "FeeCharged" and not detail.get("account_id"):
        assert rejected  # a fee that names no account cannot be billed: rejected, with the reason
        return
    assert rejected == []
    kept = flow.state("billing")
    # Each kept record names its source event (a chunk's charges or determinations: each one's own).
    parts = detail.get("charges") or detail.get("determinations")
    sources = [c["event_id"] for c in parts] if parts else [detail["event_id"]]
    assert kept and all(json.dumps(kept, default=str).count(source) >= 1 for source in sources)
    on_producer_event.lambda_handler(sqs_event(body), lambda_context())
    assert flow.state("billing") == kept or all(
        a["pk"] == b["pk"] for a, b in zip(flow.state("billing"), kept, strict=True)
    )


def test_a_chunk_of_erus_is_kept_beside_a_credit_and_an_earlier_determination(flow: Stack) -> None:
    from billing.composition import projections
    from stormwater.events import CreditChanged, ERUDetermined, ERUsDetermined

    chunk = ERUsDetermined.model_validate_json(
        json.dumps(json.loads(fixture_text("ERUsDetermined.json"))["detail"])
    )
    first = chunk.determinations[0]
    credit = CreditChanged.model_validate_json(
        json.dumps(json.loads(fixture_text("CreditChanged.json"))["detail"])
    )
    credit = credit.model_copy(update={"tenant": first.tenant, "parcel_id": first.parcel_id})
    earlier = ERUDetermined.model_validate_json(first.model_dump_json()).model_copy(
        update={"sequence": first.sequence + 1}
    )
    kept = projections()
    now = datetime(2026, 10, 1, tzinfo=UTC)
    kept.keep_credit(credit, now)  # the parcel item exists with a credits map only
    kept.keep_erus(chunk.determinations, now)  # the determinations map is created beside it
    kept.keep_erus([earlier], now)  # and a later key is added to it, the others kept
    kept.keep_erus(chunk.determinations, now)  # a redelivery rewrites the same values
    [item] = [
        i for i in flow.state("billing") if i["pk"] == f"ERU#{first.tenant}" and i["sk"] == first.parcel_id
    ]
    assert sorted(item["determinations"]) == [f"{first.sequence:06d}", f"{first.sequence + 1:06d}"]
    assert list(item["credits"]) == [f"{credit.credit_id}:{credit.status}"]
    # A map that changed under the writer is caught by the condition: the other form is used.
    assert (
        kept._update_map(f"ERU#{first.tenant}", "NEW-PARCEL", "determinations", "k", {}, now, exists=True)
        is False
    )
    assert (
        kept._update_map(f"ERU#{first.tenant}", "NEW-PARCEL", "determinations", "k", {}, now, exists=False)
        is True
    )


def test_the_metering_fixture_is_kept_by_billings_consumer(flow: Stack) -> None:
    body = fixture_text("ConsumptionDetermined.json")
    on_consumption_determined.lambda_handler(sqs_event(body), lambda_context())
    [usage] = of(flow, "USAGE#")
    assert usage["source_event_id"] == json.loads(body)["detail"]["event_id"]
    assert FIXTURES.exists()


def _consumption(account: str, gallons: int, *, estimated: bool = False) -> ConsumptionDetermined:
    return ConsumptionDetermined(
        occurred_at=datetime(2026, 10, 5, tzinfo=UTC),
        tenant="grafton-sewer",
        account_id=account,
        period_start=date(2026, 7, 1),
        period_end=date(2026, 10, 1),
        volume_gal=gallons,
        quality="estimated" if estimated else "actual",
        estimated=estimated,
        source_file="reads/q.csv",
    )


def _deliver(event: ConsumptionDetermined) -> dict[str, Any]:
    return on_consumption_determined.lambda_handler(sqs_event(eventbridge_body(event)), lambda_context())


def _deliver_chunk(consumptions: list[ConsumptionDetermined]) -> dict[str, Any]:
    chunk = ConsumptionsDetermined(
        occurred_at=max(c.occurred_at for c in consumptions), file_id="f", chunk=0, consumptions=consumptions
    )
    return on_consumption_determined.lambda_handler(sqs_event(eventbridge_body(chunk)), lambda_context())


def test_a_read_corrected_after_billing_is_one_adjustment_on_the_bill_never_an_edit(flow: Stack) -> None:
    from billing.domain.ledger import trial_balance

    upload(flow, "accounts/2026.csv", ACCOUNTS)
    _deliver(_consumption("GR-1", 23000, estimated=True))
    consume(flow, "GR-2", 0)
    run_cycle(flow)
    [bill_before] = [i for i in of(flow, "BILLS#grafton-sewer") if i["account_id"] == "GR-1"]
    assert (bill_before["total"], bill_before["estimated"]) == ("194.50", True)  # 45.00 + 23 x 6.50

    actual = _consumption("GR-1", 20000)
    assert _deliver(actual) == {"batchItemFailures": []}
    [adjustment] = of(flow, "ADJUSTMENT#grafton-sewer")
    assert adjustment["sk"] == "RERATE-GR-1-2026-07-01-001"
    assert (adjustment["from_volume_gal"], adjustment["to_volume_gal"]) == ("23000", "20000")
    assert adjustment["source_event_id"] == actual.event_id
    entries = [e for e in ledger(flow, "GR-1") if e.kind == "adjustment"]
    # GR-VOL: 3 kgal x 6.50 = 19.50 credit; GR-FUNDS 12% per line: -2.34 replacement, -17.16 O&M.
    assert sorted((e.fund, e.amount) for e in entries) == [
        ("om", Decimal("-17.16")),
        ("replacement", Decimal("-2.34")),
    ]
    assert {(e.bill_id, e.rule_id) for e in entries} == {("GR-1-2026-07-01", "X-IMMUTABLE")}
    assert "from 23000 gal to 20000 gal" in entries[0].description
    assert actual.event_id not in entries[0].description  # linked by source_event_id, not in the text
    # The bill is never edited; the consumption kept is the new one; the ledger balances.
    [bill_after] = [i for i in of(flow, "BILLS#grafton-sewer") if i["account_id"] == "GR-1"]
    assert bill_after == bill_before
    [usage] = [i for i in of(flow, "USAGE#grafton-sewer") if i["sk"] == "GR-1"]
    assert (usage["volume_gal"], usage["estimated"]) == ("20000", False)
    assert sum(e.amount for e in ledger(flow, "GR-1")) == Decimal("175.00")  # 194.50 - 19.50
    assert sum(trial_balance(ledger(flow)).values()) == 0

    # The same re-determination again (a redelivery, or metering publishing it twice) books nothing.
    before = flow.items("billing")
    _deliver(actual)
    _deliver(_consumption("GR-1", 20000))
    assert flow.items("billing") == before

    # A third volume books only the further difference: 1 kgal x 6.50 = +6.50 (0.78 + 5.72).
    _deliver(_consumption("GR-1", 21000))
    assert [i["sk"] for i in of(flow, "ADJUSTMENT#grafton-sewer")] == [
        "RERATE-GR-1-2026-07-01-001",
        "RERATE-GR-1-2026-07-01-002",
    ]
    assert sorted((e.fund, e.amount) for e in ledger(flow, "GR-1") if e.reference.endswith("-002")) == [
        ("om", Decimal("5.72")),
        ("replacement", Decimal("0.78")),
    ]
    assert sum(e.amount for e in ledger(flow, "GR-1")) == Decimal("181.50")  # 45.00 + 21 x 6.50
    # Back to the estimate the bill was issued on: the chain stands on 21,000 gal, so
    # +2 kgal x 6.50 = +13.00, and bill plus adjustments is the bill again, 194.50.
    _deliver(_consumption("GR-1", 23000))
    assert sum(e.amount for e in ledger(flow, "GR-1")) == Decimal("194.50")
    assert sum(trial_balance(ledger(flow)).values()) == 0


def test_a_stale_determination_arriving_after_a_later_one_changes_nothing(flow: Stack) -> None:
    # SQS and EventBridge keep no order: the estimate (10-05) redelivered after the actual
    # read's determination (10-09) was kept must not re-rate the bill back to the estimate.
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    estimate = _consumption("GR-1", 23000, estimated=True)
    _deliver(estimate)
    consume(flow, "GR-2", 0)
    run_cycle(flow)
    actual = _consumption("GR-1", 20000).model_copy(update={"occurred_at": datetime(2026, 10, 9, tzinfo=UTC)})
    _deliver(actual)
    [adjustment] = of(flow, "ADJUSTMENT#grafton-sewer")  # 23,000 -> 20,000 gal: one re-rating
    before = flow.items("billing")
    _deliver(estimate)  # late, stale
    assert flow.items("billing") == before
    [usage] = [i for i in of(flow, "USAGE#grafton-sewer") if i["sk"] == "GR-1"]
    assert (usage["volume_gal"], usage["source_event_id"]) == ("20000", actual.event_id)
    # Within one chunk the later determination wins too, whatever the order in the chunk.
    _deliver_chunk(
        [
            _consumption("GR-3", 7000).model_copy(update={"occurred_at": datetime(2026, 10, 12, tzinfo=UTC)}),
            _consumption("GR-3", 5000),
        ]
    )
    [usage] = [i for i in of(flow, "USAGE#grafton-sewer") if i["sk"] == "GR-3"]
    assert usage["volume_gal"] == "7000"


def test_two_redeterminations_racing_each_other_leave_the_later_one_kept_and_billed(
    flow: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The consumer runs up to five at once: the 10-09 determination (20,000 gal) has read the
    # kept estimate (10-05, 23,000 gal) when the 10-12 one (21,000 gal) is handled whole by
    # another delivery. The 10-09 one must neither re-rate the bill to 20,000 nor be kept.
    import billing.app.rerating

    upload(flow, "accounts/2026.csv", ACCOUNTS)
    _deliver(_consumption("GR-1", 23000, estimated=True))
    consume(flow, "GR-2", 0)
    run_cycle(flow)
    earlier = _consumption("GR-1", 20000).model_copy(
        update={"occurred_at": datetime(2026, 10, 9, tzinfo=UTC)}
    )
    later = _consumption("GR-1", 21000).model_copy(update={"occurred_at": datetime(2026, 10, 12, tzinfo=UTC)})
    original = billing.app.rerating.rerate_billed
    raced: list[Any] = []

    def racing(*args: Any, **kwargs: Any) -> Any:
        if not raced:  # the first delivery has read the kept estimate: the other one runs now
            raced.append("racing")
            raced[0] = _deliver(later)
        return original(*args, **kwargs)

    monkeypatch.setattr(billing.app.rerating, "rerate_billed", racing)
    first = _deliver(earlier)
    assert raced == [{"batchItemFailures": []}]
    assert first["batchItemFailures"] != []  # the kept item changed under it: retried
    assert _deliver(earlier) == {"batchItemFailures": []}  # the retry: older than what is kept
    [adjustment] = [a for a in of(flow, "ADJUSTMENT#grafton-sewer") if "to_volume_gal" in a]
    assert (adjustment["from_volume_gal"], adjustment["to_volume_gal"]) == ("23000", "21000")
    [usage] = [i for i in of(flow, "USAGE#grafton-sewer") if i["sk"] == "GR-1"]
    assert (usage["volume_gal"], usage["source_event_id"]) == ("21000", later.event_id)
    # 45.00 + 21 x 6.50 = 181.50 billed in all: the bill's 194.50 and the one -13.00 memo
    assert sum(e.amount for e in ledger(flow, "GR-1")) == Decimal("181.50")


@pytest.mark.parametrize("first_read", ["earlier", "later"])
def test_two_first_determinations_of_a_period_at_once_leave_the_later_one_kept(
    flow: Stack, monkeypatch: pytest.MonkeyPatch, first_read: str
) -> None:
    # Nothing kept for GR-1's period yet: one delivery has read that (nothing kept) when the
    # other is handled whole by another delivery (the consumer runs up to five at once).
    # Whichever order they write in, the later determination is what stays kept.
    from billing.adapters.projections import Projections

    upload(flow, "accounts/2026.csv", ACCOUNTS)
    earlier = _consumption("GR-1", 20000).model_copy(
        update={"occurred_at": datetime(2026, 10, 9, tzinfo=UTC)}
    )
    later = _consumption("GR-1", 21000).model_copy(update={"occurred_at": datetime(2026, 10, 12, tzinfo=UTC)})
    reading, racing = (earlier, later) if first_read == "earlier" else (later, earlier)
    original = Projections.put_all_new
    raced: list[Any] = []

    def racing_put(self: Projections, items: Any) -> Any:
        if items and not raced:  # the first delivery has read nothing kept: the other one runs now
            raced.append("racing")
            raced[0] = _deliver(racing)
        return original(self, items)

    monkeypatch.setattr(Projections, "put_all_new", racing_put)
    assert _deliver(reading) == {"batchItemFailures": []}
    assert raced == [{"batchItemFailures": []}]
    [usage] = [i for i in of(flow, "USAGE#grafton-sewer") if i["sk"] == "GR-1"]
    assert (usage["volume_gal"], usage["source_event_id"]) == ("21000", later.event_id)
    assert of(flow, "ADJUSTMENT#") == []  # nothing was billed: nothing to re-rate


def test_a_read_that_changes_nothing_billed_books_nothing(flow: Stack) -> None:
    upload(flow, "accounts/2026.csv", ACCOUNTS)
    _deliver(_consumption("GR-1", 23000, estimated=True))
    consume(flow, "GR-2", 0)
    run_cycle(flow)
    # The actual read equals the estimate: only the estimated flag changes; zero difference.
    _deliver(_consumption("GR-1", 23000))
    # GR-3 was held (no consumption): its first read is kept and billed by a later run.
    _deliver(_consumption("GR-3", 5000))
    _deliver(_consumption("GR-3", 6000))
    assert of(flow, "ADJUSTMENT#") == []
    usage = {i["sk"]: i for i in of(flow, "USAGE#grafton-sewer")}
    assert (usage["GR-1"]["estimated"], usage["GR-3"]["volume_gal"]) == (False, "6000")


def test_a_billed_period_that_cannot_be_rated_again_is_kept_for_staff_and_the_read_still_kept(
    flow: Stack,
) -> None:
    from common.dynamo import to_item

    upload(flow, "accounts/2026.csv", ACCOUNTS)
    _deliver(_consumption("GR-1", 23000, estimated=True))
    run_cycle(flow)
    # The bill as if issued on a tariff version the quarter no longer rates on.
    [item] = [
        i for i in flow.items("billing") if i["pk"] == "BILLS#grafton-sewer" and i["sk"].startswith("GR-1#")
    ]
    document = json.loads(item["bill"])
    document["tariff_versions"] = ["grafton-sewer@1999-01-01"]
    flow.ddb.put_item(TableName=TABLES["billing"], Item=to_item({**item, "bill": json.dumps(document)}))

    assert _deliver(_consumption("GR-1", 20000)) == {"batchItemFailures": []}
    assert of(flow, "ADJUSTMENT#") == []
    [refused] = of(flow, "RERATE-REFUSED#grafton-sewer")
    assert (refused["bill_id"], refused["from_volume_gal"], refused["to_volume_gal"]) == (
        "GR-1-2026-07-01",
        "23000",
        "20000",
    )
    assert "rated on tariff grafton-sewer@1999-01-01" in refused["reason"]
    [usage] = [i for i in of(flow, "USAGE#grafton-sewer") if i["sk"] == "GR-1"]
    assert usage["volume_gal"] == "20000"


def test_keeping_a_chunk_of_new_consumptions_stays_one_batch_get_and_one_conditional_write(
    flow: Stack,
) -> None:
    from billing.adapters.projections import Projections

    kept = Projections(flow.ddb, TABLES["billing"])
    seen: list[Any] = []
    events = [_consumption(f"GR-{n:03d}", 1000 + n) for n in range(30)]
    assert kept.keep_consumptions(events, datetime(2026, 10, 5, tzinfo=UTC), redetermined=seen.append) == 30
    # 30 new items: one BatchGetItem, one TransactWriteItems (each on condition that nothing
    # is kept for its period yet); nothing re-determined.
    assert kept.requests == {"BatchGetItem": 1, "TransactWriteItems": 1}
    assert seen == []
    # Two of them re-determined: handed over together, once, with the item kept before.
    again = [_consumption("GR-000", 5000), _consumption("GR-001", 1001), _consumption("GR-002", 7000)]
    assert kept.keep_consumptions(again, datetime(2026, 10, 6, tzinfo=UTC), redetermined=seen.append) == 2
    [handed] = seen
    assert [(r.tenant, r.old["volume_gal"], r.new["volume_gal"]) for r in handed] == [
        ("grafton-sewer", "1000", "5000"),
        ("grafton-sewer", "1002", "7000"),
    ]
    # the item as it was kept, whole (the re-rating prints its reads)
    assert all(
        r.old["recorded_at"] == "2026-10-05T00:00:00+00:00" and "source_event_id" in r.old for r in handed
    )
    # each replacement is one PutItem on condition that the item read is still kept
    assert kept.requests == {"BatchGetItem": 2, "TransactWriteItems": 1, "PutItem": 2}


def test_new_consumptions_are_kept_without_building_the_re_rating_and_a_correction_builds_it(
    flow: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from billing import composition

    built: list[str] = []
    real_engine = composition.engine

    def engine() -> Any:
        built.append("engine")
        return real_engine()

    monkeypatch.setattr(composition, "engine", engine)
    # A read file's consumptions are new: kept, and the tariff book's rating engine is not built.
    assert _deliver(_consumption("GR-1", 23000)) == {"batchItemFailures": []}
    assert [u["volume_gal"] for u in of(flow, "USAGE#grafton-sewer")] == ["23000"]
    assert built == []
    # A re-determination of the same period hands the old and new items to the re-rating,
    # which builds it then (nothing billed yet: no adjustment), and the new volume is kept.
    assert _deliver(_consumption("GR-1", 20000)) == {"batchItemFailures": []}
    assert built == ["engine"]
    assert [u["volume_gal"] for u in of(flow, "USAGE#grafton-sewer")] == ["20000"]
    assert of(flow, "ADJUSTMENT#") == []


def test_a_chunk_of_stormwater_determinations_is_kept_parcel_by_parcel_once(flow: Stack) -> None:
    body = fixture_text("ERUsDetermined.json")
    determinations = json.loads(body)["detail"]["determinations"]
    assert on_producer_event.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}
    assert rejections(flow) == []
    kept = {i["sk"]: i for i in of(flow, "ERU#")}
    assert sorted(kept) == sorted(d["parcel_id"] for d in determinations)
    for d in determinations:  # each kept under its own sequence, with its own source event
        (value,) = kept[d["parcel_id"]]["determinations"].values()
        assert (value["eru"], value["source_event_id"]) == (d["eru"], d["event_id"])
    on_producer_event.lambda_handler(sqs_event(body), lambda_context())
    assert {i["sk"]: i["determinations"] for i in of(flow, "ERU#")} == {
        k: v["determinations"] for k, v in kept.items()
    }
