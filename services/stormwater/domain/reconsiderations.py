"""Reconsideration (PP-CWU-RECONSIDER) and appeal (PP-CWU-APPEAL) of stormwater charges.

Bills and payments are billing's; stormwater keeps what it needs of them (a projection of
``BillIssued`` and ``PaymentApplied``: bill id, account, parcel, bill and due dates, total,
period, date paid).

- Window: a written request filed on or before the bill's due date while it is unpaid, or
  within 30 days of its payment (on or before paid_on + 30 days). (Interpretation: "before
  the due date" includes the due date itself, the last day a payment is on time.) A later
  request is refused naming the dates.
- The request states its grounds and the amount the customer asserts; both are recorded.
- The Engineer's decision either denies the grounds or states the parcel data found
  (areas, use). The ERU found is compared with the ERU the bill was based on; unless the
  difference is greater than 10% of the billed ERU, no change is made. A change takes
  effect from the decision date (the parcel's ERU is recomputed from then on) and the
  overbilled part of the bill is refunded as a credit on the account:
  (billed ERU - found ERU) x ERU rate x months billed x (1 - credit percent in force),
  rounded half-up once. An underbilling found on reconsideration is not charged back.
- An appeal to the Village Board is filed within 30 days of the decision (on or before
  decided_on + 30 days), with the appeal fee. The hearing is recorded with the votes; a
  majority of the votes cast is needed to reverse (a tie upholds the decision).
- A reversal changes the ERU. The ordinance gives the Board "all the powers of the officer
  from whom the appeal is taken" and lets it "make such ... determination as ought to be
  made", so a reversal states the parcel data the Board finds, as the Engineer's decision
  does; the ERU determined from it by the same code is the ERU the Board set, recorded on
  the appeal and on ``AppealDecided``. (Interpretation: RULES.md says nothing of when; the
  Engineer's change applies from his decision date, so the Board's applies from its
  decision, the hearing date.) An upheld appeal changes nothing and states no data.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Literal

from common.dates import add_months
from common.errors import FieldError
from common.money import round_line
from common.values import AREA_SQFT, NotADecimal, to_decimal
from stormwater.domain.determinations import OVERRIDABLE, ParcelData, determine
from stormwater.domain.parcels import TariffView
from stormwater.events import AppealDecided, FeeCharged, ReconsiderationDecided

WINDOW_AFTER_PAYMENT_DAYS = 30
APPEAL_DAYS = 30
NO_CHANGE_FRACTION = Decimal("0.10")
ZERO = Decimal(0)
MAX_TEXT = 4_000


class ReconsiderationRefused(FieldError):
    """A request, decision or appeal the rules do not allow (names the field)."""


class BillNotKnown(ReconsiderationRefused):
    """The request names no stormwater bill of this parcel (HTTP 404: it may be another's)."""


class ReconsiderationConflict(ReconsiderationRefused):
    """Not in a state that allows the action (HTTP 409)."""


@dataclass(frozen=True)
class BillView:
    """What stormwater keeps of a bill (billing's ``BillIssued`` / ``PaymentApplied``)."""

    tenant: str
    bill_id: str
    account_id: str
    parcel_id: str
    bill_date: date
    due_date: date
    total: Decimal
    period_start: date | None = None
    period_end: date | None = None
    paid_on: date | None = None

    @property
    def months(self) -> int:
        if self.period_start is None or self.period_end is None:
            return 1  # PP-CWU-BILLING: monthly
        months = 0
        while add_months(self.period_start, months + 1) <= self.period_end:
            months += 1
        return max(months, 1)


def filing_window_closed(bill: BillView, filed_on: date) -> str | None:
    """The reason a request filed on ``filed_on`` is late, or None when it is in time."""
    if filed_on <= bill.due_date:
        return None
    if bill.paid_on is not None:
        last = bill.paid_on + timedelta(days=WINDOW_AFTER_PAYMENT_DAYS)
        if filed_on <= last:
            return None
        return (
            f"filed {filed_on.isoformat()}: bill {bill.bill_id} was paid on {bill.paid_on.isoformat()}, so a "
            f"request had to be filed by {last.isoformat()} (within {WINDOW_AFTER_PAYMENT_DAYS} days of "
            f"payment; PP-CWU-RECONSIDER)"
        )
    return (
        f"filed {filed_on.isoformat()}: bill {bill.bill_id} was due {bill.due_date.isoformat()} and is unpaid, so "
        f"a request had to be filed by the due date (PP-CWU-RECONSIDER)"
    )


ReconStatus = Literal["filed", "denied", "no_change", "changed"]


@dataclass(frozen=True)
class Reconsideration:
    tenant: str
    reconsideration_id: str
    parcel_id: str
    account_id: str
    bill_id: str
    owner_name: str
    filed_on: date
    grounds: str
    asserted_amount: Decimal
    billed_total: Decimal
    billed_eru: Decimal
    status: ReconStatus = "filed"
    version: int = 1
    decided_on: date | None = None
    decision_reason: str = ""
    found: dict[str, str] | None = None
    eru_found: Decimal | None = None
    difference_percent: Decimal | None = None
    refund_amount: Decimal = ZERO
    appeal_by: date | None = None


def reconsideration_id_for(tenant: str, bill_id: str, filed_on: date) -> str:
    return "RC-" + hashlib.sha256(f"{tenant}|{bill_id}|{filed_on.isoformat()}".encode()).hexdigest()[:12]


def file_reconsideration(
    bill: BillView | None,
    *,
    tenant: str,
    parcel_id: str,
    bill_id: str,
    owner_name: str,
    billed_eru: Decimal,
    grounds: str,
    asserted_amount: Decimal,
    today: date,
) -> Reconsideration:
    if bill is None or bill.parcel_id != parcel_id or bill.tenant != tenant:
        raise BillNotKnown("bill_id", f"no stormwater bill {bill_id} of parcel {parcel_id} is known")
    if not grounds.strip():
        raise ReconsiderationRefused("grounds", "a request states its grounds (PP-CWU-RECONSIDER)")
    if len(grounds) > MAX_TEXT:
        raise ReconsiderationRefused("grounds", f"longer than {MAX_TEXT} characters")
    if asserted_amount < 0:
        raise ReconsiderationRefused("asserted_amount", f"must not be negative, got {asserted_amount}")
    late = filing_window_closed(bill, today)
    if late is not None:
        raise ReconsiderationRefused("filed_on", late)
    return Reconsideration(
        tenant=tenant,
        reconsideration_id=reconsideration_id_for(tenant, bill_id, today),
        parcel_id=parcel_id,
        account_id=bill.account_id,
        bill_id=bill_id,
        owner_name=owner_name,
        filed_on=today,
        grounds=grounds,
        asserted_amount=asserted_amount,
        billed_total=bill.total,
        billed_eru=billed_eru,
    )


@dataclass(frozen=True)
class Decision:
    """The decision and, for a change, the data found and the day it holds from.

    (interpretation, PP-CWU-RECONSIDER) A change corrects the parcel's value from the start
    of the reconsidered bill's period (``effective_from``): the new determination carries
    that date, so billing re-rates that bill and every later one on it (X-IMMUTABLE), and
    no later period is prorated at the decision date. That re-rating is the correction on
    the account (a credit memo when the value went down): no separate refund is published,
    so the bill is never corrected twice; ``refund_amount`` is what the letter states.
    """

    reconsideration: Reconsideration
    decided: ReconsiderationDecided
    found_data: ParcelData | None  # the data found (a change), to determine from effective_from
    effective_from: date | None = None


def _found_data(current: ParcelData, found: dict[str, str]) -> ParcelData:
    unknown = set(found) - set(OVERRIDABLE)
    if unknown:
        raise ReconsiderationRefused(
            f"found.{sorted(unknown)[0]}", "is not a parcel field the Engineer can find"
        )
    values: dict[str, object] = {}
    for name, value in found.items():
        if name == "use":
            values[name] = value
            continue
        try:
            values[name] = to_decimal(value, maximum=AREA_SQFT)
        except NotADecimal as exc:
            raise ReconsiderationRefused(f"found.{name}", str(exc)) from None
    return replace(current, data_source="reconsideration", **values)  # type: ignore[arg-type]


def decide(
    recon: Reconsideration,
    *,
    outcome: Literal["deny", "decide"],
    reason: str,
    found: dict[str, str] | None,
    current: ParcelData,
    tariff: TariffView,
    bill: BillView,
    credit_percent: Decimal,
    now: datetime,
) -> Decision:
    """The Engineer's decision (PP-CWU-RECONSIDER); a change only above 10%."""
    if recon.status != "filed":
        raise ReconsiderationConflict(
            "status", f"{recon.reconsideration_id} was already decided ({recon.status})"
        )
    if not reason.strip():
        raise ReconsiderationRefused("reason", "a decision states its reason")
    today = now.date()
    appeal_by = today + timedelta(days=APPEAL_DAYS)
    found_data: ParcelData | None = None
    if outcome == "deny":
        status: ReconStatus = "denied"
        eru_found = recon.billed_eru
        difference = ZERO
        amount = ZERO
    else:
        if not found:
            raise ReconsiderationRefused("found", "a decision on the merits states the parcel data found")
        data = _found_data(current, found)
        eru_found = _eru_of(data, tariff)
        billed = recon.billed_eru
        delta = abs(eru_found - billed)
        difference = (delta / billed * 100) if billed else (Decimal(100) if delta else ZERO)
        # PP-CWU-RECONSIDER: "unless the difference is greater than 10%, no change is made"
        if billed and delta <= billed * NO_CHANGE_FRACTION:
            status, amount = "no_change", ZERO
        else:
            status = "changed"
            found_data = data
            over = billed - eru_found
            keep = 1 - credit_percent / 100
            # the overbilled months less the credit: what billing's re-rating of the bill credits
            amount = round_line(over * tariff.eru_rate * bill.months * keep) if over > 0 else ZERO
    decided_recon = replace(
        recon,
        status=status,
        version=recon.version + 1,
        decided_on=today,
        decision_reason=reason,
        found=found,
        eru_found=eru_found,
        difference_percent=difference.quantize(Decimal("0.01")),
        refund_amount=amount,
        appeal_by=appeal_by,
    )
    event = ReconsiderationDecided(
        occurred_at=now,
        tenant=recon.tenant,
        reconsideration_id=recon.reconsideration_id,
        parcel_id=recon.parcel_id,
        account_id=recon.account_id,
        bill_id=recon.bill_id,
        owner_name=recon.owner_name,
        decided_on=today,
        outcome=status,
        reason=reason,
        eru_before=recon.billed_eru,
        eru_found=eru_found,
        refund_amount=amount,
        appeal_by=appeal_by,
    )
    return Decision(
        reconsideration=decided_recon,
        decided=event,
        found_data=found_data,
        effective_from=None if found_data is None else bill.period_start or bill.bill_date,
    )


AppealStatus = Literal["filed", "reversed", "upheld"]


def _eru_of(data: ParcelData, tariff: TariffView) -> Decimal:
    try:
        return determine(data, tariff.settings, tariff.version_id).eru
    except FieldError as exc:
        raise ReconsiderationRefused(exc.field.replace("parcel.", "found."), exc.message) from None


@dataclass(frozen=True)
class Appeal:
    tenant: str
    appeal_id: str
    reconsideration_id: str
    parcel_id: str
    owner_name: str
    filed_on: date
    grounds: str
    fee: Decimal
    status: AppealStatus = "filed"
    version: int = 1
    hearing_date: date | None = None
    members_present: int | None = None
    votes_to_reverse: int | None = None
    votes_to_uphold: int | None = None
    minutes_ref: str = ""
    found: dict[str, str] | None = None
    eru_set: Decimal | None = None
    effective_from: date | None = None


def file_appeal(
    recon: Reconsideration, *, grounds: str, tariff: TariffView, now: datetime
) -> tuple[Appeal, FeeCharged]:
    """PP-CWU-APPEAL: within 30 days of the decision, with the fee."""
    if recon.decided_on is None:
        raise ReconsiderationConflict("reconsideration_id", f"{recon.reconsideration_id} is not decided yet")
    today = now.date()
    last = recon.decided_on + timedelta(days=APPEAL_DAYS)
    if today > last:
        raise ReconsiderationRefused(
            "filed_on",
            f"filed {today.isoformat()}: the decision of {recon.decided_on.isoformat()} could be appealed until "
            f"{last.isoformat()} (within {APPEAL_DAYS} days; PP-CWU-APPEAL)",
        )
    if not grounds.strip():
        raise ReconsiderationRefused("grounds", "an appeal states its grounds")
    appeal_id = "AP-" + hashlib.sha256(f"{recon.reconsideration_id}|{today}".encode()).hexdigest()[:12]
    appeal = Appeal(
        tenant=recon.tenant,
        appeal_id=appeal_id,
        reconsideration_id=recon.reconsideration_id,
        parcel_id=recon.parcel_id,
        owner_name=recon.owner_name,
        filed_on=today,
        grounds=grounds[:MAX_TEXT],
        fee=tariff.appeal_fee,
    )
    fee = FeeCharged(
        occurred_at=now,
        tenant=recon.tenant,
        fee_id=f"APF-{appeal_id}",
        parcel_id=recon.parcel_id,
        account_id=recon.account_id,
        kind="appeal",
        rule_id="PP-CWU-APPEAL",
        amount=tariff.appeal_fee,
        charged_on=today,
        tariff_version=tariff.version_id,
        description="Appeal to the Village Board of a stormwater reconsideration decision",
        details={"appeal_id": appeal_id, "reconsideration_id": recon.reconsideration_id},
    )
    return appeal, fee


@dataclass(frozen=True)
class Hearing:
    appeal: Appeal
    decided: AppealDecided
    found_data: ParcelData | None  # a reversal: the data to determine from the hearing date on


def record_hearing(
    appeal: Appeal,
    *,
    hearing_date: date,
    members_present: int,
    votes_to_reverse: int,
    votes_to_uphold: int,
    minutes_ref: str,
    found: dict[str, str] | None,
    current: ParcelData,
    tariff: TariffView,
    now: datetime,
) -> Hearing:
    """The Board's hearing and vote: reversed only by a majority of the votes cast; a
    reversal states the data the Board finds and sets the ERU from the hearing date."""
    if appeal.status != "filed":
        raise ReconsiderationConflict(
            "status", f"appeal {appeal.appeal_id} was already heard ({appeal.status})"
        )
    if min(members_present, votes_to_reverse, votes_to_uphold) < 0:
        raise ReconsiderationRefused("votes_to_reverse", "counts must not be negative")
    if votes_to_reverse + votes_to_uphold > members_present:
        raise ReconsiderationRefused(
            "members_present",
            f"{votes_to_reverse + votes_to_uphold} votes from {members_present} members present",
        )
    if votes_to_reverse + votes_to_uphold == 0:
        raise ReconsiderationRefused("votes_to_reverse", "the hearing record needs the Board's vote")
    if hearing_date < appeal.filed_on:
        raise ReconsiderationRefused("hearing_date", "the hearing cannot precede the appeal")
    if hearing_date > now.date():
        raise ReconsiderationRefused(
            "hearing_date", f"{hearing_date.isoformat()} is after today: a hearing is recorded once held"
        )
    reversed_ = 2 * votes_to_reverse > votes_to_reverse + votes_to_uphold
    status: AppealStatus = "reversed" if reversed_ else "upheld"
    found_data: ParcelData | None = None
    eru_set: Decimal | None = None
    if reversed_:
        if not found:
            raise ReconsiderationRefused(
                "found",
                "a reversal states the parcel data the Board finds; the ERU is determined from it "
                "(PP-CWU-APPEAL: the Board makes the determination that ought to be made)",
            )
        found_data = replace(_found_data(current, found), data_source="appeal")
        eru_set = _eru_of(found_data, tariff)
    elif found:
        raise ReconsiderationRefused("found", "an upheld decision changes no parcel data")
    effective_from = hearing_date if reversed_ else None
    heard = replace(
        appeal,
        status=status,
        version=appeal.version + 1,
        hearing_date=hearing_date,
        members_present=members_present,
        votes_to_reverse=votes_to_reverse,
        votes_to_uphold=votes_to_uphold,
        minutes_ref=minutes_ref,
        found=found if reversed_ else None,
        eru_set=eru_set,
        effective_from=effective_from,
    )
    event = AppealDecided(
        occurred_at=now,
        tenant=appeal.tenant,
        appeal_id=appeal.appeal_id,
        reconsideration_id=appeal.reconsideration_id,
        parcel_id=appeal.parcel_id,
        owner_name=appeal.owner_name,
        hearing_date=hearing_date,
        votes_to_reverse=votes_to_reverse,
        votes_to_uphold=votes_to_uphold,
        outcome=status,
        eru_set=eru_set,
        effective_from=effective_from,
    )
    return Hearing(appeal=heard, decided=event, found_data=found_data)
