"""Consumption as billing keeps it (event-carried state from metering's ConsumptionDetermined)."""

from __future__ import annotations

from typing import Protocol

from metering.events import ConsumptionDetermined


class UsageRepository(Protocol):
    def record_consumption(self, event: ConsumptionDetermined) -> bool:
        """Store the consumption by business key; False if it is already stored."""
        ...


def keep_consumption(event: ConsumptionDetermined, *, repo: UsageRepository) -> bool:
    """Idempotent: replaying the same event (or a duplicate publish) changes nothing."""
    return repo.record_consumption(event)
