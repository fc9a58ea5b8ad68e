"""Helpers for billing's pure tests (a module of its own: conftest names collide across dirs)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from billing.domain.ledger import Entry


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
