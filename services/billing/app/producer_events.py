"""Other services' events that billing keeps (consumption, ERUs, credits) and the re-rating they start."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from billing.app.rerating import ParcelChange, parcel_changes
from billing.domain.accounts import AccountRecord
from common.errors import PermanentError


def fee_account(fee: Any, accounts: Iterable[AccountRecord]) -> str:
    """The account a stormwater fee (PP-CWU-PEF, the PP-CWU-CREDIT review fee, the
    PP-CWU-APPEAL fee) is charged to: the one it names, else the tenant's one account on
    the fee's parcel open on the day it was charged (billing keeps each account's
    ``parcel_id``; stormwater knows parcels, not accounts).

    No such account, or more than one, is refused (a ``MessageRejected`` with this reason,
    logged and published for staff): a fee is never charged to a guessed account nor
    dropped silently. Nothing sends it again by itself: once the accounts file is put right,
    staff re-drive the event or post the fee as a debit memo."""
    if fee.account_id:
        return str(fee.account_id)
    day = fee.charged_on
    on = sorted(
        a.account_id
        for a in accounts
        if a.parcel_id == fee.parcel_id and a.opened_on <= day and (a.closed_on is None or a.closed_on > day)
    )
    if len(on) == 1:
        return on[0]
    what = f"fee {fee.fee_id} ({fee.rule_id} {fee.amount}, parcel {fee.parcel_id}, {day.isoformat()})"
    if not on:
        raise PermanentError(f"{what}: parcel_id names no account of {fee.tenant} open on {day.isoformat()}")
    raise PermanentError(
        f"{what}: parcel_id names {len(on)} open accounts ({', '.join(on)}); which one is owed"
    )


def keep_producer_event(
    event: Any,
    *,
    projections: Any,
    clock: Any,
    rerate: Callable[[list[ParcelChange], datetime], object] | None = None,
    accounts: Callable[[str], Iterable[AccountRecord]] | None = None,
) -> None:
    """Keep a sampling or stormwater event in billing's projections (by business key); an
    ERU or credit kept for a period already billed is then re-rated (``rerate``, see
    :func:`rerate_parcels`). Kept first: a crash before the re-rating is finished by the
    redelivery, which keeps the same values again and re-rates. A fee is kept for the next
    bill of its account (:func:`fee_account`, ``accounts`` lists a tenant's accounts), by
    its fee id, so a redelivery charges nothing more."""
    from sampling.events import SamplingCostCharged, SamplingCostsCharged, StrengthClassified
    from stormwater.events import CreditChanged, ERUDetermined, ERUsDetermined, FeeCharged, RefundGranted

    now = clock.now()
    if isinstance(event, StrengthClassified):
        projections.keep_strength(event, now)
    elif isinstance(event, SamplingCostCharged):
        projections.keep_charge(event, event.account_id, now)
    elif isinstance(event, SamplingCostsCharged):  # a lab file's chunk: each charge by its own key
        for charge in event.charges:
            projections.keep_charge(charge, charge.account_id, now)
    elif isinstance(event, ERUDetermined):
        projections.keep_eru(event, now)
    elif isinstance(event, ERUsDetermined):  # a chunk of a GIS extract's: each kept as if alone
        projections.keep_erus(event.determinations, now)
    elif isinstance(event, CreditChanged):
        projections.keep_credit(event, now)
    elif isinstance(event, FeeCharged):
        listed = () if event.account_id or accounts is None else accounts(event.tenant)
        projections.keep_charge(event, fee_account(event, listed), now)
    elif isinstance(event, RefundGranted):
        projections.post_refund(event, now)
    else:  # pragma: no cover - the handler only passes the kinds above
        raise PermanentError(f"billing keeps no {type(event).__name__}")
    if rerate is not None:
        changes = parcel_changes(event)
        if changes:
            rerate(changes, now)
