"""Accounts: an accounts file taken in (CONTRACTS.md "Import files")."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from billing.adapters.repository import BillingRepo
from billing.app.common import FileResult
from billing.domain.accounts import AccountRecord, parse_account_file


def take_in_account_file(
    data: bytes, *, source: str, repo: BillingRepo, tenants: Collection[str], now: datetime
) -> FileResult:
    """accounts/ upload: good lines kept (as history), bad ones reported with line numbers."""
    accepted, errors = parse_account_file(data, tenants)
    latest: dict[tuple[str, str], AccountRecord] = {}
    for _, record in accepted:
        latest[(record.tenant, record.account_id)] = record
    repo.store_accounts(list(latest.values()), source=source, now=now)
    return FileResult(accepted=len(accepted), rejected=errors)
