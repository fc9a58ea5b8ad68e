"""What-if runs: a cycle rated without issuing (dry run) and one account's bill previewed."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from decimal import Decimal
from typing import Any

from billing.adapters.repository import BillingRepo
from billing.app.cycles import ChunkRequest, load_chunk, plan_cycle, total_recs_of
from billing.domain.issuing import rate_chunk
from billing.domain.rating import RatingEngine
from billing.domain.terms import terms_of
from common.errors import PermanentError
from common.tariffs import TariffBook


def dry_run(
    tenant: str, period_start: date, *, repo: BillingRepo, book: TariffBook, today: date
) -> dict[str, Any]:
    """A whole cycle rated, nothing written: what would be billed and what held."""
    from common.dates import add_months

    engine = RatingEngine(book)
    months = book.in_force(tenant, period_start).billing_period_months
    period_end = add_months(period_start, months)
    bills: list[dict[str, Any]] = []
    held: list[dict[str, str]] = []
    for req in plan_cycle(tenant, period_start, period_end, today, repo=repo, book=book):
        if req.period_start != period_start:
            continue
        result = rate_chunk(
            load_chunk(req, repo), engine=engine, terms=terms_of(book.in_force(tenant, period_start))
        )
        bills += [
            {"account_id": b.account_id, "bill_id": b.bill_id, "total": str(b.total), "lines": len(b.lines)}
            for b in result.bills
        ]
        held += [{"account_id": h.account_id, "reason": h.reason} for h in result.held]
    return {
        "tenant": tenant,
        "period": {"start": period_start.isoformat(), "end": period_end.isoformat()},
        "dry_run": True,
        "bills": bills,
        "total": str(sum((Decimal(b["total"]) for b in bills), Decimal("0.00"))),
        "held": held,
    }


class PreviewRefused(PermanentError):
    """A preview the account or tariff cannot give; the message starts with the field."""


def preview_bill(
    tenant: str,
    account_id: str,
    period_start: date,
    period_end: date,
    water_gallons: Decimal | None,
    *,
    repo: BillingRepo,
    book: TariffBook,
) -> dict[str, Any]:
    """The bill ``account_id`` would get for the period, rated with the cycle's engine and
    inputs (``rating_input``), nothing written. ``water_gallons`` stands in for the
    period's determined consumption; without it, what billing holds is used."""
    from billing.domain.issuing import Usage, rating_input
    from billing.domain.rating import RatingError
    from billing.domain.rating.output import bill_to_contract

    account = repo.account(tenant, account_id)
    if account is None:
        raise PreviewRefused(f"account_id: no account {account_id!r} at {tenant}")
    if period_end <= period_start:
        raise PreviewRefused(f"period_end: {period_end} is not after period_start {period_start}")
    recs = (
        str(total_recs_of(repo.accounts(tenant), period_start, period_end, book))
        if tenant == "sullivan-sewer"
        else None
    )
    req = ChunkRequest(
        tenant, period_start, period_end, period_end, account_id, account_id, recs, (account_id,)
    )
    inp = load_chunk(req, repo)
    if water_gallons is not None:
        inp = replace(inp, usage={account_id: Usage(volume_gal=water_gallons)})
    rated_input = rating_input(inp, account)
    if isinstance(rated_input, str):
        raise PreviewRefused(f"water_gallons: {rated_input}")
    try:
        rated = RatingEngine(book).rate(rated_input)
    except RatingError as exc:
        raise PreviewRefused(str(exc)) from None
    return {"account_id": account_id, "preview": True, **bill_to_contract(rated)}
