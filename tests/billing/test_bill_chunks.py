"""Issued bills go out packed (issue 7): the publisher turns a stream batch's bill items into
``BillsIssued`` chunks of one tenant's bills, in stream order, each entry under EventBridge's
256 KB; each bill in a chunk is, byte for byte, the ``BillIssued`` it would be alone. A
chunk PutEvents refuses is reported by its first record, so the stream publishes all its
bills again. Consumers handle each member on its own (``common.handling.each_member``)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from botocore.exceptions import ClientError
from test_bill_issued_detail import a_cycles_bill

from billing.adapters import bill_outbox
from billing.adapters.bill_outbox import BillOutboxPublisher, bill_records
from billing.adapters.items import bill_issued_detail, bill_item, bill_of
from billing.events import BillsIssued
from common.dynamo import to_item
from common.errors import PermanentError, TransientError
from common.events import MAX_ENTRY_BYTES, entry_size
from common.handling import MembersRejected, each_member


def bill_of_account(
    account: str, tenant: str = "grafton-sewer", *, name: str = "Ann Émile"
) -> dict[str, Any]:
    template = a_cycles_bill()
    bill = bill_of(template)
    bill = replace(bill, tenant=tenant, account_id=account, bill_id=f"{account}-2026-07-01")
    notice = {
        "recipient": {"name": name, "address": "42 Main St"},
        "owner": {"name": name, "address": "42 Main St"},
    }
    return bill_item(bill, template["issued_at"], notice)


def stream_record(item: dict[str, Any], sequence: int, event: str = "INSERT") -> dict[str, Any]:
    return {
        "eventName": event,
        "dynamodb": {
            "SequenceNumber": f"{sequence:021d}",
            "Keys": {"pk": {"S": item["pk"]}, "sk": {"S": item["sk"]}},
            "NewImage": to_item({k: v for k, v in item.items() if v is not None}),
        },
    }


def chunks_of(records: list[dict[str, Any]], **kwargs: Any) -> list[BillsIssued]:
    return [BillsIssued.model_validate_json(r.detail) for r in bill_records(records, **kwargs)]


def test_a_batchs_bills_are_one_chunk_each_bill_byte_for_byte_its_bill_issued() -> None:
    items = [bill_of_account(f"GR-{i:06d}") for i in range(5)]
    records = [stream_record(item, 10 + i) for i, item in enumerate(items)]
    # an update and a non-bill insert in between are not bills
    records.insert(2, stream_record(items[0], 99, event="MODIFY"))
    records.insert(3, stream_record({"pk": "ACCOUNTS#grafton-sewer", "sk": "GR-1", "x": "1"}, 98))

    [record] = bill_records(records)

    assert (record.source, record.detail_type, record.sequence_number) == (
        "sewerbill.billing",
        "BillsIssued",
        f"{10:021d}",
    )
    detail = json.loads(record.detail)
    alone = [json.loads(bill_issued_detail(i["bill"], i["notice"], i["issued_at"])) for i in items]
    assert detail["bills"] == alone
    chunk = BillsIssued.model_validate_json(record.detail)
    assert (chunk.tenant, chunk.first_bill_id, chunk.last_bill_id) == (
        "grafton-sewer",
        "GR-000000-2026-07-01",
        "GR-000004-2026-07-01",
    )
    assert chunk.occurred_at == chunk.bills[-1].occurred_at
    # the same batch gives the same chunk, event id included (a redelivery is recognisable)
    assert bill_records(records) == [record]


def test_chunks_keep_one_tenant_each_and_stream_order() -> None:
    tenants = ["grafton-sewer", "grafton-sewer", "sullivan-sewer", "grafton-sewer"]
    records = [stream_record(bill_of_account(f"A-{i}", t), i + 1) for i, t in enumerate(tenants)]

    chunks = chunks_of(records)

    assert [(c.tenant, [b.account_id for b in c.bills]) for c in chunks] == [
        ("grafton-sewer", ["A-0", "A-1"]),
        ("sullivan-sewer", ["A-2"]),
        ("grafton-sewer", ["A-3"]),
    ]
    assert [r.sequence_number for r in bill_records(records)] == [f"{n:021d}" for n in (1, 3, 4)]


def test_a_chunk_stays_under_the_entry_limit_and_the_count_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [bill_of_account(f"GR-{i:06d}", name="N" * 2000) for i in range(300)]
    records = [stream_record(item, i + 1) for i, item in enumerate(items)]

    packed = bill_records(records)

    sizes = [entry_size(source=r.source, detail_type=r.detail_type, detail=r.detail) for r in packed]
    assert len(packed) > 1 and max(sizes) <= MAX_ENTRY_BYTES
    # all 300 bills, once each, in order
    assert [b.account_id for r in packed for b in BillsIssued.model_validate_json(r.detail).bills] == [
        f"GR-{i:06d}" for i in range(300)
    ]
    # to the byte: under any limit each entry fits, and none could have taken the next bill
    bill_bytes = len(json.dumps(json.loads(packed[0].detail)["bills"][0]))  # about one bill's size
    for limit in (2 * bill_bytes, 3 * bill_bytes + 700, 20_000, 60_000):
        small = bill_records(records[:40], limit=limit)
        sizes = [entry_size(source=r.source, detail_type=r.detail_type, detail=r.detail) for r in small]
        assert max(sizes) <= limit and len(small) > 1, limit
        counts = [len(json.loads(r.detail)["bills"]) for r in small]
        assert sum(counts) == 40
        nexts = [
            json.dumps(json.loads(r.detail)["bills"][0], ensure_ascii=False, separators=(",", ":"))
            for r in small[1:]
        ]
        for size, following in zip(sizes, nexts, strict=False):
            assert size + len(following.encode()) + 1 > limit  # the next bill did not fit
    # the count bound cuts a chunk too
    monkeypatch.setattr(bill_outbox, "BILLS_PER_CHUNK_MAX", 4)
    assert [len(c.bills) for c in chunks_of(records[:10])] == [4, 4, 2]


class Events:
    def __init__(self, refuse: set[int] = frozenset(), fail_call: bool = False) -> None:  # type: ignore[assignment]
        self.entries: list[dict[str, Any]] = []
        self.refuse, self.fail_call = refuse, fail_call

    def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:  # noqa: N803
        if self.fail_call:
            raise ClientError({"Error": {"Code": "InternalException", "Message": "x"}}, "PutEvents")
        results = []
        for entry in Entries:
            n = len(self.entries)
            self.entries.append(entry)
            results.append({"ErrorCode": "InternalFailure"} if n in self.refuse else {"EventId": str(n)})
        return {"Entries": results, "FailedEntryCount": sum(1 for r in results if "ErrorCode" in r)}


def test_a_refused_chunk_is_reported_by_its_first_record_so_all_its_bills_go_again() -> None:
    tenants = ["grafton-sewer"] * 3 + ["sullivan-sewer"] * 2
    records = [stream_record(bill_of_account(f"A-{i}", t), i + 1) for i, t in enumerate(tenants)]
    events = Events(refuse={1})  # the Sullivan chunk

    answer = BillOutboxPublisher(events, "bus").handle_stream_event({"Records": records})

    assert answer == {"batchItemFailures": [{"itemIdentifier": f"{4:021d}"}]}
    assert [e["DetailType"] for e in events.entries] == ["BillsIssued", "BillsIssued"]
    assert all(e["EventBusName"] == "bus" for e in events.entries)
    # a call that fails whole reports every chunk
    failed = BillOutboxPublisher(Events(fail_call=True), "bus").handle_stream_event({"Records": records})
    assert failed["batchItemFailures"] == [{"itemIdentifier": f"{n:021d}"} for n in (1, 4)]


def test_a_chunk_names_its_first_and_last_bill_and_one_tenant() -> None:
    detail = json.loads(bill_records([stream_record(bill_of_account("A-1"), 1)])[0].detail)
    other = json.loads(bill_records([stream_record(bill_of_account("S-1", "sullivan-sewer"), 2)])[0].detail)
    with pytest.raises(ValueError, match="tenant"):
        BillsIssued.model_validate({**detail, "bills": detail["bills"] + other["bills"]})
    with pytest.raises(ValueError, match="first_bill_id"):
        BillsIssued.model_validate({**detail, "first_bill_id": "X"})
    with pytest.raises(ValueError):
        BillsIssued.model_validate({**detail, "bills": []})


def test_each_member_handles_every_member_whatever_one_raises() -> None:
    handled: list[str] = []

    def handle(key: str) -> str:
        handled.append(key)
        if key == "b":
            raise PermanentError("no address")
        if key == "c":
            raise TransientError("SES throttled")
        return key

    members = [(k, lambda k=k: handle(k)) for k in "abcd"]
    with pytest.raises(TransientError):  # the message is retried: c again, a, b and d once more
        each_member(members)
    assert handled == ["a", "b", "c", "d"]

    handled.clear()
    with pytest.raises(MembersRejected, match=r"1 of 3 members refused: b: PermanentError: no address"):
        each_member([(k, lambda k=k: handle(k)) for k in "abd"])
    assert handled == ["a", "b", "d"]
    assert issubclass(MembersRejected, PermanentError)
    assert each_member([(k, lambda k=k: handle(k)) for k in "ad"]) == ["a", "d"]
