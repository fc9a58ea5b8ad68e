"""Stormwater keeps each bill of billing's ``BillsIssued`` on its own: a malformed bill is
rejected by its place and id, and the bills beside it are kept."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from common.handling import MembersRejected
from common.messages import MalformedMessage
from stormwater.app.billing_inputs import BillIssuedInput
from stormwater.handlers import on_billing_event as handler

TENANT = "pleasant-prairie-stormwater"


class Kept:
    def __init__(self) -> None:
        self.bills: list[str] = []

    def keep_bill(self, bill: BillIssuedInput) -> bool:
        self.bills.append(bill.bill_id)
        return True


def bill(bill_id: str) -> dict[str, Any]:
    return {
        "occurred_at": "2026-10-01T12:00:00Z",
        "tenant": TENANT,
        "bill_id": bill_id,
        "account_id": "PPS-1",
        "parcel_id": "P-1",
        "bill_date": "2026-10-01",
        "due_date": "2026-10-21",
        "total": "41.24",
    }


def record(detail: dict[str, Any]) -> SQSRecord:
    body = {"detail-type": "BillsIssued", "source": "sewerbill.billing", "detail": detail}
    body |= {"version": "0", "id": "e-1", "account": "123456789012", "time": "2026-10-01T12:00:00Z"}
    body |= {"region": "us-east-1", "resources": []}
    return SQSRecord(
        {"messageId": "m-1", "body": json.dumps(body), "attributes": {"ApproximateReceiveCount": "1"}}
    )


@pytest.fixture
def kept(monkeypatch: pytest.MonkeyPatch) -> Kept:
    service = Kept()
    monkeypatch.setattr(handler.composition, "service", lambda: service)
    return service


def chunk(*bills: dict[str, Any]) -> dict[str, Any]:
    ids = [b.get("bill_id", "?") for b in bills]
    return {"occurred_at": "2026-10-01T12:00:00Z", "tenant": TENANT, "bills": list(bills)} | {
        "first_bill_id": ids[0],
        "last_bill_id": ids[-1],
    }


def test_every_bill_of_a_chunk_is_kept(kept: Kept) -> None:
    handler.record_handler(record(chunk(bill("B-1"), bill("B-2"))))
    assert kept.bills == ["B-1", "B-2"]


def test_a_malformed_bill_costs_only_itself(kept: Kept) -> None:
    broken = bill("B-2")
    del broken["due_date"]

    with pytest.raises(MembersRejected, match=r"1 of 3 members refused: bills\.1 \(B-2\): .*due_date"):
        handler.record_handler(record(chunk(bill("B-1"), broken, bill("B-3"))))

    assert kept.bills == ["B-1", "B-3"]


def test_a_chunk_without_bills_is_malformed_whole(kept: Kept) -> None:
    with pytest.raises(MalformedMessage, match="BillsIssued: bills: "):
        handler.record_handler(record({"occurred_at": "2026-10-01T12:00:00Z", "tenant": TENANT, "bills": {}}))
    assert kept.bills == []
