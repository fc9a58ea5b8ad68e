"""Metering's table: consumption per account and period, read files taken in, the outbox.

Keys: ``CONSUMPTION#<tenant>#<account_id>`` / ``PERIOD#<start>#<end>`` for a consumption,
``READFILE#<file_id>`` / ``READFILE`` for a file, ``OUTBOX#<event_id>`` / ``OUTBOX`` for
an outbox entry (see ``common.outbox``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from common.clock import Clock
from common.dynamo import ConditionFailed, batch_get, get, put_if_absent, transact
from common.errors import TransientError
from common.ids import key
from common.outbox import outbox_put
from metering.domain.consumption import ConsumptionKey
from metering.domain.read_files import ReadFile
from metering.events import ConsumptionDetermined, ReadsRejected

# Each consumption takes two actions (state + outbox); stay under the 100-action limit.
_CONSUMPTIONS_PER_TRANSACTION = 50


def consumption_key(tenant: str, account_id: str, period_start: Any, period_end: Any) -> tuple[str, str]:
    return key("CONSUMPTION", tenant, account_id), key("PERIOD", period_start, period_end)


def file_key(file_id: str) -> tuple[str, str]:
    return key("READFILE", file_id), "READFILE"


class DynamoReadsRepository:
    def __init__(self, client: Any, table: str, clock: Clock) -> None:
        self._client = client
        self._table = table
        self._clock = clock

    def file_seen(self, file_id: str) -> bool:
        return get(self._client, self._table, *file_key(file_id)) is not None

    def stored_volumes(self, keys: Sequence[ConsumptionKey]) -> dict[ConsumptionKey, int]:
        by_item_key = {consumption_key(*k): k for k in keys}
        found = batch_get(self._client, self._table, by_item_key)
        return {by_item_key[item_key]: int(item["volume_gal"]) for item_key, item in found.items()}

    def record_consumptions(self, determined: Sequence[ConsumptionDetermined]) -> None:
        now = self._clock.now()
        for start in range(0, len(determined), _CONSUMPTIONS_PER_TRANSACTION):
            actions: list[dict[str, Any]] = []
            for event in determined[start : start + _CONSUMPTIONS_PER_TRANSACTION]:
                actions.append(put_if_absent(self._table, self._consumption_item(event, now)))
                actions.append(outbox_put(self._table, event, now=now))
            try:
                transact(self._client, actions)
            except ConditionFailed as exc:
                # Another delivery stored some of these first: retrying re-reads and skips them.
                raise TransientError("consumptions were stored concurrently; retry") from exc

    @staticmethod
    def _consumption_item(event: ConsumptionDetermined, now: datetime) -> dict[str, Any]:
        pk, sk = consumption_key(event.tenant, event.account_id, event.period_start, event.period_end)
        return {
            "pk": pk,
            "sk": sk,
            "tenant": event.tenant,
            "account_id": event.account_id,
            "period_start": event.period_start.isoformat(),
            "period_end": event.period_end.isoformat(),
            "volume_gal": event.volume_gal,
            "source_file": event.source_file,
            "event_id": event.event_id,
            "recorded_at": now.isoformat(),
        }

    def record_file(
        self, file: ReadFile, file_id: str, accepted: int, rejected: ReadsRejected | None
    ) -> None:
        now = self._clock.now()
        pk, sk = file_key(file_id)
        actions = [
            put_if_absent(
                self._table,
                {
                    "pk": pk,
                    "sk": sk,
                    "bucket": file.bucket,
                    "key": file.key,
                    "etag": file.etag,
                    "accepted": accepted,
                    "rejected_lines": [r.line for r in rejected.rejections] if rejected else [],
                    "recorded_at": now.isoformat(),
                },
            )
        ]
        if rejected is not None:
            actions.append(outbox_put(self._table, rejected, now=now))
        try:
            transact(self._client, actions)
        except ConditionFailed:
            return  # another delivery of the same file got there first; nothing to add
