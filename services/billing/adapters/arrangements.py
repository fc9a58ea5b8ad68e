"""Payment arrangements as stored: one fact one item in billing's table under
``ARRANGEMENTS#<tenant>`` (``<account_id>#<arrangement_id>`` as made, never rewritten, and
``<account_id>#<arrangement_id>#CANCELLED`` its cancellation), read back with their
cancellations applied. The use cases that make and cancel them are ``billing.app.arrangements``;
the daily assessment and the withdrawal of an eligibility read them here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from billing.adapters.repository import BillingRepo
from billing.domain.arrangements import Arrangement, arrangement_of

CANCELLED = "CANCELLED"


def pk(tenant: str) -> str:
    return f"ARRANGEMENTS#{tenant}"


def arrangements_from(items: Iterable[dict[str, Any]]) -> dict[str, list[Arrangement]]:
    """Arrangements by account id, with their cancellations applied, oldest first."""
    made: dict[tuple[str, str], dict[str, Any]] = {}
    cancelled: dict[tuple[str, str], dict[str, Any]] = {}
    for item in items:
        parts = item["sk"].split("#")
        if len(parts) == 3 and parts[2] == CANCELLED:
            cancelled[(parts[0], parts[1])] = item
        elif len(parts) == 2:
            made[(parts[0], parts[1])] = item
    out: dict[str, list[Arrangement]] = {}
    for key, item in sorted(made.items(), key=lambda kv: (kv[1]["made_on"], kv[0])):
        values = json.loads(item["request"])
        c = cancelled.get(key)
        if c is not None:
            values |= {
                "cancelled_on": c["cancelled_on"],
                "cancelled_by": c["by"],
                "cancel_reason": c["reason"],
            }
        out.setdefault(key[0], []).append(arrangement_of(values))
    return out


def arrangements_of(repo: BillingRepo, tenant: str, account_id: str) -> list[Arrangement]:
    return arrangements_from(repo.query(pk(tenant), prefix=f"{account_id}#")).get(account_id, [])


def all_arrangements(repo: BillingRepo, tenant: str) -> dict[str, list[Arrangement]]:
    return arrangements_from(repo.query(pk(tenant)))
