"""Re-rating a billed period (X-IMMUTABLE): consumption re-determined, or a parcel's ERU or credit changed."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from billing.adapters.items import bill_key, bill_of
from billing.adapters.repository import BillingRepo
from billing.app.adjustments import AdjustmentRefused, post_adjustment
from billing.app.common import local_today
from billing.app.cycles import total_recs_of
from billing.domain.bills import Bill
from billing.domain.rating import RatingEngine
from common.errors import TransientError
from common.tariffs import TariffBook

if TYPE_CHECKING:  # the consumption projection (and its producers' events) only where it is kept
    from billing.adapters.projections import Redetermined


RERATING_APPROVER = "billing (X-IMMUTABLE re-rating)"
REFUND_CAUSES = frozenset({"reconsideration", "appeal"})
"""Determination causes whose lowering of a billed period is a refund (PP-CWU-RECONSIDER)."""


def rerate_billed(
    redetermined: Sequence[Redetermined],
    *,
    repo: BillingRepo,
    engine: RatingEngine,
    book: TariffBook,
    now: datetime,
) -> list[dict[str, Any]]:
    """Consumption re-determined for periods: where a bill was issued for the period, the
    period is re-rated and the difference booked as one adjustment on the bill (X-IMMUTABLE).

    The adjustments of a bill form a chain (``RERATE-<bill>-001``, ``-002``, ...), each
    keeping the volume it brought the bill to: the next re-rating starts from there, so the
    same re-determination again books nothing (its volume is where the chain stands) and
    another volume books only the further difference. A chain link written concurrently by
    another delivery makes this one retry (TransientError) and start from the new link. Each
    link keeps the determination time of the volume it brought the bill to, and a
    determination older than the chain's latest books nothing: two deliveries racing each
    other end with the bill at the later determination, whichever booked first.
    One BatchGetItem finds the bills of the chunk's re-determinations. A period that cannot
    be rated again (its tariff version changed, its account is gone) books nothing and is
    kept under ``RERATE-REFUSED#<tenant>`` with the reason; the consumption is still kept."""
    from billing.adapters.repository import usage_of
    from billing.domain.rerating import CannotRerate, billed_total_recs, rerate

    keys = {
        bill_key(r.tenant, r.new["account_id"], date.fromisoformat(r.new["period_start"])): r
        for r in redetermined
    }
    bills = repo.get_many(list(keys))
    booked: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    recs: dict[tuple[str, str], Decimal] = {}
    booked_before: set[str] = set()
    for key, item in sorted(bills.items()):
        r = keys[key]
        bill = bill_of(item)
        if bill.period_end.isoformat() != r.new["period_end"]:
            continue  # another period shape (not this bill's period): nothing billed on it
        # The account as the cycle rated it: the version in force when the bill was issued
        # (accounts are kept as history; a later change of meter or class is not this
        # period's). Items kept before the history was ordered fall back to the current one.
        account = repo.account_as_of(
            r.tenant, bill.account_id, datetime.fromisoformat(item["issued_at"])
        ) or repo.account(r.tenant, bill.account_id)
        if account is None:
            refused.append(_refusal(r, bill.bill_id, "account_id: the bill's account is not kept", now))
            continue
        chain = sorted(
            repo.query(f"ADJUSTMENT#{r.tenant}", prefix=f"RERATE-{bill.bill_id}-"), key=lambda i: i["sk"]
        )
        # A later determination already re-rated the bill (a delivery racing this one booked
        # its link first): this one is stale and books nothing; its kept item's conditional
        # write fails too, and the retry finds the later determination kept.
        determined = r.new.get("determined_at")
        links_at = [datetime.fromisoformat(str(i["determined_at"])) for i in chain if i.get("determined_at")]
        if determined and links_at and datetime.fromisoformat(determined) < max(links_at):
            continue
        billed = usage_of(r.old)
        if chain:
            last = chain[-1]
            billed = replace(
                billed,
                volume_gal=Decimal(str(last["to_volume_gal"])),
                winter_average_gal=Decimal(str(last["to_winter_average_gal"]))
                if last.get("to_winter_average_gal") is not None
                else None,
            )
        new = usage_of(r.new)
        total_recs = None
        if r.tenant == "sullivan-sewer":
            total_recs = billed_total_recs(bill)
            if total_recs is None:  # a bill without its SU-REC derivation: the accounts then
                period = (bill.period_start.isoformat(), item["issued_at"])
                if period not in recs:
                    recs[period] = total_recs_as_of(
                        repo, r.tenant, datetime.fromisoformat(item["issued_at"]), bill, book
                    )
                total_recs = recs[period]
        strength = repo.strength_between(
            r.tenant, bill.account_id, bill.account_id, bill.period_start, bill.period_end
        ).get(bill.account_id)
        try:
            rerated = rerate(
                bill,
                account,
                billed=billed,
                new=new,
                sequence=len(chain) + 1,
                engine=engine,
                strength=strength,
                total_recs=total_recs,
            )
        except CannotRerate as exc:
            refused.append(_refusal(r, bill.bill_id, str(exc), now))
            continue
        if rerated is None:
            if chain and chain[-1].get("source_event_id") == r.new.get("source_event_id"):
                booked_before.add(r.tenant)
            continue
        try:
            booked.append(
                post_adjustment(
                    r.tenant,
                    bill.account_id,
                    bill.bill_id,
                    rerated.amount,
                    rerated.reason,
                    RERATING_APPROVER,
                    rerated.reference,
                    local_today(now),
                    repo=repo,
                    now=now,
                    funds=rerated.funds,
                    extra={
                        "kind": "rerating",
                        "account_id": bill.account_id,
                        "from_volume_gal": str(rerated.from_volume_gal),
                        "to_volume_gal": str(rerated.to_volume_gal),
                        "to_winter_average_gal": None
                        if new.winter_average_gal is None
                        else str(new.winter_average_gal),
                        "source_event_id": rerated.source_event_id,
                        "determined_at": determined,
                        "tariff_versions": list(rerated.tariff_versions),
                        "total_recs": None if total_recs is None else str(total_recs),
                        "rule_lines": json.dumps([[r, str(b), str(a)] for r, b, a in rerated.lines]),
                    },
                )
            )
        except AdjustmentRefused:  # another delivery wrote this link first: start again from it
            raise TransientError(
                f"re-rating of bill {bill.bill_id}: {rerated.reference} was just written"
            ) from None
    repo.write(refused)
    _mark_again(repo, booked_before)
    return booked


def _mark_again(repo: BillingRepo, tenants: set[str]) -> None:
    """Mark again, for the daily assessment, the tenants of links a delivery before this one
    booked: that delivery may have died between its transaction and its mark (the mark is
    its own write, after the transaction), and this delivery, finding the bill already
    standing at its values, books nothing that would mark it. Marking twice is harmless."""
    if tenants:
        repo.assessment_inputs_changed([f"LEDGER#{t}" for t in sorted(tenants)])


def _refusal(r: Redetermined, bill_id: str, reason: str, now: datetime) -> dict[str, Any]:
    """A billed period that cannot be rated again is kept for staff with the reason (the
    consumption itself is still kept: the rest of metering's chunk is not lost for it)."""
    return {
        "pk": f"RERATE-REFUSED#{r.tenant}",
        "sk": f"{bill_id}#{r.new['source_event_id']}",
        "bill_id": bill_id,
        "account_id": r.new["account_id"],
        "from_volume_gal": r.old.get("volume_gal"),
        "to_volume_gal": r.new["volume_gal"],
        "source_event_id": r.new["source_event_id"],
        "reason": reason[:1000],
        "rule_id": "X-IMMUTABLE",
        "recorded_at": now.isoformat(),
    }


def total_recs_as_of(repo: BillingRepo, tenant: str, at: datetime, bill: Bill, book: TariffBook) -> Decimal:
    """SU-REC's total REC units as the cycle that issued ``bill`` counted them: every
    account's version recorded by ``at`` (the bill's issue; accounts are kept as history,
    one item per change), active in the bill's period. One history query per account: only
    for a bill that does not carry the figure in its SU-REC line (``billed_total_recs``)."""
    then = [repo.account_as_of(tenant, a.account_id, at) for a in repo.accounts(tenant)]
    return total_recs_of([a for a in then if a is not None], bill.period_start, bill.period_end, book)


@dataclass(frozen=True)
class ParcelChange:
    """An ERU determination or a credit change kept for a parcel, from ``effective_from``."""

    tenant: str
    parcel_id: str
    effective_from: date
    source_event_id: str
    what: str  # as the memo names it: "ERU 2.00 from 2026-09-13 (manual_override OV-1, ...)"
    cause: str = ""  # the determination's cause ("reconsideration", "appeal", ...); "" for a credit
    occurred_at: datetime | None = None  # when stormwater decided it (the event's time)

    @property
    def reconsidered(self) -> bool:
        """Is this change the outcome of a reconsideration (PP-CWU-RECONSIDER) or of its
        appeal (PP-CWU-APPEAL)? What it takes off a billed period is then a refund, which
        the rule books as "a credit on the account" (CONTRACTS.md: ledger kind ``credit``)."""
        return self.cause in REFUND_CAUSES


def parcel_changes(event: Any) -> list[ParcelChange]:
    """The parcel changes a stormwater event brings (none for other events)."""
    from stormwater.events import CreditChanged, ERUDetermined, ERUsDetermined

    if isinstance(event, ERUsDetermined):
        return [c for d in event.determinations for c in parcel_changes(d)]
    if isinstance(event, ERUDetermined):
        return [
            ParcelChange(
                event.tenant,
                event.parcel_id,
                event.effective_from,
                event.event_id,
                f"ERU of parcel {event.parcel_id} determined {event.eru} from {event.effective_from} "
                f"({event.cause} {event.cause_ref}, determination {event.sequence})",
                event.cause,
                event.occurred_at,
            )
        ]
    if isinstance(event, CreditChanged) and event.status in ("approved", "revoked"):
        return [
            ParcelChange(
                event.tenant,
                event.parcel_id,
                event.effective_from,
                event.event_id,
                f"{event.rule_id} credit {event.credit_id} of parcel {event.parcel_id} {event.status} "
                f"({event.credit_percent}%) from {event.effective_from}",
                "",
                event.occurred_at,
            )
        ]
    return []


def rerate_parcels(
    changes: Sequence[ParcelChange],
    *,
    repo: BillingRepo,
    engine: RatingEngine,
    book: TariffBook,
    now: datetime,
) -> list[dict[str, Any]]:
    """X-IMMUTABLE, X-PERIOD: an ERU or credit kept for a parcel from a day inside or before
    a period already billed (a back-dated override, a reconsideration or appeal outcome, a
    credit approved or revoked with an effective date in a billed period, or an event that
    simply arrived after the cycle) re-rates each such bill rated on the parcel (the bill's
    own parcel: an account moved to another parcel since is found through the parcels its
    versions were recorded on, ``PARCEL-ACCOUNTS#``; versions recorded before those items
    existed are found only while the account is still on the parcel): the
    period rated with what is kept now against what the bill stands at, the difference one
    adjustment on the bill in the same chain as consumption re-ratings
    (``RERATE-<bill>-<nnn>``, :func:`post_adjustment`, published as ``BillAdjusted``).

    A change effective today or later touches no billed period (a cycle bills periods that
    have ended), so an extract's ordinary determinations cost nothing here. The same event
    again finds the bill standing at its values and books nothing; a concurrent link makes
    this delivery retry from it (TransientError). A bill that cannot be rated again (its
    tariff version changed) is refused and listed for staff (``RERATE-REFUSED#<tenant>``).

    Reconsideration (PP-CWU-RECONSIDER): the corrected ERU comes as a determination
    effective from the start of the reconsidered bill's period, so this re-rates that bill
    and every later one billed on it, each wholly at the corrected value (no proration at
    the decision date); that re-rating is the correction (stormwater publishes no
    ``RefundGranted`` for it, so no period is corrected twice)."""
    from billing.domain.accounts import STORMWATER
    from billing.domain.rerating import CannotRerate, rerate_parcel, standing

    today = local_today(now)
    late = [c for c in changes if c.tenant == STORMWATER and c.effective_from < today]
    if not late:
        return []
    by_parcel: dict[str, list[ParcelChange]] = {}
    for c in late:
        by_parcel.setdefault(c.parcel_id, []).append(c)
    booked: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    booked_before: set[str] = set()
    # The accounts that are, or ever were, on a changed parcel; of their bills, those rated on
    # a changed parcel (the bill's own parcel: an account moved since is still re-rated there).
    accounts = {a.account_id: a for a in repo.accounts(STORMWATER)}
    candidates = {a for a, account in accounts.items() if account.parcel_id in by_parcel}
    for parcel in by_parcel:
        candidates |= repo.accounts_ever_on(STORMWATER, parcel) & accounts.keys()
    for account in (accounts[a] for a in sorted(candidates)):
        items = repo.query(f"BILLS#{STORMWATER}", prefix=f"{account.account_id}#")
        for item in sorted(items, key=lambda i: i["sk"]):
            bill = bill_of(item)
            issued_at = datetime.fromisoformat(item["issued_at"])
            # the version in force at issue, which the period is rated with; read here only for
            # a bill that does not name its parcel, else once the bill is found to be touched
            at_issue = None if bill.parcel_id else repo.account_as_of(STORMWATER, bill.account_id, issued_at)
            parcel_id = bill.parcel_id or (at_issue or account).parcel_id or ""
            mine = by_parcel.get(parcel_id)
            if not mine or bill.period_end <= min(c.effective_from for c in mine):
                continue
            if bill.parcel_id:
                at_issue = repo.account_as_of(STORMWATER, bill.account_id, issued_at)
            rated_on = at_issue or account
            relevant = [c for c in mine if c.effective_from < bill.period_end]
            eru = repo.erus(STORMWATER, [parcel_id], bill.period_end, start=bill.period_start).get(parcel_id)
            if eru is None:
                continue
            chain = sorted(
                repo.query(f"ADJUSTMENT#{STORMWATER}", prefix=f"RERATE-{bill.bill_id}-"),
                key=lambda i: i["sk"],
            )
            try:
                rerated = rerate_parcel(
                    bill,
                    rated_on,
                    eru=eru,
                    stands_at=_stands_at(bill, chain, standing),
                    sequence=len(chain) + 1,
                    engine=engine,
                    what="; ".join(c.what for c in relevant),
                    source_event_id=relevant[-1].source_event_id,
                )
            except CannotRerate as exc:
                refused.append(
                    {
                        "pk": f"RERATE-REFUSED#{STORMWATER}",
                        "sk": f"{bill.bill_id}#{relevant[-1].source_event_id}",
                        "bill_id": bill.bill_id,
                        "account_id": bill.account_id,
                        "source_event_id": relevant[-1].source_event_id,
                        "reason": str(exc)[:1000],
                        "rule_id": "X-IMMUTABLE",
                        "recorded_at": now.isoformat(),
                    }
                )
                continue
            if rerated is None:
                if chain and chain[-1].get("source_event_id") == relevant[-1].source_event_id:
                    booked_before.add(STORMWATER)
                continue
            try:
                booked.append(
                    post_adjustment(
                        STORMWATER,
                        bill.account_id,
                        bill.bill_id,
                        rerated.amount,
                        rerated.reason,
                        RERATING_APPROVER,
                        rerated.reference,
                        _booked_on(relevant, today),
                        repo=repo,
                        now=now,
                        funds=rerated.funds,
                        refund=any(c.reconsidered for c in relevant),
                        extra={
                            "kind": "rerating",
                            "account_id": bill.account_id,
                            "source_event_id": rerated.source_event_id,
                            "tariff_versions": list(rerated.tariff_versions),
                            "standing": json.dumps({f: str(v) for f, v in rerated.standing.items()}),
                            "standing_rules": json.dumps(
                                {r: str(v) for r, v in rerated.standing_rules.items()}
                            ),
                            "rule_ids": list(rerated.rule_ids),
                            "derivation": rerated.derivation[:2000],
                        },
                    )
                )
            except AdjustmentRefused:  # another delivery wrote this link first: start again from it
                raise TransientError(
                    f"re-rating of bill {bill.bill_id}: {rerated.reference} was just written"
                ) from None
    repo.write(refused)
    _mark_again(repo, booked_before)
    return booked


def _booked_on(changes: Sequence[ParcelChange], today: date) -> date:
    """The day a parcel change's re-rating is posted: the (local) day stormwater decided the
    latest of the changes, not the day this delivery ran, so a redelivery after a crash
    books the same entry on the same day as a delivery without it; ``today`` for a change
    that carries no time."""
    times = [c.occurred_at for c in changes if c.occurred_at is not None]
    return min(local_today(max(times)), today) if times else today


def _stands_at(
    bill: Bill,
    chain: Sequence[dict[str, Any]],
    standing: Callable[[Bill], tuple[dict[str, Decimal], dict[str, Decimal]]],
) -> tuple[dict[str, Decimal], dict[str, Decimal]]:
    """What the bill stands at: the last re-rating's figures where it kept them, else the
    bill's rated lines plus each re-rating's amounts by fund (its rules as billed)."""
    if chain and chain[-1].get("standing"):
        last = chain[-1]
        return (
            {f: Decimal(v) for f, v in json.loads(last["standing"]).items()},
            {r: Decimal(v) for r, v in json.loads(last.get("standing_rules") or "{}").items()},
        )
    funds, rules = standing(bill)
    for link in chain:
        for fund, amount in (
            json.loads(link["request"]).get("funds") or {"om": json.loads(link["request"])["amount"]}
        ).items():
            funds[fund] = funds.get(fund, Decimal("0.00")) + Decimal(amount)
    return funds, rules
