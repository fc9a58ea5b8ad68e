"""The billing table's stream as outbox: outbox items, issued bills packed into chunks
(``BillsIssued``) and recorded account versions packed into chunks (``AccountsChanged``).

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

An account version's history item (``ACCOUNT-HISTORY#``) is its own outbox the same way
(issue 26): the history INSERTs of a batch go out as ``AccountsChanged`` chunks, one per
run of one tenant's versions, at most ``ACCOUNTS_PER_CHUNK_MAX`` each; a version rewritten
unchanged by a redelivered import is no INSERT and is not published again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from billing.adapters.items import IssuedDetail, event_id_for, issued_detail
from billing.events import (
    ACCOUNTS_PER_CHUNK_MAX,
    BILLS_PER_CHUNK_MAX,
    AccountsChanged,
    AccountVersion,
    BillsIssued,
)
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


HISTORY_PREFIX = "ACCOUNT-HISTORY#"


def account_version(record_json: str, recorded_at: str) -> tuple[str, AccountVersion]:
    """The tenant and the version a history item records (its ``record`` and time)."""
    values = json.loads(record_json)
    version = AccountVersion(
        account_id=values["account_id"],
        version=datetime.fromisoformat(recorded_at),
        opened_on=values["opened_on"],
        closed_on=values.get("closed_on"),
        account_class=values["account_class"],
        name=values["name"],
        service_address=values["service_address"],
        mailing_address=values["mailing_address"],
        zip=values["zip"],
        email=values.get("email"),
        email_opt_in=bool(values.get("email_opt_in", False)),
        parcel_id=values.get("parcel_id"),
        satellite=bool(values.get("satellite", False)),
        sic=values.get("sic"),
    )
    return str(values["tenant"]), version


def account_records(stream_records: Iterable[Mapping[str, Any]]) -> list[OutboxRecord]:
    """The account history INSERTs among the stream records, as ``AccountsChanged`` chunks
    in stream order (module doc)."""
    chunks: list[OutboxRecord] = []
    sequence = ""
    tenant = ""
    versions: list[AccountVersion] = []
    for record in stream_records:
        if record.get("eventName") != "INSERT":
            continue
        change = record.get("dynamodb") or {}
        image = change.get("NewImage") or {}
        if not image.get("pk", {}).get("S", "").startswith(HISTORY_PREFIX) or "record" not in image:
            continue
        got_tenant, version = account_version(image["record"]["S"], image["recorded_at"]["S"])
        if versions and (got_tenant != tenant or len(versions) == ACCOUNTS_PER_CHUNK_MAX):
            chunks.append(_accounts_chunk(sequence, tenant, versions))
            versions = []
        if not versions:
            sequence, tenant = str(change.get("SequenceNumber", "")), got_tenant
        versions.append(version)
    if versions:
        chunks.append(_accounts_chunk(sequence, tenant, versions))
    return chunks


def _accounts_chunk(sequence: str, tenant: str, versions: list[AccountVersion]) -> OutboxRecord:
    first, last = versions[0], versions[-1]
    event = AccountsChanged(
        event_id=event_id_for(
            AccountsChanged.detail_type(),
            tenant,
            first.account_id,
            first.version.isoformat(),
            last.account_id,
            last.version.isoformat(),
            str(len(versions)),
        ),
        occurred_at=max(v.version for v in versions),
        tenant=tenant,
        first_account_id=first.account_id,
        first_version=first.version,
        last_account_id=last.account_id,
        last_version=last.version,
        accounts=tuple(versions),
    )
    return OutboxRecord(
        sequence_number=sequence,
        source=AccountsChanged.SOURCE,
        detail_type=AccountsChanged.detail_type(),
        detail=event.detail_json(),  # refuses an entry over 256 KB (EventTooLarge)
    )


class BillOutboxPublisher(OutboxPublisher):
    def handle_stream_event(self, event: Mapping[str, Any]) -> dict[str, list[dict[str, str]]]:
        records = event.get("Records", [])
        failed = self.publish(outbox_records(records) + bill_records(records) + account_records(records))
        return {"batchItemFailures": [{"itemIdentifier": seq} for seq in failed]}
