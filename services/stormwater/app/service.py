"""Stormwater's use cases behind the HTTP routes and billing's events (one method per action).

Each method reads what it needs, calls the pure domain and commits the decision and its
events together (``DynamoRecords.commit``). Dates come from the injected clock.

The use cases are grouped by subject (``parcels``, ``credits``, ``bills``, ``appeals``);
:class:`StormwaterService` is all of them, the one object the composition root builds and
the handlers call.
"""

from __future__ import annotations

from stormwater.app.appeals import AppealUseCases
from stormwater.app.common import BadRequest, NotFound, as_document


class StormwaterService(AppealUseCases):
    """Every stormwater use case (parcels, credits, bills kept, reconsiderations, appeals)."""


__all__ = ["BadRequest", "NotFound", "StormwaterService", "as_document"]
