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

STAFF_CHARGE_RULES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "grafton-sewer": {"GR-TOXIC": ("pollutant", "added_cost", "document")},
}
"""The rules of each tenant's ordinance a staff debit memo may charge under, with the
fields of the basis each needs. GR-TOXIC: "added costs caused by toxic pollutants are
charged to the discharger (an approved adjustment line)": the pollutant, the added cost
(the memo's amount) and the document that shows it."""


def charge_rule(
    tenant: str, rule_id: str | None, amount: Decimal, basis: Mapping[str, str] | None
) -> dict[str, str] | None:
    """The basis of a staff debit memo charged under ``rule_id`` (checked), or None when
    the memo names no rule (a plain X-IMMUTABLE correction). Refused (``AdjustmentInvalid``,
    naming the field): a rule not in the tenant's ordinance or not one staff may charge
    under, a rule on a credit memo, a basis missing a field or whose added cost is not the
    amount charged, a basis without a rule."""
    if rule_id is None:
        if basis:
            raise AdjustmentInvalid("basis: is given only with the rule_id it is the basis of")
        return None
    allowed = STAFF_CHARGE_RULES.get(tenant, {})
    needs = allowed.get(rule_id)
    if needs is None:
        listed = ", ".join(sorted(allowed)) or "none"
        raise AdjustmentInvalid(
            f"rule_id: {rule_id!r} is not a rule of {tenant}'s ordinance that staff may charge under "
            f"(allowed: {listed})"
        )
    if amount <= 0:
        raise AdjustmentInvalid(f"rule_id: a charge under {rule_id} is a debit memo (a positive amount)")
    given = {k: str(v).strip() for k, v in (basis or {}).items()}
    for name in needs:
        if not given.get(name):
            raise AdjustmentInvalid(f"basis.{name}: is required for a charge under {rule_id}")
    if "added_cost" in needs:
        try:
            cost = Decimal(given["added_cost"])
        except ArithmeticError:
            raise AdjustmentInvalid("basis.added_cost: must be a decimal amount") from None
        if cost != amount:
            raise AdjustmentInvalid(
                f"basis.added_cost: {given['added_cost']} is not the amount charged ({amount})"
            )
    return given


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
    rule_id: str | None = None,
    basis: Mapping[str, str] | None = None,
    refund: bool = False,
) -> dict[str, Any]:
    """X-IMMUTABLE: a correction is a credit (negative) or debit memo that refers to the
    bill, with its reason and approver; never an edit of the bill. Idempotent by the
    staff's ``reference``: the same again is replayed, other values are refused.

    ``funds`` splits the amount by fund (a re-rating, GR-FUNDS): one entry per fund, all
    under the one reference; without it the whole amount is operation and maintenance.
    ``extra`` is kept on the reference item (what the adjustment stands on). The same
    transaction puts ``BillAdjusted`` in the outbox: the customer is sent the memo.

    ``rule_id`` and ``basis``: a staff debit memo charged under a rule of the ordinance
    (:func:`charge_rule`, GR-TOXIC); the entry cites that rule, the entry's description,
    the reference item and ``BillAdjusted`` carry the basis, and the memo names both.

    ``refund``: the adjustment carries a reconsideration's outcome (PP-CWU-RECONSIDER: "a
    refund is a credit on the account"): each fund's part that lowers the bill is booked as
    a ledger entry of kind ``credit`` (CONTRACTS.md), still on the bill it refers to
    (X-ALLOCATION) and still one adjustment of it in ``BillAdjusted`` and the memo."""
    from billing.adapters.items import entry_item
    from common.dynamo import ConditionFailed, put_if_absent, transact

    extra = extra or {}
    charged = charge_rule(tenant, rule_id, amount, basis)
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
    if charged is not None:
        asked["rule_id"] = rule_id
        asked["basis"] = charged
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
            kind="credit" if refund and part < 0 else "adjustment",
            amount=part,
            fund=fund,
            rule_id=rule_id if charged is not None and rule_id else "X-IMMUTABLE",
            bill_id=bill_id,
            reference=reference,
            description=f"{reason} (approved by {approver})"
            + ("" if charged is None else f"; {rule_id} basis: {basis_text(charged)}"),
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
        **({} if charged is None else {"rule_id": rule_id, "basis": json.dumps(charged, sort_keys=True)}),
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
        rule_ids=tuple(
            extra.get("rule_ids") or ((rule_id,) if charged is not None and rule_id else ("X-IMMUTABLE",))
        ),
        derivation=extra.get("derivation"),
        **({} if charged is None else {"rule_id": rule_id, "basis": charged}),
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


class AdjustmentInvalid(AdjustmentRefused):
    """An adjustment whose rule or basis is not one it may carry (the message names the field)."""


def basis_text(basis: Mapping[str, str]) -> str:
    """A basis as one line for the ledger and the memo: ``pollutant cadmium; added_cost ...``."""
    return "; ".join(f"{k} {v}" for k, v in basis.items())
