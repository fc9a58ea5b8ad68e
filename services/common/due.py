"""A daily run's mark: when it next has work, so that a day with nothing due costs one read
(issue 7; sampling's ``DAILY``/``DUE`` is the first of these, billing's assessment keeps one
per tenant).

One item, ``DAILY`` / ``DUE`` in the service's table: ``next_on``, the day the last full run
computed its next work would fall; ``pending``, the days writes since then said work may
fall (a write adds its day, creating the mark); ``writes``, how many writes added them. The
run reads the mark and stops unless it is due; a full run records its next day only if
``writes`` has not moved since its read (a conditional put), so a write the run did not
see always leaves its day pending. A full run happens at least every
:data:`FULL_RUN_AT_LEAST_EVERY`: the bound on how late a day the computation does not
foresee (a write that crashed between its item and its mark) is acted on.

Writers land their items first and then the mark, unless losing the item's day would be
worse than one idle full run (notices' letters mark first: see there).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from botocore.exceptions import ClientError

from common.dynamo import get, key_of, to_item
from common.errors import TransientError

FULL_RUN_AT_LEAST_EVERY = timedelta(days=28)
_DAY = timedelta(days=1)
KEY = ("DAILY", "DUE")


@dataclass(frozen=True)
class DueMark:
    next_on: date | None
    pending: frozenset[date] = frozenset()
    writes: int = 0

    def due(self, today: date) -> bool:
        if self.next_on is None:
            return True
        return min((self.next_on, *self.pending)) <= today


def next_due(today: date, candidates: Iterable[date | None]) -> date:
    """The next full run: the earliest candidate after today, at the latest
    :data:`FULL_RUN_AT_LEAST_EVERY` from today."""
    later = today + _DAY
    return min([today + FULL_RUN_AT_LEAST_EVERY, *(max(d, later) for d in candidates if d is not None)])


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

    def add(self, days: Collection[date]) -> None:
        """Days on which the run may have work (one UpdateItem; creates the mark)."""
        if not days:
            return
        self._client.update_item(
            TableName=self._table,
            Key=key_of(*KEY),
            UpdateExpression="ADD writes :one, pending :days",
            ExpressionAttributeValues={
                ":one": {"N": "1"},
                ":days": {"SS": sorted({d.isoformat() for d in days})},
            },
        )

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
        condition, values = "attribute_not_exists(pk)", {}
        if seen is not None:
            condition, values = "writes = :writes", {":writes": {"N": str(seen.writes)}}
        item: dict[str, Any] = {
            "pk": KEY[0],
            "sk": KEY[1],
            "next_on": next_on.isoformat(),
            "writes": seen.writes if seen else 0,
        }
        if keep:
            item["pending"] = {d.isoformat() for d in keep}
        try:
            self._client.put_item(
                TableName=self._table,
                Item=to_item(item),
                ConditionExpression=condition,
                **({"ExpressionAttributeValues": values} if values else {}),
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise TransientError(f"writing the daily mark: {exc}") from exc
        return True
