"""Accounts: an accounts file taken in (CONTRACTS.md "Import files")."""

from __future__ import annotations

from collections.abc import Collection
from datetime import date, datetime

from billing.adapters.repository import BillingRepo
from billing.app.common import FileResult
from billing.domain.accounts import AccountRecord, BillsFromRules, parse_account_file
from common.tariffs import TariffBook


def bills_from_rules(book: TariffBook, today: date) -> BillsFromRules:
    """What a ``bills_from`` is checked against: each tenant's period length (of its latest
    tariff version), its first tariff version's date, and today."""
    return BillsFromRules(
        months={t: book.versions(t)[-1].billing_period_months for t in book.tenants},
        first_tariff={t: book.first_effective(t) for t in book.tenants},
        today=today,
    )


def take_in_account_file(
    data: bytes,
    *,
    source: str,
    repo: BillingRepo,
    tenants: Collection[str],
    now: datetime,
    rules: BillsFromRules | None = None,
) -> FileResult:
    """accounts/ upload: good lines kept (as history), bad ones reported with line numbers."""
    accepted, errors = parse_account_file(data, tenants, rules)
    latest: dict[tuple[str, str], AccountRecord] = {}
    for _, record in accepted:
        latest[(record.tenant, record.account_id)] = record
    repo.store_accounts(list(latest.values()), source=source, now=now)
    return FileResult(accepted=len(accepted), rejected=errors)
