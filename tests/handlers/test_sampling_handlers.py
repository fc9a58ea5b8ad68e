"""Sampling's handlers in-process on moto: staff routes, the daily run, rejections, retention."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from handler_support import TABLES, Stack, dynamodb_calls, http_event, lambda_context, sqs_event

from common import clock
from sampling.handlers import api, on_lab_file_uploaded, run_sampling_daily

PP = "pleasant-prairie-sewer"
CHICAGO = ZoneInfo("America/Chicago")
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


SATELLITE_LAB = (
    "tenant,sample_id,account_id,collected_on,parameter,value,units,analysed_on,lab,kind,resample_of,method\n"
    # Mon 2025-11-24: a satellite system's routine sample, and an ordinary user's.
    f"{PP},SAT-1124,SAT-7,2025-11-24,bod,150,mg/l,2025-11-26,Acme Labs,routine,,\n"
    f"{PP},S-1124,PP-0002,2025-11-24,bod,150,mg/l,2025-11-26,Acme Labs,routine,,\n"
)


def _take_in_satellite_sample(stack: Stack) -> None:
    stack.clock.set(datetime(2025, 11, 26, 15, 0, tzinfo=UTC))  # type: ignore[attr-defined]
    for account, satellite in (("SAT-7", True), ("PP-0002", False)):
        point = {"sampling_point": "MH", "satellite": satellite}
        assert staff_call("PUT", f"/staff/{PP}/sampling-points/{account}", point)[0] == 200
    body = json.dumps(stack.put_upload("lab/2025-11-24.csv", SATELLITE_LAB.encode()))
    assert on_lab_file_uploaded.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}


def test_pp_sew_sat_sample_the_samples_route_shows_the_results_due_date_and_the_resample_window(
    sampling: Stack,
) -> None:
    _take_in_satellite_sample(sampling)
    # PP-SEW-SAT-SAMPLE, by hand: sampled Mon 2025-11-24 (day 0). Tue 25 (1), Wed 26 (2),
    # [Thu 27 Thanksgiving, Fri 28 the Village's closure day (tariff), Sat 29, Sun 30],
    # Mon Dec 1 (3), 2 (4), 3 (5), 4 (6), 5 (7), [weekend], Mon 8 (8), 9 (9), 10 (10),
    # 11 (11), 12 (12), [weekend], Mon 15 (13), 16 (14), 17 (15), 18 (16), 19 (17),
    # [weekend], Mon 22 (18): due 2025-12-22.
    status, view = staff_call("GET", f"/staff/{PP}/accounts/SAT-7/samples")
    assert status == 200, view
    [sample] = view["samples"]
    assert (sample["results_due_on"], sample["results_due_rule_id"]) == ("2025-12-22", "PP-SEW-SAT-SAMPLE")
    assert (sample["results_delivered_on"], sample["resample_window_ends_on"]) == (None, None)

    # Delivered Fri 2025-12-19: PP-SEW-SAT-RESAMPLE, a resample may be requested within 3
    # days of receipt, so until Mon 2025-12-22.
    sampling.clock.set(datetime(2025, 12, 19, 16, 0, tzinfo=UTC))  # type: ignore[attr-defined]
    status, _ = staff_call("POST", f"/staff/{PP}/samples/SAT-1124/delivery", {"delivered_on": "2025-12-19"})
    assert status == 200
    [sample] = staff_call("GET", f"/staff/{PP}/accounts/SAT-7/samples")[1]["samples"]
    assert (
        sample["results_due_on"],
        sample["results_delivered_on"],
        sample["resample_window_ends_on"],
        sample["resample_window_rule_id"],
    ) == ("2025-12-22", "2025-12-19", "2025-12-22", "PP-SEW-SAT-RESAMPLE")

    # Not a satellite system: neither rule applies, and the route says so (null).
    [ordinary] = staff_call("GET", f"/staff/{PP}/accounts/PP-0002/samples")[1]["samples"]
    assert {k: ordinary[k] for k in ordinary if k.startswith(("results_", "resample_window"))} == {
        "results_due_on": None,
        "results_due_rule_id": None,
        "results_reminded_on": None,
        "results_delivered_on": None,
        "resample_window_ends_on": None,
        "resample_window_rule_id": None,
    }


def test_pp_sew_sat_sample_the_reminder_is_in_the_satellites_notice_log_on_its_day(
    sampling: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3
    from handler_support import MAIL, REGION, authorized_http_event, eventbridge_body

    from billing.events import BillIssued, IssuedLine, Party
    from common.config import reset_cold_starts
    from notices.handlers import api as notices_api
    from notices.handlers import on_notice_event
    from sampling.events import SatelliteResultsDueSoon

    _take_in_satellite_sample(sampling)
    # Due Mon 2025-12-22; the reminder 3 working days before it: Wed 2025-12-17.
    sampling.clock.set(datetime(2025, 12, 16, 12, 30, tzinfo=UTC))  # type: ignore[attr-defined]
    run_day(sampling, "2025-12-16")
    assert outbox_events(sampling, "SatelliteResultsDueSoon") == []
    sampling.clock.set(datetime(2025, 12, 17, 12, 30, tzinfo=UTC))  # type: ignore[attr-defined]
    run_day(sampling, "2025-12-17")
    [reminder] = outbox_events(sampling, "SatelliteResultsDueSoon")
    assert (reminder["account_id"], reminder["due_on"], reminder["reminded_on"]) == (
        "SAT-7",
        "2025-12-22",
        "2025-12-17",
    )

    # Notices, as template.yaml runs it, on the same day: the satellite system's address is
    # known from its bill; the reminder is emailed once and logged under its account.
    monkeypatch.setenv("TABLE_NAME", TABLES["notices"])
    monkeypatch.setenv("MAIL_BUCKET", MAIL)
    monkeypatch.setenv("SENDER_EMAIL", "billing@sewerbill.local")
    sampling.s3.create_bucket(Bucket=MAIL)
    boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress="billing@sewerbill.local")
    reset_cold_starts()
    bill = BillIssued(
        occurred_at=datetime(2025, 12, 1, 12, tzinfo=UTC),
        tenant=PP,
        account_id="SAT-7",
        bill_id="B-SAT-7",
        bill_number="PPS-2025-11-SAT-7",
        period_start=date(2025, 11, 1),
        period_end=date(2025, 12, 1),
        bill_date=date(2025, 12, 1),
        due_date=date(2025, 12, 31),
        lines=(
            IssuedLine(
                rule_id="PP-SEW-SVC",
                description="Monthly service charge",
                quantity="1",
                unit="month",
                rate="30.00",
                amount=Decimal("30.00"),
            ),
        ),
        total=Decimal("30.00"),
        previous_balance=Decimal(0),
        payments_since=Decimal(0),
        amount_due=Decimal("30.00"),
        recipient=Party(
            name="Village of Bristol Sewer District",
            address="19801 83rd St; Bristol, WI 53104",
            email="sewer@bristol.example.org",
            email_opt_in=True,
        ),
    )
    for event in (bill, SatelliteResultsDueSoon.model_validate(reminder)):
        for _ in range(2):  # a redelivery sends nothing more
            handled = on_notice_event.lambda_handler(sqs_event(eventbridge_body(event)), lambda_context())
            assert handled == {"batchItemFailures": []}

    claims = {"sub": "clerk-bo", "role": "staff", "tenants": f"[{PP}]"}
    request = authorized_http_event("GET", f"/staff/{PP}/accounts/SAT-7/notices", claims)
    response = notices_api.lambda_handler(request, lambda_context())
    assert response["statusCode"] == 200, response["body"]
    notices = json.loads(response["body"])["notices"]
    [logged] = [n for n in notices if n["trigger"].startswith("SatelliteResultsDueSoon#")]
    assert (logged["rule_id"], logged["channel"], logged["status"]) == ("PP-SEW-SAT-SAMPLE", "email", "sent")
    assert datetime.fromisoformat(logged["at"]).astimezone(CHICAGO).date() == date(2025, 12, 17)
    assert "SAT-1124" in logged["subject"] and "2025-12-22" in logged["subject"]


def test_pp_sew_private_a_private_sewer_above_the_thresholds_is_listed_as_category_b(sampling: Stack) -> None:
    # PP-SEW-PRIVATE: a private sewer is sampled and classified like any user; BOD 300 is
    # above Category A's 180 (PP-SEW-CAT-A), so it is listed as Category B.
    status, point = staff_call(
        "PUT", f"/staff/{PP}/sampling-points/PRV-3", {"sampling_point": "MH-PRV", "private": True}
    )
    assert status == 200 and point["private"] is True
    result = {
        "sample_id": "PRV-1215",
        "account_id": "PRV-3",
        "collected_on": "2025-12-15",
        "parameter": "bod",
        "value": "300",
        "units": "mg/l",
        "analysed_on": "2025-12-17",
        "lab": "Acme Labs",
    }
    status, taken = staff_call("POST", f"/staff/{PP}/results", result)
    assert status == 200 and taken["category"] == "B", taken

    [changed] = outbox_events(sampling, "StrengthCategoryChanged")
    assert changed["category"] == "B"
    assert changed["basis"]["bod"] == "300"  # surcharged like any Category B user
    listing = changed["private_sewer"]
    assert (listing["rule_id"], listing["category"]) == ("PP-SEW-PRIVATE", "B")
    assert "bod 300 mg/l > 180" in listing["reason"] and "PP-SEW-PRIVATE" in listing["reason"]

    status, view = staff_call("GET", f"/staff/{PP}/accounts/PRV-3/samples")
    assert status == 200
    assert (view["private"], view["category"]) == (True, "B")
    assert view["private_sewer"] == {
        "rule_id": "PP-SEW-PRIVATE",
        "category": "B",
        "listed_as_category_b": True,
    }

    # An ordinary user is no private sewer, and its classification cites no such rule.
    assert staff_call("PUT", f"/staff/{PP}/sampling-points/PP-0002", {"sampling_point": "MH"})[0] == 200
    staff_call("POST", f"/staff/{PP}/results", {**result, "sample_id": "S-1215", "account_id": "PP-0002"})
    ordinary = [e for e in outbox_events(sampling, "StrengthCategoryChanged") if e["account_id"] == "PP-0002"]
    assert [e["private_sewer"] for e in ordinary] == [None]
    view = staff_call("GET", f"/staff/{PP}/accounts/PP-0002/samples")[1]
    assert (view["private"], view["private_sewer"], view["category"]) == (False, None, "B")

    # The list of private sewers: PRV-3 only, listed as Category B.
    status, listed = staff_call("GET", f"/staff/{PP}/private-sewers")
    assert status == 200
    assert listed["private_sewers"] == [
        {
            "account_id": "PRV-3",
            "sampling_point": "MH-PRV",
            "rule_id": "PP-SEW-PRIVATE",
            "category": "B",
            "listed_as_category_b": True,
        }
    ]
