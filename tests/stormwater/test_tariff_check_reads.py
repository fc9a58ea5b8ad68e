"""The daily tariff check reads the applied version only when it cannot know it: a
container that read or recorded a version as applied answers for it from memory."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from common.clock import FixedClock
from stormwater.adapters.dynamodb import DynamoTariffChanges

TENANT = "pleasant-prairie-stormwater"


class Table:
    """A DynamoDB client holding items by key, counting GetItems."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], dict[str, Any]] = {}
        self.gets = 0

    def get_item(self, TableName: str, Key: dict[str, Any], **_: Any) -> dict[str, Any]:  # noqa: N803
        self.gets += 1
        found = self.items.get((Key["pk"]["S"], Key["sk"]["S"]))
        return {"Item": found} if found else {}

    def put_item(self, TableName: str, Item: dict[str, Any], **_: Any) -> None:  # noqa: N803
        self.items[(Item["pk"]["S"], Item["sk"]["S"])] = Item


def test_a_version_applied_is_answered_from_memory_and_another_is_read() -> None:
    table = Table()
    changes = DynamoTariffChanges(table, "t", FixedClock(datetime(2027, 1, 1, 7, tzinfo=UTC)))
    assert changes.applied_version(TENANT, expected="2023-01-01") is None  # cold: read, none yet
    assert table.gets == 1
    changes.set_applied_version(TENANT, "2023-01-01", changed=2)
    for _ in range(3):  # the days after: the version in force is the one recorded here
        assert changes.applied_version(TENANT, expected="2023-01-01") == "2023-01-01"
    assert table.gets == 1
    # A new version in force: what the table says is read again.
    assert changes.applied_version(TENANT, expected="2027-01-01") == "2023-01-01"
    assert table.gets == 2


def test_a_new_container_reads_once_then_remembers() -> None:
    table = Table()
    DynamoTariffChanges(table, "t", FixedClock(datetime(2027, 1, 1, tzinfo=UTC))).set_applied_version(
        TENANT, "2027-01-01", changed=0
    )
    cold = DynamoTariffChanges(table, "t", FixedClock(datetime(2027, 1, 2, tzinfo=UTC)))
    assert [cold.applied_version(TENANT, expected="2027-01-01") for _ in range(2)] == ["2027-01-01"] * 2
    assert table.gets == 1
