"""Notices' contact item: the addressee and the billed usage of an account, kept from its bills
(one item, a version-conditioned put: a concurrent bill of the same account is not lost)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from typing import Any

import boto3
import pytest
from moto import mock_aws

from notices.adapters.aws import USAGE_KEPT, DynamoContacts
from notices.domain.model import Recipient

ADA = Recipient(name="Ada", address_lines=("1 Main St", "Grafton, WI 53024"), zip="53024")


@pytest.fixture
def ddb() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="notices",
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        yield client


def test_each_period_counts_once_and_the_chart_gets_the_last_13(ddb: Any) -> None:
    contacts = DynamoContacts(ddb, "notices")
    for month in range(1, 15):  # Jan 2025 .. Feb 2026, 1,000 gal more each month
        start = date(2025 + (month - 1) // 12, (month - 1) % 12 + 1, 1)
        points = contacts.remember_bill("grafton-sewer", "GR-1", ADA, None, start, Decimal(1000 * month))
    again = contacts.remember_bill("grafton-sewer", "GR-1", ADA, None, date(2026, 2, 1), Decimal(14000))
    assert again == points and len(points) == 13
    assert (points[0].period_start, points[-1].period_start) == (date(2025, 2, 1), date(2026, 2, 1))
    assert points[-1].volume_gal == Decimal(14000)
    assert contacts.recipient("grafton-sewer", "GR-1") == ADA


def test_a_bill_kept_meanwhile_is_not_overwritten(ddb: Any) -> None:
    contacts = DynamoContacts(ddb, "notices")
    contacts.remember_bill("grafton-sewer", "GR-1", ADA, None, date(2026, 1, 1), Decimal(1000))
    real_put = ddb.put_item
    raced: list[bool] = []

    def put_after_a_concurrent_bill(**request: Any) -> Any:
        if not raced:  # another handler keeps March between this one's read and write
            raced.append(True)
            other = DynamoContacts(ddb, "notices")
            ddb.put_item = real_put
            other.remember_bill("grafton-sewer", "GR-1", ADA, None, date(2026, 3, 1), Decimal(3000))
            ddb.put_item = put_after_a_concurrent_bill
        return real_put(**request)

    ddb.put_item = put_after_a_concurrent_bill
    points = contacts.remember_bill("grafton-sewer", "GR-1", ADA, None, date(2026, 2, 1), Decimal(2000))
    assert [(p.period_start.month, p.volume_gal) for p in points] == [(1, 1000), (2, 2000), (3, 3000)]
    assert raced == [True] and USAGE_KEPT >= 13
