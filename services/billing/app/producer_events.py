"""Other services' events that billing keeps (consumption, ERUs, credits) and the re-rating they start."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from billing.app.rerating import ParcelChange, parcel_changes
from common.errors import PermanentError


def keep_producer_event(
    event: Any,
    *,
    projections: Any,
    clock: Any,
    rerate: Callable[[list[ParcelChange], datetime], object] | None = None,
) -> None:
    """Keep a sampling or stormwater event in billing's projections (by business key); an
    ERU or credit kept for a period already billed is then re-rated (``rerate``, see
    :func:`rerate_parcels`). Kept first: a crash before the re-rating is finished by the
    redelivery, which keeps the same values again and re-rates."""
    from sampling.events import SamplingCostCharged, SamplingCostsCharged, StrengthClassified
    from stormwater.events import CreditChanged, ERUDetermined, ERUsDetermined, FeeCharged, RefundGranted

    now = clock.now()
    if isinstance(event, StrengthClassified):
        projections.keep_strength(event, now)
    elif isinstance(event, SamplingCostCharged):
        projections.keep_charge(event, event.account_id, now)
    elif isinstance(event, SamplingCostsCharged):  # a lab file's chunk: each charge by its own key
        for charge in event.charges:
            projections.keep_charge(charge, charge.account_id, now)
    elif isinstance(event, ERUDetermined):
        projections.keep_eru(event, now)
    elif isinstance(event, ERUsDetermined):  # a chunk of a GIS extract's: each kept as if alone
        projections.keep_erus(event.determinations, now)
    elif isinstance(event, CreditChanged):
        projections.keep_credit(event, now)
    elif isinstance(event, FeeCharged):
        if event.account_id is None:
            raise PermanentError(
                f"fee {event.fee_id}: account_id is required to bill it (parcel {event.parcel_id})"
            )
        projections.keep_charge(event, event.account_id, now)
    elif isinstance(event, RefundGranted):
        projections.post_refund(event, now)
    else:  # pragma: no cover - the handler only passes the kinds above
        raise PermanentError(f"billing keeps no {type(event).__name__}")
    if rerate is not None:
        changes = parcel_changes(event)
        if changes:
            rerate(changes, now)
