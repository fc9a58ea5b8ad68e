"""metering.handlers.on_read_file_uploaded: a read file becomes consumptions, once."""

from __future__ import annotations

import json
from typing import Any

from handler_support import Stack, object_created, rejections, sqs_event

from metering.handlers import on_read_file_uploaded

HEADER = "tenant,account_id,period_start,period_end,volume_gal\n"
GOOD = (
    HEADER
    + "grafton-sewer,GR-1,2026-07-01,2026-10-01,23000\n"
    + "grafton-sewer,GR-2,2026-07-01,2026-10-01,18000\n"
    + "sullivan-sewer,SU-9,2026-07-01,2026-10-01,4100\n"
)


def handle(*bodies: dict[str, Any]) -> Any:
    return on_read_file_uploaded.lambda_handler(sqs_event(*(json.dumps(b) for b in bodies)), None)


def consumptions(stack: Stack) -> dict[tuple[str, str], int]:
    return {
        (i["account_id"], i["period_start"]): int(i["volume_gal"])
        for i in stack.state("metering")
        if "volume_gal" in i
    }


def outbox_events(stack: Stack, detail_type: str) -> list[dict[str, Any]]:
    return [json.loads(i["detail"]) for i in stack.outbox("metering") if i["detail_type"] == detail_type]


def test_each_consumption_is_stored_with_its_consumption_determined_event(metering: Stack) -> None:
    assert handle(metering.put_upload("reads/q3.csv", GOOD.encode())) == {"batchItemFailures": []}

    assert consumptions(metering) == {
        ("GR-1", "2026-07-01"): 23000,
        ("GR-2", "2026-07-01"): 18000,
        ("SU-9", "2026-07-01"): 4100,
    }
    events = outbox_events(metering, "ConsumptionDetermined")
    assert sorted((e["tenant"], e["account_id"], e["volume_gal"]) for e in events) == [
        ("grafton-sewer", "GR-1", 23000),
        ("grafton-sewer", "GR-2", 18000),
        ("sullivan-sewer", "SU-9", 4100),
    ]
    assert all(e["source_file"] == "reads/q3.csv" and e["period_end"] == "2026-10-01" for e in events)
    assert outbox_events(metering, "ReadsRejected") == []


def test_the_outbox_entry_is_written_in_the_same_transaction_as_the_consumption(
    metering: Stack, monkeypatch: Any
) -> None:
    import boto3

    calls: list[list[dict[str, Any]]] = []
    real_client = boto3.client

    def spying_client(name: str, *args: Any, **kwargs: Any) -> Any:
        client = real_client(name, *args, **kwargs)
        if name == "dynamodb":
            original = client.transact_write_items

            def transact_write_items(**params: Any) -> Any:
                calls.append(params["TransactItems"])
                return original(**params)

            client.transact_write_items = transact_write_items
        return client

    monkeypatch.setattr(boto3, "client", spying_client)
    handle(metering.put_upload("reads/q3.csv", GOOD.encode()))

    consumption_writes = [
        c for c in calls if any(a["Put"]["Item"]["pk"]["S"].startswith("CONSUMPTION#") for a in c)
    ]
    assert consumption_writes, "consumptions are written with TransactWriteItems"
    for actions in consumption_writes:
        keys = [a["Put"]["Item"]["pk"]["S"] for a in actions]
        states = [k for k in keys if k.startswith("CONSUMPTION#")]
        outbox = [a for a in actions if a["Put"]["Item"]["pk"]["S"].startswith("OUTBOX#")]
        assert len(states) == len(outbox)
        assert all(a["Put"]["ConditionExpression"] == "attribute_not_exists(pk)" for a in actions)


def test_the_same_file_twice_changes_nothing(metering: Stack) -> None:
    upload = metering.put_upload("reads/q3.csv", GOOD.encode())
    handle(upload)
    before = metering.items("metering")

    assert handle(upload) == {"batchItemFailures": []}
    assert metering.items("metering") == before


def test_the_same_content_under_another_key_changes_nothing(metering: Stack) -> None:
    handle(metering.put_upload("reads/q3.csv", GOOD.encode()))
    before = metering.items("metering")

    handle(metering.put_upload("reads/q3-again.csv", GOOD.encode()))
    assert metering.items("metering") == before


def test_a_bad_line_is_rejected_naming_its_line_and_column_and_good_lines_are_kept(metering: Stack) -> None:
    text = (
        GOOD
        + "grafton-sewer,GR-3,2026-07-01,2026-10-01,-40\n"
        + "grafton-sewer,GR-4,2026-13-01,2026-10-01,100\n"
    )
    handle(metering.put_upload("reads/q3.csv", text.encode()))

    assert len(consumptions(metering)) == 3
    [rejected] = outbox_events(metering, "ReadsRejected")
    assert rejected["file_key"] == "reads/q3.csv"
    assert [(r["line"], r["column"]) for r in rejected["rejections"]] == [
        (5, "volume_gal"),
        (6, "period_start"),
    ]


def test_a_corrected_file_adds_only_what_is_new_and_counts_nothing_twice(metering: Stack) -> None:
    handle(
        metering.put_upload(
            "reads/q3.csv", (GOOD + "grafton-sewer,GR-3,2026-07-01,2026-10-01,oops\n").encode()
        )
    )
    handle(
        metering.put_upload(
            "reads/q3.csv", (GOOD + "grafton-sewer,GR-3,2026-07-01,2026-10-01,900\n").encode()
        )
    )

    assert consumptions(metering)[("GR-3", "2026-07-01")] == 900
    assert len(consumptions(metering)) == 4
    assert len(outbox_events(metering, "ConsumptionDetermined")) == 4


def test_a_different_volume_for_a_recorded_period_is_rejected_not_overwritten(metering: Stack) -> None:
    handle(metering.put_upload("reads/q3.csv", GOOD.encode()))
    changed = GOOD.replace("23000", "99999")
    handle(metering.put_upload("reads/q3-v2.csv", changed.encode()))

    assert consumptions(metering)[("GR-1", "2026-07-01")] == 23000
    [rejected] = outbox_events(metering, "ReadsRejected")
    assert [(r["line"], r["column"]) for r in rejected["rejections"]] == [(2, "volume_gal")]
    assert "23000 gal already recorded" in rejected["rejections"][0]["reason"]


def test_a_wrong_header_rejects_the_file_as_line_1(metering: Stack) -> None:
    handle(metering.put_upload("reads/bad.csv", b"account,gallons\nGR-1,100\n"))
    [rejected] = outbox_events(metering, "ReadsRejected")
    assert rejected["rejections"][0]["line"] == 1 and rejected["rejections"][0]["column"] == "(header)"
    assert consumptions(metering) == {}


def test_an_object_deleted_before_it_was_read_is_rejected_not_retried(metering: Stack) -> None:
    assert handle(object_created("reads/gone.csv", "abc", 10)) == {"batchItemFailures": []}
    [rejected] = outbox_events(metering, "ReadsRejected")
    assert rejected["rejections"][0]["column"] == "(file)"


def test_a_message_that_is_not_an_upload_is_rejected_and_the_rest_of_the_batch_kept(
    metering: Stack,
) -> None:
    good = metering.put_upload("reads/q3.csv", GOOD.encode())
    event = sqs_event(json.dumps(good), "this is not an EventBridge event")

    result = on_read_file_uploaded.lambda_handler(event, None)

    assert result == {"batchItemFailures": []}
    assert len(consumptions(metering)) == 3
    [rejected] = rejections(metering)
    assert rejected["detail"]["message_id"] == "m1"


def test_an_upload_from_another_bucket_is_refused(metering: Stack) -> None:
    result = handle(object_created("reads/q3.csv", "abc", 10, bucket="someone-elses-bucket"))
    assert result == {"batchItemFailures": []}
    assert metering.state("metering") == []
    [rejected] = rejections(metering)
    assert "someone-elses-bucket" in rejected["detail"]["reason"]


def test_moto_s3_eventbridge_notifications_parse(metering: Stack) -> None:
    """moto spells the etag 'eTag' and sends time as a unix timestamp; both are accepted."""
    upload = metering.put_upload("reads/q3.csv", GOOD.encode())
    upload["time"] = 1790856000.0
    upload["detail"]["object"]["eTag"] = upload["detail"]["object"].pop("etag")
    assert handle(upload) == {"batchItemFailures": []}
    assert len(consumptions(metering)) == 3
