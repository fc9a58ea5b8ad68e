"""notices' handlers and PP-CWU-BILLING: a Pleasant Prairie customer's sewer and stormwater
bills of a month go as one combined document, once, whatever the order and the redeliveries;
a bill whose partner does not come goes alone at its release day (moto in-process).

Figures (tests/notices/pp_bills.py): sewer 14.10 + 4 kgal x 4.49 = 17.96 -> 32.06; stormwater
2.00 + 1.00 ERU x 6.00 -> 8.00; combined 40.06, billed 2026-10-01, due 2026-10-21.
"""

from __future__ import annotations

import email
import io
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from handler_support import ACCOUNT, MAIL, REGION, Stack, eventbridge_body, lambda_context, sqs_event
from moto.ses.models import ses_backends
from pypdf import PdfReader

from common import clock
from notices.handlers import on_notice_event, run_print_batch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notices"))
from pp_bills import SEWER, STORMWATER, pp_bill  # noqa: E402

BILL_DAY = datetime(2026, 10, 1, 13, 0, tzinfo=UTC)  # 08:00 in Pleasant Prairie


@pytest.fixture
def at() -> Iterator[clock.FixedClock]:
    simulated = clock.FixedClock(BILL_DAY)
    clock.install(simulated)
    yield simulated
    clock.install(None)


@pytest.fixture
def pp(notices: Stack, at: clock.FixedClock) -> Stack:
    boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress="billing@sewerbill.local")
    return notices


def delivered(event: Any) -> None:
    assert on_notice_event.lambda_handler(sqs_event(eventbridge_body(event)), lambda_context()) == {
        "batchItemFailures": []
    }


def emails() -> list[email.message.Message]:
    return [email.message_from_string(m.raw_data) for m in ses_backends[ACCOUNT][REGION].sent_messages]


def attached_text(message: email.message.Message) -> str:
    [pdf] = [p.get_payload(decode=True) for p in message.walk() if p.get_content_type() == "application/pdf"]
    return " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)


def log(stack: Stack) -> list[tuple[str, str, str]]:
    return sorted(
        (i["account_id"], i["channel"], i["status"])
        for i in stack.items("notices")
        if i["pk"].startswith("NOTICE#")
    )


def test_both_bills_go_as_one_combined_email_once_whatever_the_redeliveries(pp: Stack) -> None:
    sewer = pp_bill(SEWER, "S-1", opted_in=True)
    storm = pp_bill(STORMWATER, "W-1", opted_in=True)
    delivered(sewer)
    delivered(sewer)  # a redelivery while it waits: still nothing sent
    assert emails() == [] and log(pp) == []
    delivered(storm)  # the partner: the combined bill goes
    for event in (storm, sewer, storm):  # redeliveries of either: nothing more
        delivered(event)
    [message] = emails()
    assert message["To"] == "ada@example.org"
    assert (
        " ".join(message["Subject"].split())
        == "Your combined sewer and stormwater bill September 2026: $40.06 due 2026-10-21"
    )
    text = attached_text(message)
    for phrase in (
        "Bill PPS-202609-S-1",
        "PP-SEW-VOL",
        "Bill PPW-202609-W-1",
        "PP-CWU-ERU",
        "Total amount due $40.06",
    ):
        assert phrase in text, phrase
    # Each account's notice log shows the one email; each account's copy is the combined PDF.
    assert log(pp) == [("S-1", "email", "sent"), ("W-1", "email", "sent")]
    for key in (
        "bills/pleasant-prairie-sewer/S-1/S-1-2026-09-01.pdf",
        "bills/pleasant-prairie-stormwater/W-1/W-1-2026-09-01.pdf",
    ):
        copy = pp.s3.get_object(Bucket=MAIL, Key=key)["Body"].read()
        assert "Total amount due $40.06" in " ".join(
            p.extract_text() for p in PdfReader(io.BytesIO(copy)).pages
        )
    # Nothing is left for the release run.
    assert [i for i in pp.items("notices") if i["pk"] == "PPHOLD"] == []


def test_a_customer_with_only_one_account_gets_the_ordinary_bill_at_the_release_day(
    pp: Stack, at: clock.FixedClock
) -> None:
    delivered(pp_bill(SEWER, "S-9", name="Grace Hopper", address="9 Navy Way; Pleasant Prairie, WI 53158"))
    assert log(pp) == []  # held for a partner that may still come this morning
    # 05:00 on 2026-10-02 in Pleasant Prairie: the release, then the print batch of 10-01.
    at.set(datetime(2026, 10, 2, 10, 0, tzinfo=UTC))
    body = json.dumps({"scheduled_time": "2026-10-02T10:00:00Z"})
    for _ in range(2):  # a replayed schedule sends nothing twice
        assert run_print_batch.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}
    assert log(pp) == [("S-9", "mail", "sent")]
    manifest = pp.s3.get_object(Bucket=MAIL, Key="batches/2026-10-01/manifest.csv")["Body"].read().decode()
    assert "Grace Hopper" in manifest  # in the bill date's batch, as an unheld letter would be
    batch = pp.s3.get_object(Bucket=MAIL, Key="batches/2026-10-01/batch.pdf")["Body"].read()
    text = PdfReader(io.BytesIO(batch)).pages[0].extract_text()
    assert "Bill PPS-202609-S-9" in text and "combined" not in text


def test_a_partner_after_the_release_goes_alone_and_a_bill_without_a_parcel_is_never_held(
    pp: Stack, at: clock.FixedClock
) -> None:
    delivered(pp_bill(SEWER, "S-1"))
    at.set(datetime(2026, 10, 2, 10, 0, tzinfo=UTC))
    body = json.dumps({"scheduled_time": "2026-10-02T10:00:00Z"})
    assert run_print_batch.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}
    at.set(datetime(2026, 10, 3, 14, 0, tzinfo=UTC))
    delivered(pp_bill(STORMWATER, "W-1"))  # its stormwater cycle ran late: the sewer bill went alone
    delivered(pp_bill(SEWER, "S-5", parcel=None, name="Edsger Dijkstra"))
    assert log(pp) == [("S-1", "mail", "sent"), ("S-5", "mail", "sent"), ("W-1", "mail", "sent")]
    letters = [i for i in pp.items("notices") if i["pk"].startswith("MAILDAY#")]
    assert sorted((i["pk"], i["account_id"]) for i in letters) == [
        ("MAILDAY#2026-10-01", "S-1"),
        ("MAILDAY#2026-10-03", "S-5"),
        ("MAILDAY#2026-10-03", "W-1"),
    ]


def test_an_email_refused_at_the_release_does_not_hold_up_the_print_batch_and_is_retried(
    notices: Stack, at: clock.FixedClock
) -> None:
    # The sender is not a verified SES identity yet: emails are refused.
    delivered(pp_bill(SEWER, "S-9", name="Grace Hopper", opted_in=True, email="grace@example.org"))
    delivered(pp_bill(SEWER, "S-8", name="Alan Turing", address="8 Bletchley Rd; Pleasant Prairie, WI 53158"))
    at.set(datetime(2026, 10, 2, 10, 0, tzinfo=UTC))
    body = json.dumps({"scheduled_time": "2026-10-02T10:00:00Z"})
    assert run_print_batch.lambda_handler(sqs_event(body), lambda_context()) == {
        "batchItemFailures": [{"itemIdentifier": "m0"}]
    }
    # The letter went into the bill date's batch all the same; the email failed, recorded.
    assert log(notices) == [("S-8", "mail", "sent"), ("S-9", "email", "failed")]
    manifest = (
        notices.s3.get_object(Bucket=MAIL, Key="batches/2026-10-01/manifest.csv")["Body"].read().decode()
    )
    assert len(manifest.splitlines()) == 2 and "Alan Turing" in manifest
    boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress="billing@sewerbill.local")
    retry = sqs_event(body)
    retry["Records"][0]["attributes"]["ApproximateReceiveCount"] = "2"
    assert run_print_batch.lambda_handler(retry, lambda_context()) == {"batchItemFailures": []}
    assert log(notices) == [("S-8", "mail", "sent"), ("S-9", "email", "sent")]
    [message] = emails()
    assert message["To"] == "grace@example.org"


def test_two_sewer_bills_of_one_customer_without_a_stormwater_bill_go_each_alone(
    pp: Stack, at: clock.FixedClock
) -> None:
    # One customer billed for two sewer accounts on one parcel (a duplex), no stormwater bill
    # by the release day: two ordinary bills, never a "combined" bill of one utility.
    delivered(pp_bill(SEWER, "S-1", opted_in=True))
    delivered(pp_bill(SEWER, "S-2", opted_in=True))
    at.set(datetime(2026, 10, 2, 10, 0, tzinfo=UTC))
    body = json.dumps({"scheduled_time": "2026-10-02T10:00:00Z"})
    assert run_print_batch.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}
    subjects = sorted(" ".join(m["Subject"].split()) for m in emails())
    assert subjects == [
        "Your bill PPS-202609-S-1: $32.06 due 2026-10-21",
        "Your bill PPS-202609-S-2: $32.06 due 2026-10-21",
    ]


def test_a_claim_lost_to_a_concurrent_handler_leaves_the_sending_to_the_winner(
    pp: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from notices import composition
    from notices.app.planning import trigger
    from notices.domain.combined import Claim

    sewer = pp_bill(SEWER, "S-1", opted_in=True)
    storm = pp_bill(STORMWATER, "W-1", opted_in=True)
    delivered(sewer)
    holds = composition.bill_holds()
    real_claim = holds.claim

    def sewer_handler_wins_meanwhile(group: str, claim: Claim) -> Claim:
        # Both handlers saw both bills; the sewer's (a redelivery) wrote its claim first.
        real_claim(group, Claim(members=claim.members, by=trigger(sewer)))
        return real_claim(group, claim)

    monkeypatch.setattr(holds, "claim", sewer_handler_wins_meanwhile)
    delivered(storm)  # lost the claim: sends nothing
    assert emails() == []
    monkeypatch.setattr(holds, "claim", real_claim)
    delivered(sewer)  # the winner (its message retried) sends the combined bill, once
    delivered(storm)
    [message] = emails()
    assert "Total amount due $40.06" in attached_text(message)


def print_run(at: clock.FixedClock, morning: str) -> None:
    """The print schedule at 05:00 in Pleasant Prairie (10:00 UTC in October)."""
    at.set(datetime.fromisoformat(f"{morning}T10:00:00+00:00"))
    body = json.dumps({"scheduled_time": f"{morning}T10:00:00Z"})
    assert run_print_batch.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}


def test_a_morning_with_no_letter_and_no_hold_due_costs_one_read_and_a_skipped_release_is_caught_up(
    pp: Stack, at: clock.FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handler_support import dynamodb_calls

    print_run(at, "2026-09-29")  # a full run over an empty table
    calls = dynamodb_calls(monkeypatch)
    print_run(at, "2026-09-30")
    assert calls == ["GetItem"]  # the mark only: no query of holds or letters
    at.set(BILL_DAY)
    delivered(pp_bill(SEWER, "S-9", name="Grace Hopper"))  # held until 10-02 (its release day)
    calls.clear()
    print_run(at, "2026-10-01")
    assert calls == ["GetItem"] and log(pp) == []  # the partner may still come
    # The run of 10-02 never came: the run of 10-03 releases the bill, mailed that day.
    print_run(at, "2026-10-03")
    assert log(pp) == [("S-9", "mail", "sent")]
    # In the batch of 10-02 (the day before the run), assembled by the same run.
    manifest = pp.s3.get_object(Bucket=MAIL, Key="batches/2026-10-02/manifest.csv")["Body"].read().decode()
    assert "Grace Hopper" in manifest

    def kept() -> list[dict[str, Any]]:
        return [i for i in pp.items("notices") if i["pk"] != "DAILY"]

    before = kept()
    print_run(at, "2026-10-04")  # a full run (the release's own letter marked its day): nothing
    assert kept() == before
    calls.clear()
    print_run(at, "2026-10-05")
    assert calls == ["GetItem"]
    # A letter mailed on 10-05 is in the batch assembled the next morning.
    at.set(datetime(2026, 10, 5, 14, 0, tzinfo=UTC))
    delivered(pp_bill(SEWER, "S-5", parcel=None, name="Edsger Dijkstra"))  # never held: mailed at once
    print_run(at, "2026-10-06")
    manifest = pp.s3.get_object(Bucket=MAIL, Key="batches/2026-10-05/manifest.csv")["Body"].read().decode()
    assert "Edsger Dijkstra" in manifest


def test_the_letters_of_a_morning_whose_run_never_came_are_assembled_by_the_next_run(
    pp: Stack, at: clock.FixedClock
) -> None:
    print_run(at, "2026-10-05")  # a full run over an empty table
    at.set(datetime(2026, 10, 5, 14, 0, tzinfo=UTC))
    delivered(pp_bill(SEWER, "S-5", parcel=None, name="Edsger Dijkstra"))  # mailed on 10-05
    # The run of 10-06 never came (its retries spent). 10-06 had no letter of its own.
    print_run(at, "2026-10-07")
    manifest = pp.s3.get_object(Bucket=MAIL, Key="batches/2026-10-05/manifest.csv")["Body"].read().decode()
    assert "Edsger Dijkstra" in manifest
    batches = pp.s3.list_objects_v2(Bucket=MAIL, Prefix="batches/")["Contents"]
    assert {b["Key"].split("/")[1] for b in batches} == {"2026-10-05"}  # no empty batch for 10-06
    # The next morning the mark no longer holds 10-06: one read, nothing assembled twice.
    before = pp.s3.list_objects_v2(Bucket=MAIL, Prefix="batches/")["KeyCount"]
    print_run(at, "2026-10-08")
    assert pp.s3.list_objects_v2(Bucket=MAIL, Prefix="batches/")["KeyCount"] == before
