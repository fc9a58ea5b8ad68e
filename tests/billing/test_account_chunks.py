"""Recorded account versions go out packed (issue 26): the publisher turns a stream batch's
account history INSERTs into ``AccountsChanged`` chunks of one tenant's versions, in stream
order, at most ``ACCOUNTS_PER_CHUNK_MAX`` each, reported by their first record; a rewrite
(MODIFY) and other items are not versions. Pure: stream records built by hand."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from billing.adapters import bill_outbox
from billing.adapters.bill_outbox import account_records
from billing.adapters.items import account_history_item
from billing.domain.accounts import AccountRecord
from billing.events import ACCOUNTS_PER_CHUNK_MAX, AccountsChanged, chunk_accounts
from common.dynamo import to_item
from common.events import MAX_ENTRY_BYTES, entry_size


def version(account_id: str, tenant: str = "grafton-sewer", line: int = 0, **fields: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "name": "Ann Émile",
        "service_address": "42 Main St",
        "mailing_address": "PO Box 7",
        "zip": "53024",
        "opened_on": date(2026, 1, 1),
        "account_class": "residential",
        **fields,
    }
    record = AccountRecord(tenant=tenant, account_id=account_id, **values)
    return account_history_item(record, f"2026-11-02T15:00:00.{line:06d}+00:00", "accounts/a.csv")


def stream_record(item: dict[str, Any], sequence: int, event: str = "INSERT") -> dict[str, Any]:
    return {
        "eventName": event,
        "dynamodb": {
            "SequenceNumber": f"{sequence:021d}",
            "Keys": {"pk": {"S": item["pk"]}, "sk": {"S": item["sk"]}},
            "NewImage": to_item(item),
        },
    }


def chunks(records: list[dict[str, Any]]) -> list[AccountsChanged]:
    return [AccountsChanged.model_validate_json(r.detail) for r in account_records(records)]


def test_a_batchs_versions_are_one_chunk_in_stream_order_with_what_consumers_keep() -> None:
    items = [
        version("GR-1", line=1, email="ann@example.com", email_opt_in=True, closed_on=date(2026, 10, 31)),
        version("GR-2", line=2, satellite=True, sic="2082"),
        version("GR-1", line=3),  # a later version of GR-1 in the same batch
    ]
    records = [stream_record(item, 10 + n) for n, item in enumerate(items)]
    records.insert(1, stream_record(items[0], 90, event="MODIFY"))  # a rewrite: not a new version
    records.insert(2, stream_record({"pk": "ACCOUNTS#grafton-sewer", "sk": "GR-1", "record": "{}"}, 91))

    [record] = account_records(records)
    assert (record.source, record.detail_type, record.sequence_number) == (
        "sewerbill.billing",
        "AccountsChanged",
        f"{10:021d}",
    )
    chunk = AccountsChanged.model_validate_json(record.detail)
    assert [(v.account_id, v.version.microsecond) for v in chunk.accounts] == [
        ("GR-1", 1),
        ("GR-2", 2),
        ("GR-1", 3),
    ]
    first, second, _ = chunk.accounts
    assert (first.email, first.email_opt_in, first.closed_on) == ("ann@example.com", True, date(2026, 10, 31))
    assert (second.satellite, second.sic, second.service_address) == (True, "2082", "42 Main St")
    assert (chunk.first_account_id, chunk.last_account_id, chunk.occurred_at) == (
        "GR-1",
        "GR-1",
        chunk.last_version,
    )
    # the same batch gives the same chunk, event id included (a redelivery is recognisable)
    assert account_records(records) == [record]


def test_a_chunk_holds_one_tenants_run_and_at_most_its_maximum() -> None:
    items = [version(f"GR-{n}", line=n) for n in range(ACCOUNTS_PER_CHUNK_MAX + 1)]
    items.append(version("SU-1", tenant="sullivan-sewer", line=999))
    found = chunks([stream_record(item, n) for n, item in enumerate(items)])
    assert [(c.tenant, len(c.accounts)) for c in found] == [
        ("grafton-sewer", ACCOUNTS_PER_CHUNK_MAX),
        ("grafton-sewer", 1),
        ("sullivan-sewer", 1),
    ]


def test_a_full_chunk_of_the_longest_versions_fits_an_eventbridge_entry() -> None:
    long = "W" * 200  # the longest text an account cell may hold (common.fields)
    items = [
        version(
            f"GR-{n:060d}",
            line=n,
            name=long,
            service_address=long,
            mailing_address=long,
            email=long,
            parcel_id="P" * 64,
            sic=long,
        )
        for n in range(ACCOUNTS_PER_CHUNK_MAX)
    ]
    [record] = account_records([stream_record(item, n) for n, item in enumerate(items)])
    size = entry_size(source=record.source, detail_type=record.detail_type, detail=record.detail)
    assert size < MAX_ENTRY_BYTES


def test_consumers_read_each_version_on_its_own() -> None:
    [record] = account_records([stream_record(version("GR-1"), 1)])

    keyed = chunk_accounts(json.loads(record.detail))
    assert [key for key, _ in keyed] == ["accounts.0 (GR-1)"]
    with pytest.raises(ValueError, match="at least one"):
        chunk_accounts({"accounts": []})


def test_the_publisher_sends_bills_and_versions_from_one_stream_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[list[dict[str, Any]]] = []

    class Events:
        def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:  # noqa: N803 - boto3's name
            sent.append(Entries)
            return {"Entries": [{"EventId": str(n)} for n in range(len(Entries))]}

    publisher = bill_outbox.BillOutboxPublisher(Events(), "bus")
    answer = publisher.handle_stream_event({"Records": [stream_record(version("GR-1"), 1)]})
    assert answer == {"batchItemFailures": []}
    assert [e["DetailType"] for batch in sent for e in batch] == ["AccountsChanged"]
