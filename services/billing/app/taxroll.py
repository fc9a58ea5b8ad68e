"""The tax roll: the notices of arrears to be certified, recorded one item an account and year."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from billing.adapters.repository import BillingRepo
from billing.domain.accounts import AccountRecord
from billing.domain.assessment import (
    TaxNotice,
)


def tax_notices(repo: BillingRepo, tenant: str, account_id: str, years: Sequence[int]) -> list[TaxNotice]:
    found = repo.get_many([(f"TAXROLL#{tenant}#{y}", account_id) for y in years])
    return [
        TaxNotice(
            int(i["year"]), date.fromisoformat(i["noticed_on"]), tuple(i["entry_ids"]), Decimal(i["arrears"])
        )
        for i in found.values()
    ]


def notice_item(
    tenant: str, account_id: str, account: AccountRecord | None, n: TaxNotice, now: datetime
) -> dict[str, Any]:
    owner = account.owner if account else ("", "")
    return {
        "pk": f"TAXROLL#{tenant}#{n.year}",
        "sk": account_id,
        "year": n.year,
        "noticed_on": n.noticed_on.isoformat(),
        "entry_ids": list(n.entry_ids),
        "arrears": str(n.arrears),
        "parcel_id": account.parcel_id if account else None,
        "owner_name": owner[0],
        "recorded_at": now.isoformat(),
    }
