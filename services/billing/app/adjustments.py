"""Adjustments: a staff correction posted to an issued bill's account (an issued bill is never edited)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal

from billing.adapters.items import event_id_for
from billing.adapters.repository import BillingRepo
from billing.domain.bills import Bill
from billing.domain.ledger import Entry
from billing.events import (
    AdjustedFund,
    BillAdjusted,
)
from common.dynamo import to_item
from common.errors import PermanentError
from common.outbox import outbox_item


def post_adjustment(
    tenant: str,
    account_id: str,
    bill_id: str,
    amount: Decimal,
    reason: str,
    approver: str,
    reference: str,
    posted_on: date,
    *,
    repo: BillingRepo,
    now: datetime,
    funds: Mapping[str, Decimal] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """X-IMMUTABLE: a correction is a credit (negative) or debit memo that refers to the
    bill, with its reason and approver; never an edit of the bill. Idempotent by the
    staff's ``reference``: the same again is replayed, other values are refused.

    ``funds`` splits the amount by fund (a re-rating, GR-FUNDS): one entry per fund, all
    under the one reference; without it the whole amount is operation and maintenance.
    ``extra`` is kept on the reference item (what the adjustment stands on). The same
    transaction puts ``BillAdjusted`` in the outbox: the customer is sent the memo."""
    from billing.adapters.items import entry_item
    from common.dynamo import ConditionFailed, put_if_absent, transact

    extra = extra or {}
    bills = {b.bill_id: b for b in repo.bills_of(tenant, account_id)}
    bill = bills.get(bill_id)
    if bill is None:
        raise AdjustmentRefused(f"bill_id: no bill {bill_id!r} on account {account_id}")
    asked: dict[str, Any] = {
        "account_id": account_id,
        "bill_id": bill_id,
        "amount": str(amount),
        "reason": reason,
        "approver": approver,
    }
    if funds is not None:
        if sum(funds.values(), Decimal("0.00")) != amount:
            raise AdjustmentRefused(f"funds: {dict(funds)} do not add up to the amount {amount}")
        asked["funds"] = {f: str(v) for f, v in sorted(funds.items())}
    request = json.dumps(asked, sort_keys=True)
    split = {"om": amount} if funds is None else dict(sorted(funds.items()))
    entries = [
        Entry(
            entry_id=f"ADJ-{reference}" if funds is None else f"ADJ-{reference}-{fund}",
            tenant=tenant,
            account_id=account_id,
            posted_on=posted_on,
            kind="adjustment",
            amount=part,
            fund=fund,
            rule_id="X-IMMUTABLE",
            bill_id=bill_id,
            reference=reference,
            description=f"{reason} (approved by {approver})",
        )
        for fund, part in split.items()
    ]
    ref_item = {
        **extra,
        "pk": f"ADJUSTMENT#{tenant}",
        "sk": reference,
        "request": request,
        "posted_on": posted_on.isoformat(),
        "recorded_at": now.isoformat(),
    }
    rerating = extra.get("kind") == "rerating"

    def volume(name: str) -> Decimal | None:
        return Decimal(str(extra[name])) if rerating and extra.get(name) is not None else None

    event = adjustment_event(
        bill,
        reference=reference,
        posted_on=posted_on,
        split=split,
        reason=reason,
        approver=approver,
        now=now,
        kind="rerating" if rerating else "correction",
        from_volume_gal=volume("from_volume_gal"),
        to_volume_gal=volume("to_volume_gal"),
        source_event_id=extra.get("source_event_id") if rerating else None,
        rule_ids=tuple(extra.get("rule_ids") or ("X-IMMUTABLE",)),
        derivation=extra.get("derivation"),
    )
    result = {
        "entry_id": entries[0].entry_id,
        "bill_id": bill_id,
        "amount": str(amount),
        "posted_on": posted_on.isoformat(),
    }
    try:
        transact(
            repo.client,
            [
                put_if_absent(repo.table, ref_item),
                {"Put": {"TableName": repo.table, "Item": to_item(outbox_item(event, now=now))}},
            ]
            + [
                {"Put": {"TableName": repo.table, "Item": to_item(entry_item(e, now.isoformat()))}}
                for e in entries
            ],
        )
    except ConditionFailed:
        repo.assessment_inputs_changed([f"LEDGER#{tenant}"])  # a retry after a crash marks too
        stored = repo.get(f"ADJUSTMENT#{tenant}", reference) or {}
        if stored.get("request") != request:
            raise AdjustmentRefused(f"reference: {reference!r} was used for another adjustment") from None
        return {**result, "posted_on": stored.get("posted_on"), "replayed": True}
    repo.assessment_inputs_changed([f"LEDGER#{tenant}"])
    return {**result, "replayed": False}


def adjustment_event(
    bill: Bill,
    *,
    reference: str,
    posted_on: date,
    split: Mapping[str, Decimal],
    reason: str,
    approver: str,
    now: datetime,
    kind: Literal["rerating", "correction", "reversal"] = "correction",
    rule_ids: Sequence[str] = ("X-IMMUTABLE",),
    derivation: str | None = None,
    **extra: Any,
) -> BillAdjusted:
    """``BillAdjusted`` for an adjustment of ``bill`` (a staff memo, a re-rating or a late
    charge's reversal): one contract for every adjustment, keyed by its ``reference``."""
    amount = sum(split.values(), Decimal("0.00"))
    return BillAdjusted(
        event_id=event_id_for("BillAdjusted", bill.tenant, reference),
        occurred_at=now,
        tenant=bill.tenant,
        account_id=bill.account_id,
        bill_id=bill.bill_id,
        bill_number=bill.bill_number,
        period_start=bill.period_start,
        period_end=bill.period_end,
        reference=reference,
        posted_on=posted_on,
        amount=amount,
        memo="credit" if amount < 0 else "debit",
        lines=tuple(AdjustedFund(fund=f, amount=v) for f, v in sorted(split.items())),
        reason=reason[:2000],
        approver=approver,
        kind=kind,
        rule_ids=tuple(dict.fromkeys(rule_ids)),
        derivation=derivation[:2000] if derivation else None,
        **extra,
    )


class AdjustmentRefused(PermanentError):
    """An adjustment that names no bill of the account, or reuses a reference."""
