"""Sampling's handlers in-process on moto: staff routes, the daily run, rejections, retention."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import pytest
from handler_support import TABLES, Stack, dynamodb_calls, http_event, lambda_context, sqs_event

from common import clock
from sampling.handlers import api, on_lab_file_uploaded, run_sampling_daily

PP = "pleasant-prairie-sewer"
SEVEN_YEARS_S = 7 * 365.25 * 24 * 3600


@pytest.fixture
def sampling(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    monkeypatch.setenv("TABLE_NAME", TABLES["sampling"])
    fixed = clock.FixedClock(datetime(2026, 1, 5, 15, 0, tzinfo=UTC))
    clock.install(fixed)
    stack.clock = fixed  # type: ignore[attr-defined]
    yield stack
    clock.install(None)


def staff_call(method: str, path: str, body: Any = None, role: str = "staff") -> tuple[int, Any]:
    event = http_event(method, path)
    event["body"] = None if body is None else json.dumps(body)
    event["headers"]["content-type"] = "application/json"
    event["requestContext"]["authorizer"] = {
        "jwt": {"claims": {"sub": "clerk-bo", "role": role, "tenants": f"[{PP}]"}, "scopes": None}
    }
    resp = api.lambda_handler(event, lambda_context())
    return resp["statusCode"], json.loads(resp["body"])


def outbox_events(stack: Stack, detail_type: str) -> list[dict[str, Any]]:
    return [json.loads(i["detail"]) for i in stack.outbox("sampling") if i["detail_type"] == detail_type]


def run_day(stack: Stack, day: str) -> None:
    body = json.dumps({"scheduled_time": f"{day}T12:30:00Z"})
    assert run_sampling_daily.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}


def test_a_customer_token_may_not_use_the_staff_routes(sampling: Stack) -> None:
    status, body = staff_call(
        "PUT", f"/staff/{PP}/sampling-points/PP-0002", {"sampling_point": "MH"}, role="customer"
    )
    assert status == 403 and body["error"]["code"] == "forbidden"


def test_annual_reports_are_received_and_non_filers_reminded_before_february_10(sampling: Stack) -> None:
    for account in ("PP-0002", "PP-0007"):
        assert staff_call("PUT", f"/staff/{PP}/sampling-points/{account}", {"sampling_point": "MH"})[0] == 200
    # Reminders 30 and 7 days before Feb 10 (tariff): 2026-01-11 and 2026-02-03.
    run_day(sampling, "2026-01-10")
    assert outbox_events(sampling, "AnnualReportReminderDue") == []
    run_day(sampling, "2026-01-11")
    assert sorted(e["account_id"] for e in outbox_events(sampling, "AnnualReportReminderDue")) == [
        "PP-0002",
        "PP-0007",
    ]
    status, receipt = staff_call(
        "POST",
        f"/staff/{PP}/annual-reports",
        {"account_id": "PP-0002", "year": 2025, "received_on": "2026-01-20"},
    )
    assert status == 200 and receipt == {
        "year": 2025,
        "due_on": "2026-02-10",
        "late": False,
        "repeated": False,
    }
    run_day(sampling, "2026-02-03")
    run_day(sampling, "2026-02-04")  # the same reminder is not sent twice
    second = [
        e for e in outbox_events(sampling, "AnnualReportReminderDue") if e["reminder_on"] == "2026-02-03"
    ]
    assert [e["account_id"] for e in second] == ["PP-0007"]
    (received,) = outbox_events(sampling, "AnnualReportReceived")
    assert (received["account_id"], received["year"], received["late"]) == ("PP-0002", 2025, False)


def test_a_lab_invoice_is_passed_through_as_its_own_charge(sampling: Stack) -> None:
    staff_call("PUT", f"/staff/{PP}/sampling-points/PP-0002", {"sampling_point": "MH"})
    body = {"account_id": "PP-0002", "reference": "INV-7781", "amount": "312.40", "invoiced_on": "2026-01-05"}
    assert staff_call("POST", f"/staff/{PP}/lab-invoices", body)[0] == 200
    assert staff_call("POST", f"/staff/{PP}/lab-invoices", body)[0] == 200  # again: one charge
    (charge,) = outbox_events(sampling, "SamplingCostCharged")
    assert (charge["kind"], charge["amount"], charge["lab_invoice_reference"], charge["rule_id"]) == (
        "lab_invoice",
        "312.40",
        "INV-7781",
        "PP-SEW-SAMPLE-COST",
    )


def test_a_rejected_message_is_recorded_in_samplings_outbox_and_kept_seven_years(sampling: Stack) -> None:
    response = on_lab_file_uploaded.lambda_handler(sqs_event("not an event"), lambda_context())
    assert response == {"batchItemFailures": []}  # permanent: acknowledged, not retried
    (item,) = [i for i in sampling.outbox("sampling") if i["detail_type"] == "MessageRejected"]
    assert item["source"] == "sewerbill.sampling"
    now = datetime(2026, 1, 5, 15, 0, tzinfo=UTC).timestamp()
    assert int(item["expires_at"]) >= now + SEVEN_YEARS_S


LAB = (
    "tenant,sample_id,account_id,collected_on,parameter,value,units,analysed_on,lab,kind,resample_of,method\n"
    f"{PP},S-1,PP-0002,2025-12-15,bod,220,mg/l,2025-12-17,Acme Labs,routine,,\n"
    f"{PP},S-1,PP-0002,2025-12-15,tss,150,mg/l,2025-12-17,Acme Labs,,,\n"
    f"{PP},S-2,PP-0007,2025-12-15,bod,120,mg/l,2025-12-17,Acme Labs,routine,,\n"
)


def test_a_crash_between_the_events_and_the_classifications_is_repaired_by_the_redelivery(
    sampling: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sampling.adapters.dynamodb import DynamoSamplingRepository

    for account in ("PP-0002", "PP-0007"):
        assert staff_call("PUT", f"/staff/{PP}/sampling-points/{account}", {"sampling_point": "MH"})[0] == 200
    body = json.dumps(sampling.put_upload("lab/2025-12.csv", LAB.encode()))
    real = DynamoSamplingRepository.record_classifications

    def crash(self: DynamoSamplingRepository, classified: Any) -> None:
        raise RuntimeError("the container died after publishing")

    monkeypatch.setattr(DynamoSamplingRepository, "record_classifications", crash)
    failed = on_lab_file_uploaded.lambda_handler(sqs_event(body), lambda_context())
    assert len(failed["batchItemFailures"]) == 1  # transient: redelivered
    assert not [i for i in sampling.state("sampling") if i["sk"] == "CLASSIFICATION"]
    published = sampling.outbox("sampling")

    monkeypatch.setattr(DynamoSamplingRepository, "record_classifications", real)
    assert on_lab_file_uploaded.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}
    categories = {i["pk"]: i["category"] for i in sampling.state("sampling") if i["sk"] == "CLASSIFICATION"}
    assert categories == {f"ACCT#{PP}#PP-0002": "B", f"ACCT#{PP}#PP-0007": "A"}
    # Each event once: the redelivery found the charges and classifications already published.
    again = sampling.outbox("sampling")
    assert {i["pk"] for i in published} <= {i["pk"] for i in again}
    kinds = sorted(i["detail_type"] for i in again)
    assert kinds.count("StrengthCategoryChanged") == 2  # A from nothing, B from nothing
    assert kinds.count("SamplingCostsCharged") == 1  # the file's chunk, with a charge per sample
    (chunk,) = outbox_events(sampling, "SamplingCostsCharged")
    assert sorted(c["charge_id"] for c in chunk["charges"]) == ["sample:S-1", "sample:S-2"]
    assert kinds.count("LabFileTakenIn") == 1
    # And the same file once more changes nothing.
    items = sampling.items("sampling")
    assert on_lab_file_uploaded.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}
    assert sampling.items("sampling") == items


def test_a_dischargers_split_with_a_significant_difference_gets_a_resample_at_its_cost(
    sampling: Stack,
) -> None:
    # PP-SEW-SPLIT: the utility's BOD 900 against the discharger's split at 400: a difference
    # of 500 > 20% of 900 (180): the request is accepted and ORIG-5 resampled.
    assert staff_call("PUT", f"/staff/{PP}/sampling-points/PP-0005", {"sampling_point": "MH"})[0] == 200
    header = LAB.splitlines(keepends=True)[0]
    first = header + (
        f"{PP},ORIG-5,PP-0005,2025-12-15,bod,900,mg/l,2025-12-17,Acme Labs,routine,,\n"
        f"{PP},SPLIT-5,PP-0005,2025-12-15,bod,400,mg/l,2025-12-18,State Lab,split,ORIG-5,\n"
    )
    body = json.dumps(sampling.put_upload("lab/2025-12-15.csv", first.encode()))
    assert on_lab_file_uploaded.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}

    request = {"requested_on": "2026-01-05"}
    status, answer = staff_call("POST", f"/staff/{PP}/samples/SPLIT-5/resample-requests", request)
    assert status == 200, answer
    assert (answer["accepted"], answer["significant"], answer["at_discharger_cost"]) == (True, ["bod"], True)
    assert staff_call("POST", f"/staff/{PP}/samples/SPLIT-5/resample-requests", request)[0] == 200  # again
    (decided,) = outbox_events(sampling, "SplitResampleRequestDecided")
    assert (decided["original_sample_id"], decided["differences_mg_l"], decided["requested_by"]) == (
        "ORIG-5",
        {"bod": "-500"},
        "clerk-bo",
    )

    # The resample is taken in and charged like any sample (PP-SEW-SAMPLE-COST: the
    # discharger's cost); staff then choose it, and BOD 150 returns the account to A.
    second = header + f"{PP},RE-5,PP-0005,2025-12-29,bod,150,mg/l,2025-12-31,Acme Labs,resample,ORIG-5,\n"
    body = json.dumps(sampling.put_upload("lab/2025-12-29.csv", second.encode()))
    assert on_lab_file_uploaded.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}
    charged = [c["charge_id"] for e in outbox_events(sampling, "SamplingCostsCharged") for c in e["charges"]]
    assert sorted(charged) == ["sample:ORIG-5", "sample:RE-5"]  # the split itself is not charged
    status, chosen = staff_call(
        "POST", f"/staff/{PP}/samples/ORIG-5/decision", {"decision": "resample", "reason": "split differed"}
    )
    assert status == 200 and chosen["category"] == "A"


def test_a_day_with_nothing_due_costs_one_read_and_a_deadline_written_since_is_acted_on_its_day(
    sampling: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3

    from sampling.adapters.dynamodb import DynamoSamplingRepository
    from sampling.domain.satellite import ResultsDeadline

    run_day(sampling, "2026-03-01")  # a full run over an empty table: nothing due for 28 days
    calls = dynamodb_calls(monkeypatch)
    run_day(sampling, "2026-03-02")
    assert calls == ["GetItem"]  # the mark only: no query of exits, deadlines or reports

    # A satellite deadline written as the lab intake writes it: remind 03-05, due 03-10.
    repo = DynamoSamplingRepository(boto3.client("dynamodb"), TABLES["sampling"], sampling.clock)  # type: ignore[attr-defined]
    deadline = ResultsDeadline("S-9", date(2026, 3, 1), due_on=date(2026, 3, 10), remind_on=date(2026, 3, 5))
    repo.record_deadline(PP, "PP-0002", deadline)
    calls.clear()
    run_day(sampling, "2026-03-04")
    assert calls == ["GetItem"]  # not due before 03-05
    run_day(sampling, "2026-03-05")
    assert [e["sample_id"] for e in outbox_events(sampling, "SatelliteResultsDueSoon")] == ["S-9"]
    calls.clear()
    for day in ("2026-03-06", "2026-03-10"):  # reminded; the breach cannot come before 03-11
        run_day(sampling, day)
    assert calls == ["GetItem", "GetItem"]
    assert outbox_events(sampling, "SatelliteResultsOverdue") == []
    run_day(sampling, "2026-03-11")
    assert [e["sample_id"] for e in outbox_events(sampling, "SatelliteResultsOverdue")] == ["S-9"]


def test_a_run_that_raced_a_new_deadline_leaves_the_next_run_a_full_one(sampling: Stack) -> None:
    import boto3

    from common.due import DueMark
    from sampling.adapters.dynamodb import DynamoSamplingRepository

    repo = DynamoSamplingRepository(boto3.client("dynamodb"), TABLES["sampling"], sampling.clock)  # type: ignore[attr-defined]
    run_day(sampling, "2026-03-01")
    seen = repo.daily_due()
    assert seen == DueMark(next_on=date(2026, 3, 29), pending=frozenset(), writes=0)  # 03-01 + 28 days
    repo._mark_due([date(2026, 3, 20)])  # a write between a run's read of the mark and its record
    assert repo.set_daily_due(date(2026, 3, 29), seen) is False  # the run's record is refused
    mark = repo.daily_due()
    assert mark is not None and mark.due(date(2026, 3, 20)) and not mark.due(date(2026, 3, 19))
