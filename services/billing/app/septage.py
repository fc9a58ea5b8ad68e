"""Septage haulers: permits registered and disposals charged (issue 14)."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from typing import Any

from billing.adapters.repository import BillingRepo
from billing.domain.ledger import Entry
from billing.domain.septage import Disposal, Permit
from common.dynamo import to_item
from common.errors import PermanentError
from common.tariffs import TariffBook


class SeptageConflict(PermanentError):
    """A permit id or disposal reference already used for other values."""


def register_permit(permit: Permit, *, repo: BillingRepo, now: datetime) -> dict[str, Any]:
    """GR-SEPTAGE-PERMIT: keep a checked permit, idempotent by its permit id (the same
    permit again is replayed; other values under the id are refused)."""
    from billing.domain.septage import TENANT, check_permit

    values = check_permit(permit).to_json()
    request = json.dumps(values, sort_keys=True)
    item = {
        "pk": f"SEPTAGE_PERMIT#{TENANT}",
        "sk": permit.permit_id,
        "request": request,
        "recorded_at": now.isoformat(),
    }
    if repo.put_new(item):
        return {**values, "replayed": False}
    stored = repo.get(f"SEPTAGE_PERMIT#{TENANT}", permit.permit_id) or {}
    if stored.get("request") != request:
        raise SeptageConflict(f"permit_id: {permit.permit_id!r} is registered with other values")
    return {**values, "replayed": True}


def septage_permit(permit_id: str, *, repo: BillingRepo) -> Permit | None:
    from billing.domain.septage import TENANT, permit_of

    stored = repo.get(f"SEPTAGE_PERMIT#{TENANT}", permit_id)
    return None if stored is None else permit_of(json.loads(stored["request"]))


def record_disposal(
    disposal: Disposal, *, repo: BillingRepo, book: TariffBook, now: datetime
) -> dict[str, Any]:
    """GR-SEPTAGE-CHARGE: a disposal by a permitted unit is charged at the tariff's septage
    rate in force on the disposal date; the disposal item keeps the line with its
    derivation and, when the permit names the hauler's account, the charge is posted to
    that account's ledger in the same transaction. Idempotent by ``reference``."""
    from billing.adapters.items import entry_item
    from billing.domain.septage import CHARGE_RULE, TENANT, charge_disposal
    from common.dynamo import ConditionFailed, put_if_absent, transact

    tariff = book.in_force(TENANT, disposal.disposed_on)
    permit = septage_permit(disposal.permit_id, repo=repo)
    line = charge_disposal(disposal, permit, tariff)  # type: ignore[arg-type]
    account_id = permit.account_id if permit is not None else None
    asked = {
        "permit_id": disposal.permit_id,
        "licence_number": disposal.licence_number,
        "gallons": str(disposal.gallons),
        "disposed_on": disposal.disposed_on.isoformat(),
    }
    request = json.dumps(asked, sort_keys=True)
    result = {**asked, "reference": disposal.reference, "account_id": account_id, "line": line}
    item = {
        "pk": f"SEPTAGE_DISPOSAL#{TENANT}",
        "sk": disposal.reference,
        "request": request,
        "line": json.dumps(line, sort_keys=True),
        "account_id": account_id,
        "recorded_at": now.isoformat(),
    }
    actions = [put_if_absent(repo.table, item)]
    if account_id is not None:
        entry = Entry(
            entry_id=f"SEPTAGE-{disposal.reference}",
            tenant=TENANT,
            account_id=account_id,
            posted_on=disposal.disposed_on,
            kind="charge",
            amount=Decimal(line["amount"]),
            fund="om",
            rule_id=CHARGE_RULE,
            reference=disposal.reference,
            description=(
                f"Septage disposal {line['quantity']} kgal x {line['rate']} "
                f"(unit {disposal.licence_number}, permit {disposal.permit_id})"
            ),
        )
        actions.append(
            {"Put": {"TableName": repo.table, "Item": to_item(entry_item(entry, now.isoformat()))}}
        )
    try:
        transact(repo.client, actions)
    except ConditionFailed:
        repo.assessment_inputs_changed([f"LEDGER#{TENANT}"] if account_id is not None else [])
        stored = repo.get(f"SEPTAGE_DISPOSAL#{TENANT}", disposal.reference) or {}
        if stored.get("request") != request:
            raise SeptageConflict(
                f"reference: {disposal.reference!r} was used for another disposal"
            ) from None
        return {**result, "replayed": True}
    repo.assessment_inputs_changed([f"LEDGER#{TENANT}"] if account_id is not None else [])
    return {**result, "replayed": False}
