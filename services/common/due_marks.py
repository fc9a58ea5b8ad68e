"""The daily mark's item (``common.due``) in a service's table: ``DAILY`` / ``DUE``."""

from __future__ import annotations

from collections.abc import Collection
from datetime import date
from typing import Any

from botocore.exceptions import ClientError

from common.due import DueMark
from common.dynamo import get, key_of, to_item
from common.errors import TransientError

KEY = ("DAILY", "DUE")


class DueMarks:
    """The mark in one table (injected low-level client)."""

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table
        self._added: set[date] = set()

    def add_once(self, day: date) -> None:
        """:meth:`add` ``day`` unless this instance (a warm container's) added it already: for
        writers of many items on one day whose day a run drops only after that day is over
        (notices' letters), so that a day of letters is one UpdateItem a container."""
        if day not in self._added:
            self.add([day])
            self._added.add(day)

    def update(self, days: Collection[date]) -> dict[str, Any]:
        """The UpdateItem that adds ``days`` (also an ``Update`` action of a transaction
        whose items the days belong to)."""
        return pending_update(self._table, KEY, {d.isoformat() for d in days})

    def add(self, days: Collection[date]) -> None:
        """Days on which the run may have work (one UpdateItem; creates the mark)."""
        if days:
            self._client.update_item(**self.update(days))

    def read(self) -> DueMark | None:
        item = get(self._client, self._table, *KEY)
        if item is None:
            return None
        return DueMark(
            next_on=date.fromisoformat(item["next_on"]) if "next_on" in item else None,
            pending=frozenset(date.fromisoformat(d) for d in item.get("pending", ())),
            writes=int(item.get("writes", 0)),
        )

    def record(self, next_on: date, seen: DueMark | None, keep: Collection[date] = ()) -> bool:
        """A full run's next day, unless a write added a day since ``seen`` was read (then
        the mark stays as that write left it). ``keep``: pending days still to act on."""
        item: dict[str, Any] = {
            "pk": KEY[0],
            "sk": KEY[1],
            "next_on": next_on.isoformat(),
            "writes": seen.writes if seen else 0,
        }
        if keep:
            item["pending"] = {d.isoformat() for d in keep}
        return put_unless_written(
            self._client, self._table, item, seen.writes if seen else None, "the daily mark"
        )


def pending_update(table: str, key: tuple[str, str], pending: Collection[str]) -> dict[str, Any]:
    """The UpdateItem that adds ``pending`` to a mark's set and counts the write (creating
    the mark): the writers' side of every mark (this module's days, billing's tenants)."""
    return {
        "TableName": table,
        "Key": key_of(*key),
        "UpdateExpression": "ADD writes :one, pending :pending",
        "ExpressionAttributeValues": {":one": {"N": "1"}, ":pending": {"SS": sorted(pending)}},
    }


def put_unless_written(
    client: Any, table: str, item: dict[str, Any], seen_writes: int | None, what: str
) -> bool:
    """Put a run's mark ``item`` unless a write counted itself since the run read the mark
    (``seen_writes``; None: the run found no mark, so none may exist): False when one did,
    and the mark stays as that write left it. The runs' side of every mark."""
    condition, values = "attribute_not_exists(pk)", {}
    if seen_writes is not None:
        condition, values = "writes = :writes", {":writes": {"N": str(seen_writes)}}
    try:
        client.put_item(
            TableName=table,
            Item=to_item(item),
            ConditionExpression=condition,
            **({"ExpressionAttributeValues": values} if values else {}),
        )
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
            return False
        raise TransientError(f"writing {what}: {exc}") from exc
    return True
