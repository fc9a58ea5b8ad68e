"""Sending a cycle's chunk messages (SendMessageBatch, 10 a request)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from common.errors import TransientError


class SqsQueue:
    def __init__(self, client: Any, url: str) -> None:
        self._client = client
        self._url = url
        self.requests = 0

    def send_many(self, bodies: Sequence[str]) -> None:
        for start in range(0, len(bodies), 10):
            batch = bodies[start : start + 10]
            self.requests += 1
            resp = self._client.send_message_batch(
                QueueUrl=self._url, Entries=[{"Id": str(i), "MessageBody": b} for i, b in enumerate(batch)]
            )
            if resp.get("Failed"):
                raise TransientError(f"SendMessageBatch failed: {resp['Failed']}")
