"""Cash receipting at the counter (issue 33): a payment taken by a clerk (cash, a check with
its number, a card with its reference) is posted through the API payment use case
(``payments.post_api_payment``: one ledger entry, PaymentApplied, X-DUE and X-ALLOCATION
as for every payment), idempotent by the client's receipt key within the clerk (the token's
subject); its receipt is kept with a readable reference, and a day's receipts close the
drawer by clerk and tender.

One ``RECEIPTS#<tenant>#<day>`` item per receipt (the drawer's partition: the day is in the
reference, so a receipt is found by its reference alone), written after its payment: a
retry after a crash between them replays the payment and writes the same receipt.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from billing.adapters.repository import BillingRepo
from billing.app.common import local_today
from billing.app.payments import PaymentConflict, idempotency_scope, post_api_payment
from common import csvsafe
from common.errors import PermanentError
from common.tariffs import TariffBook

TENDERS = ("cash", "check", "card")
RECEIPTS_ROUTE = "POST /staff/{tenant}/accounts/{account_id}/receipts"
RECEIPT_COLUMNS = (
    "row",
    "receipt",
    "received_at",
    "clerk",
    "account_id",
    "tender",
    "check_number",
    "card_reference",
    "payment_reference",
    "amount",
    "count",
)


class UnknownAccount(PermanentError):
    """A receipt is taken on an account the utility has (the counter's account page)."""


class NoSuchReceipt(PermanentError):
    """No receipt of that reference."""


def receipt_ref(day: date, payment_reference: str) -> str:
    """``R-20250201-7F3A2C91``: the day it was taken and a digest of its payment, so a retry
    finds the same one and a clerk can read it out on the phone."""
    digest = hashlib.sha256(payment_reference.encode()).hexdigest()[:8].upper()
    return f"R-{day:%Y%m%d}-{digest}"


def day_of_ref(ref: str) -> date | None:
    try:
        return datetime.strptime(ref.split("-")[1], "%Y%m%d").date()
    except (IndexError, ValueError):
        return None


def post_receipt(
    tenant: str,
    account_id: str,
    amount: Decimal,
    *,
    tender: str,
    check_number: str | None,
    card_reference: str | None,
    key: str,
    clerk: str,
    repo: BillingRepo,
    book: TariffBook,
    now: datetime,
) -> dict[str, Any]:
    """Take a payment at the counter and keep its receipt; the same clerk's key again
    replays it (``replayed``), with another body it is refused (PaymentConflict)."""
    account = repo.account(tenant, account_id)
    if account is None:
        raise UnknownAccount(f"account_id: no account {account_id!r} at {tenant}")
    today = local_today(now)
    paid = post_api_payment(
        tenant,
        account_id,
        amount,
        today,
        key,
        caller=clerk,
        repo=repo,
        now=now,
        given_paid_on=False,
        book=book,
        route=RECEIPTS_ROUTE,
        channel="counter",
    )
    day = date.fromisoformat(str(paid["paid_on"]))
    ref = receipt_ref(day, str(paid["reference"]))
    tendered = {"tender": tender, "check_number": check_number or "", "card_reference": card_reference or ""}
    stored = repo.get(f"RECEIPTS#{tenant}#{day.isoformat()}", ref)
    if stored is not None:
        if {k: stored.get(k, "") for k in tendered} != tendered:
            raise PaymentConflict(
                f"{key!r} was used for your earlier receipt {ref} ({stored['tender']} {stored['amount']})"
            )
        return {**_view(stored), "replayed": True}
    balance = sum((e.amount for e in repo.entries_of(tenant, account_id)), Decimal("0.00"))
    item: dict[str, Any] = {
        "pk": f"RECEIPTS#{tenant}#{day.isoformat()}",
        "sk": ref,
        "receipt": ref,
        "tenant": tenant,
        "account_id": account_id,
        "name": account.name,
        "service_address": account.service_address,
        "email": account.email or "",
        "amount": str(amount),
        **tendered,
        "clerk": clerk,
        "day": day.isoformat(),
        "received_at": now.isoformat(),
        "payment_reference": str(paid["reference"]),
        "balance_after": str(balance),
        "scope": idempotency_scope(clerk, RECEIPTS_ROUTE),
    }
    repo.write([item])
    return {**_view(item), "replayed": bool(paid.get("replayed"))}


def _view(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "receipt": str(item["receipt"]),
        "tenant": str(item["tenant"]),
        "account_id": str(item["account_id"]),
        "name": str(item.get("name", "")),
        "service_address": str(item.get("service_address", "")),
        "email": str(item.get("email", "")) or None,
        "amount": str(item["amount"]),
        "tender": str(item["tender"]),
        "check_number": str(item.get("check_number", "")) or None,
        "card_reference": str(item.get("card_reference", "")) or None,
        "clerk": str(item["clerk"]),
        "day": str(item["day"]),
        "received_at": str(item["received_at"]),
        "payment_reference": str(item["payment_reference"]),
        "balance_after": str(item.get("balance_after", "")),
    }


def receipt_of(repo: BillingRepo, tenant: str, ref: str) -> dict[str, Any]:
    day = day_of_ref(ref)
    item = repo.get(f"RECEIPTS#{tenant}#{day.isoformat()}", ref) if day is not None else None
    if item is None:
        raise NoSuchReceipt(f"ref: no receipt {ref!r} at {tenant}")
    return _view(item)


def drawer(repo: BillingRepo, tenant: str, day: date, *, clerk: str | None = None) -> dict[str, Any]:
    """A day's receipts (all clerks', or one's), oldest first, with the totals by clerk and
    tender a deposit slip needs: each total the sum of its receipts (X-MONEY: Decimal)."""
    receipts = [_view(i) for i in repo.query(f"RECEIPTS#{tenant}#{day.isoformat()}")]
    if clerk is not None:
        receipts = [r for r in receipts if r["clerk"] == clerk]
    receipts.sort(key=lambda r: (r["received_at"], r["receipt"]))
    return {
        "tenant": tenant,
        "day": day.isoformat(),
        "clerk": clerk,
        "receipts": receipts,
        "by_tender": _totals(receipts, ("tender",)),
        "by_clerk": _totals(receipts, ("clerk",)),
        "by_clerk_and_tender": _totals(receipts, ("clerk", "tender")),
        "count": len(receipts),
        "total": str(sum((Decimal(r["amount"]) for r in receipts), Decimal("0.00"))),
    }


def _totals(receipts: Sequence[dict[str, Any]], by: tuple[str, ...]) -> list[dict[str, Any]]:
    sums: dict[tuple[str, ...], tuple[int, Decimal]] = {}
    for r in receipts:
        k = tuple(r[b] for b in by)
        n, total = sums.get(k, (0, Decimal("0.00")))
        sums[k] = (n + 1, total + Decimal(r["amount"]))
    return [
        {**dict(zip(by, k, strict=True)), "count": n, "total": str(t)} for k, (n, t) in sorted(sums.items())
    ]


def drawer_csv(close: dict[str, Any]) -> str:
    """The drawer as a spreadsheet-safe CSV (``common.csvsafe``): one ``receipt`` row each,
    then a ``total`` row per clerk and tender, per tender, and the day's."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=RECEIPT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in close["receipts"]:
        writer.writerow(
            csvsafe.record({"row": "receipt", **{c: r.get(c) or "" for c in RECEIPT_COLUMNS[1:-1]}})
        )
    totals = [*close["by_clerk_and_tender"], *({"clerk": "all", **t} for t in close["by_tender"])]
    totals.append({"clerk": "all", "tender": "all", "count": close["count"], "total": close["total"]})
    for t in totals:
        writer.writerow(
            csvsafe.record(
                {
                    "row": "total",
                    "clerk": t["clerk"],
                    "tender": t["tender"],
                    "amount": t["total"],
                    "count": t["count"],
                }
            )
        )
    return out.getvalue()
