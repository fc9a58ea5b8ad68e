"""The embedded emulator keeps what AWS keeps: stream records for 24 hours of the runtime's
clock, and of sent mail only the newest messages whole (sewerbill.local.retention), so a
simulated year does not grow the stack's memory by what it no longer needs."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from moto.dynamodb.models import dynamodb_backends
from moto.ses.models import ses_backends

from sewerbill.local import LocalRuntime


def _shard(rt: LocalRuntime, logical_id: str) -> Any:
    table = dynamodb_backends[rt.stack.account][rt.stack.region].tables[rt.resource(logical_id)]
    return table.stream_shard


def _sequence_numbers(shard: Any) -> list[int]:
    return [int(r.record["dynamodb"]["SequenceNumber"]) for r in shard.items]


def _outbox_seen(rt: LocalRuntime) -> set[str]:
    items = rt.client("dynamodb").scan(TableName=rt.resource("ObservationsTable"))["Items"]
    return {i["pk"]["S"] for i in items if i["pk"]["S"].startswith("outbox#keep-")}


def test_stream_records_a_day_old_are_dropped_and_the_stream_goes_on(rt: LocalRuntime) -> None:
    ddb, table = rt.client("dynamodb"), rt.resource("OutboxTable")
    shard = _shard(rt, "OutboxTable")
    for n in range(3):
        ddb.put_item(TableName=table, Item={"pk": {"S": f"keep-old-{n}"}})
    rt.drain()
    old = _sequence_numbers(shard)
    assert len(old) >= 3
    dropped_before = rt.retention.dropped_records if rt.retention else 0

    rt.clock.advance(by=timedelta(hours=23))  # younger than a day: kept
    rt.drain()
    assert _sequence_numbers(shard)[: len(old)] == old

    ddb.put_item(TableName=table, Item={"pk": {"S": "keep-young"}})
    rt.drain()
    young = _sequence_numbers(shard)[-1]
    rt.clock.advance(by=timedelta(hours=2))  # the first records are now 25 hours old
    rt.drain()

    kept = _sequence_numbers(shard)
    assert rt.retention is not None
    assert rt.retention.dropped_records - dropped_before >= len(old)
    assert not set(old) & set(kept), "the day-old records are gone"
    assert young in kept, "a record an hour old is kept"
    assert kept == sorted(kept) and len(set(kept)) == len(kept)

    # the stream goes on where it was: new records numbered after the kept ones, read and handled
    ddb.put_item(TableName=table, Item={"pk": {"S": "keep-after"}})
    rt.drain()
    assert _sequence_numbers(shard)[-1] == max(kept) + 1
    assert {"outbox#keep-old-0", "outbox#keep-young", "outbox#keep-after"} <= _outbox_seen(rt)


def test_older_sent_mail_keeps_its_headers_only(rt: LocalRuntime) -> None:
    assert rt.retention is not None
    ses = rt.client("ses")
    backend = ses_backends[rt.stack.account][rt.stack.region]
    start = len(backend.sent_messages)
    for n in range(5):
        raw = (
            "From: noreply@fixture.local\r\nTo: clerk@example.com\r\n"
            f"Subject: letter {n}\r\nContent-Type: text/plain\r\n\r\n" + f"BODY-{n} " * 200
        )
        ses.send_raw_email(Source="noreply@fixture.local", RawMessage={"Data": raw})
    keep = rt.retention.keep_mail
    rt.retention.keep_mail = 2
    try:
        rt.drain()
    finally:
        rt.retention.keep_mail = keep
    mine = backend.sent_messages[start:]
    assert [m.raw_data.count("BODY-") for m in mine] == [0, 0, 0, 200, 200]
    assert all(f"Subject: letter {n}" in m.raw_data for n, m in enumerate(mine))
    assert json.dumps([m.source for m in mine]).count("noreply@fixture.local") == 5
