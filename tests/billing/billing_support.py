"""Helpers for billing's tests (a module of its own: conftest names collide across dirs)."""

from __future__ import annotations

import json
import urllib.request
from datetime import date
from decimal import Decimal
from typing import Any

from billing.domain.arrangements import Arrangement, make_arrangement
from billing.domain.ledger import Entry


# A payment arrangement (GR-OVERDUE) of Grafton's GR-1: instalments as (day, amount).
def arrangement(
    made_on: date, *instalments: tuple[date, str], end_on: date, aid: str = "ARR-1"
) -> Arrangement:
    return make_arrangement(
        tenant="grafton-sewer",
        account_id="GR-1",
        arrangement_id=aid,
        made_on=made_on,
        instalments=[(d, Decimal(a)) for d, a in instalments],
        end_on=end_on,
        approver="clerk",
    )


def payment(account_id: str, ref: str, paid_on: date, amount: str, tenant: str = "grafton-sewer") -> Entry:
    return Entry(
        entry_id=f"PAY-{ref}",
        tenant=tenant,
        account_id=account_id,
        posted_on=paid_on,
        kind="payment",
        amount=-Decimal(amount),
        fund="om",
        reference=ref,
    )


# --- on the local runtime ---------------------------------------------------------------------
def staff_get(rt: Any, path: str, tenant: str) -> dict[str, Any]:
    """GET a staff route through the runtime's gateway with a clerk's token of ``tenant``."""
    token = rt.mint_token(sub="clerk", claims={"role": "staff", "tenants": [tenant]})
    req = urllib.request.Request(rt.gateway_url + path, headers={"authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - the local gateway
        result: dict[str, Any] = json.loads(resp.read())
    return result


def publish(rt: Any, event: Any) -> None:
    """Put a producer's event on the bus, as the producer's outbox would, and drain."""
    rt.put_event(event.SOURCE, event.detail_type(), json.loads(event.detail_json()), bus="EventBus")
    rt.drain()
