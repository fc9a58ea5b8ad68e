"""The billing table's stream as outbox: outbox items, and issued bills packed into chunks
(``BillsIssued``).

A bill item is its own outbox (one fact, one item). The publisher packs the bill INSERTs of
a stream batch, in stream order, into one ``BillsIssued`` per run of one tenant's bills,
each entry under EventBridge's 256 KB and at most ``BILLS_PER_CHUNK_MAX`` bills (issue 7:
bulk work goes in batches, and so do its events). A 10,000-account cycle is then about 60
entries on the bus and on each consumer's queue instead of 10,000.

A chunk that is not accepted is reported by its first record's sequence number: a stream
resumes a batch from the lowest sequence number reported (Lambda's
``ReportBatchItemFailures``), so every bill of the chunk is published again, packed anew;
consumers keep each bill by its own business key, so the bills published twice change
nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from billing.adapters.items import IssuedDetail, event_id_for, issued_detail
from billing.events import BILLS_PER_CHUNK_MAX, BillsIssued
from common.events import MAX_ENTRY_BYTES, check_entry_size
from common.outbox import OutboxPublisher, OutboxRecord, outbox_records

DETAIL_TYPE = BillsIssued.detail_type()
# Within this many bytes of the limit, a chunk's head (its schema version, event id, time,
# tenant and first and last bill ids) is measured before a bill joins it; farther off, a head
# (ids of tens of characters) fits. A head that did not would be refused loudly (EventTooLarge).
_NEAR_LIMIT = 16 * 1024
_LONGEST_TIME = "0000-00-00T00:00:00.000000Z"
_EVENT_ID = "0" * 36


def bill_records(
    stream_records: Iterable[Mapping[str, Any]], *, limit: int = MAX_ENTRY_BYTES
) -> list[OutboxRecord]:
    """The bill INSERTs among the stream records, as ``BillsIssued`` chunks in stream order
    (module doc). ``limit``: the largest entry, in EventBridge's bytes.

    A bill item's detail is written from the three string attributes it needs (``bill``,
    ``notice``, ``issued_at``), read straight from the stream's image; a chunk's detail is
    its head and its bills' details joined, not serialized again, then validated by the
    ``BillsIssued`` model (a chunk its consumers could not read is refused here, loudly)."""
    chunks: list[OutboxRecord] = []
    sequence = ""
    bills: list[IssuedDetail] = []
    size = 0  # the chunk's bills' details, each with its comma, in UTF-8 bytes
    for record in stream_records:
        if record.get("eventName") != "INSERT":
            continue
        change = record.get("dynamodb") or {}
        image = change.get("NewImage") or {}
        if not image.get("pk", {}).get("S", "").startswith("BILLS#") or "notice" not in image:
            continue
        bill = issued_detail(image["bill"]["S"], image["notice"]["S"], image["issued_at"]["S"])
        bytes_ = len(bill.detail.encode("utf-8")) + 1
        if bills and (
            bill.tenant != bills[0].tenant
            or len(bills) == BILLS_PER_CHUNK_MAX
            or (
                size + bytes_ > limit - _NEAR_LIMIT
                and size + bytes_ + _head_bytes(bill.tenant, bills[0].bill_id, bill.bill_id) > limit
            )
        ):
            chunks.append(_chunk(sequence, bills))
            bills, size = [], 0
        if not bills:
            sequence = str(change.get("SequenceNumber", ""))
        bills.append(bill)
        size += bytes_
    if bills:
        chunks.append(_chunk(sequence, bills))
    return chunks


def _head(tenant: str, first: str, last: str, event_id: str, occurred_at: str) -> str:
    """A chunk's detail without its bills, still open (``{...``)."""
    head = {
        "schema_version": 1,
        "event_id": event_id,
        "occurred_at": occurred_at,
        "tenant": tenant,
        "first_bill_id": first,
        "last_bill_id": last,
    }
    return json.dumps(head, ensure_ascii=False, separators=(",", ":"))[:-1]


def _head_bytes(tenant: str, first: str, last: str) -> int:
    """What a chunk's entry counts besides its bills' details, at most (its time at its longest)."""
    head = _head(tenant, first, last, _EVENT_ID, _LONGEST_TIME)
    return len(BillsIssued.SOURCE) + len(DETAIL_TYPE) + len(head.encode("utf-8")) + len(',"bills":[]}')


def _chunk(sequence: str, bills: list[IssuedDetail]) -> OutboxRecord:
    tenant, first, last = bills[0].tenant, bills[0].bill_id, bills[-1].bill_id
    head = _head(
        tenant,
        first,
        last,
        event_id_for(DETAIL_TYPE, tenant, first, last, str(len(bills))),
        # the latest bill's time (the details write it as pydantic does: compared as times)
        max((bill.occurred_at for bill in bills), key=datetime.fromisoformat),
    )
    detail = head + ',"bills":[' + ",".join(bill.detail for bill in bills) + "]}"
    check_entry_size(source=BillsIssued.SOURCE, detail_type=DETAIL_TYPE, detail=detail)
    BillsIssued.model_validate_json(detail)  # joined, not serialized: still held to its model
    return OutboxRecord(
        sequence_number=sequence, source=BillsIssued.SOURCE, detail_type=DETAIL_TYPE, detail=detail
    )


class BillOutboxPublisher(OutboxPublisher):
    def handle_stream_event(self, event: Mapping[str, Any]) -> dict[str, list[dict[str, str]]]:
        records = event.get("Records", [])
        failed = self.publish(outbox_records(records) + bill_records(records))
        return {"batchItemFailures": [{"itemIdentifier": seq} for seq in failed]}
