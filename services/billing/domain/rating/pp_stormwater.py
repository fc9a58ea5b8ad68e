"""Pleasant Prairie Clean Water Utility (``pleasant-prairie-stormwater``): monthly bills.

Charge models (RULES.md): PP-CWU-BASE, PP-CWU-ERU, PP-CWU-CREDIT, PP-CWU-EXEMPT, and the
one-time PP-CWU-PEF. The ERU itself is determined by the stormwater service (TR-55,
PP-CWU-CN/-TR55/-ERU-STD) and arrives already rounded in ``ParcelCharge.eru``.

PP-CWU-CREDIT is expressed per ERU so that quantity x rate = amount, like every other line:
quantity = the parcel's ERUs, rate = -(ERU rate x applied percent / 100). The credit is
computed as a positive amount, rounded half-up, then negated (``round_line`` rounds on the
magnitude); it never touches the base charge.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import ROUND_DOWN, Decimal
from typing import Any, NamedTuple

from billing.domain.rating.errors import InvalidScenario
from billing.domain.rating.model import BillLine, Note, ParcelCharge, ParcelPart, RatingInput
from billing.domain.rating.output import plain, rate_text
from billing.domain.rating.proration import Charge, Plan, Segment, Share, line
from common.money import CENT
from common.tariffs import PPStormwaterTariff

TENANT = "pleasant-prairie-stormwater"
ONE = Decimal(1)
HUNDRED = Decimal(100)


class StormwaterRates:
    """One Clean Water Utility tariff version, compiled to plain Decimals."""

    __slots__ = ("version_id", "base", "eru_rate", "cap_percent", "project_fee", "credit_per_eru")

    def __init__(self, tariff: PPStormwaterTariff) -> None:
        self.version_id = tariff.version_id
        self.base: Decimal = tariff.base_charge.value
        self.eru_rate: Decimal = tariff.eru_rate.value
        self.cap_percent: Decimal = tariff.credit.cap_percent.value
        self.project_fee: Decimal = tariff.project_evaluation_fee.value
        self.credit_per_eru = CreditPerEru(self.eru_rate, self.cap_percent)


class CreditPerEru:
    """PP-CWU-CREDIT per ERU for an approved percent: -(ERU rate x min(percent, cap) / 100)."""

    __slots__ = ("eru_rate", "cap_percent")

    def __init__(self, eru_rate: Decimal, cap_percent: Decimal) -> None:
        self.eru_rate = eru_rate
        self.cap_percent = cap_percent

    def get(self, percent: Decimal) -> Decimal:
        applied = percent if percent < self.cap_percent else self.cap_percent
        return -(self.eru_rate * applied / HUNDRED)


class StormwaterBaseCharge(Charge):
    """PP-CWU-BASE: per parcel per month, every parcel except exempt ones; never credited."""

    RULE_ID = "PP-CWU-BASE"
    UNIT = "month"
    RATE = "base"

    def describe(self, plan: Plan, key: str) -> tuple[str, dict[str, Any]]:
        return "Clean Water Utility base charge", {"use": key}

    def lines(self, plan: Plan, use: str, out: list[BillLine]) -> None:
        self.emit_periodic(out, plan, use, None)


class StormwaterEruCharge(Charge):
    """PP-CWU-ERU: the parcel's ERUs (rounded by the stormwater service) x the rate per ERU."""

    RULE_ID = "PP-CWU-ERU"
    UNIT = "ERU"
    RATE = "eru_rate"

    def lines(self, plan: Plan, parcel: ParcelCharge, out: list[BillLine]) -> None:
        details: dict[str, Any] = {"eru": parcel.eru, "determination": parcel.eru_details}
        self.emit(out, plan, "Clean Water Utility ERU charge", parcel.eru, None, details)


class StormwaterCredit(Charge):
    """PP-CWU-CREDIT: nonresidential only; the approved percent of the ERU charge, capped at
    the tariff cap (30%); a negative line computed positive, rounded, negated."""

    RULE_ID = "PP-CWU-CREDIT"
    UNIT = "ERU"
    RATE = "credit_per_eru"

    def lines(self, plan: Plan, parcel: ParcelCharge, out: list[BillLine]) -> None:
        percent = parcel.credit_percent
        first: StormwaterRates = plan.segments[0].rates
        applied = percent if percent < first.cap_percent else first.cap_percent
        details: dict[str, Any] = {
            "credit_percent": percent,
            "cap_percent": first.cap_percent,
            "applied_percent": applied,
            "eru": parcel.eru,
            "eru_rate": first.eru_rate,
        }
        description = f"Clean Water Utility credit, {applied}% of the ERU charge"
        self.emit(out, plan, description, parcel.eru, percent, details)


class StormwaterExempt:
    """PP-CWU-EXEMPT: agricultural land and public right-of-way pay nothing (no lines, a note)."""

    RULE_ID = "PP-CWU-EXEMPT"
    NOTES = {
        "agricultural": Note(RULE_ID, "agricultural land is exempt"),
        "right_of_way": Note(RULE_ID, "public right-of-way is exempt"),
    }


class StormwaterRater:
    """Rates one parcel-month."""

    tenant = TENANT
    compile = StormwaterRates
    base = StormwaterBaseCharge()
    eru = StormwaterEruCharge()
    credit = StormwaterCredit()

    def rate(self, inp: RatingInput, plan: Plan, notes: list[Note]) -> list[BillLine]:
        parcel = inp.parcel
        if parcel is None:
            raise InvalidScenario("parcel", f"is required for tenant {TENANT}")
        if len(parcel.parts) > 1:
            return rate_parts(parcel.parts, plan, notes)
        out: list[BillLine] = []
        if parcel.exempt:
            notes.append(StormwaterExempt.NOTES[parcel.use])
            return out
        self.base.lines(plan, parcel.use, out)
        self.eru.lines(plan, parcel, out)
        if parcel.use == "nonresidential" and parcel.credit_percent > 0:
            self.credit.lines(plan, parcel, out)
            _hold_credit_within_cap(out, plan.segments[0].rates.cap_percent, notes)
        return out


class Piece(NamedTuple):
    """Days of the period under one tariff version and one state of the parcel."""

    days: int
    rates: StormwaterRates
    version_id: str
    part: ParcelPart


def pieces(plan: Plan, parts: Sequence[ParcelPart]) -> list[Piece]:
    """The period cut at tariff versions (X-EFFECTIVE) and at the parcel's changes (X-PERIOD)."""
    if sum(p.days for p in parts) != plan.period_days:
        raise InvalidScenario(
            "parcel.parts", f"cover {sum(p.days for p in parts)} days, the period has {plan.period_days}"
        )
    out: list[Piece] = []
    segs, prts = list(plan.segments), list(parts)
    seg_left, part_left = segs[0].days, prts[0].days
    while segs and prts:
        days = min(seg_left, part_left)
        if days:
            out.append(Piece(days, segs[0].rates, segs[0].version_id, prts[0]))
        seg_left -= days
        part_left -= days
        if seg_left == 0:
            segs.pop(0)
            seg_left = segs[0].days if segs else 0
        if part_left == 0:
            prts.pop(0)
            part_left = prts[0].days if prts else 0
    return out


PieceRate = Callable[[Piece], "tuple[Decimal, Decimal] | None"]


def piece_shares(cut: Sequence[Piece], quantity_rate: PieceRate) -> list[tuple[Share, ParcelPart]]:
    """The shares of a charge over the pieces (None: not charged in that piece), adjacent
    pieces with the same quantity and rate merged into one share (one line), with the
    parcel part the share starts in."""
    out: list[tuple[Share, ParcelPart]] = []
    merging = False
    for piece in cut:
        qr = quantity_rate(piece)
        if qr is None:
            merging = False
            continue
        q, r = qr
        if merging and out[-1][0].quantity == q and out[-1][0].rate == r:
            last, part = out[-1]
            versions = (
                last.versions if piece.version_id in last.versions else (*last.versions, piece.version_id)
            )
            out[-1] = (Share(q, r, last.days + piece.days, versions, last.rates), part)
        else:
            out.append((Share(q, r, piece.days, (piece.version_id,), piece.rates), piece.part))
        merging = True
    return out


def _part_line(
    rule_id: str,
    description: str,
    unit: str,
    share: Share,
    part: ParcelPart,
    period_days: int,
    details: dict[str, Any],
) -> BillLine | None:
    """One part's line: ``quantity x rate x days / period_days``, rounded once, its
    derivation written out ("1.00 ERU x 12/30 days x $6.00", the quantity as determined)
    and the part's first day."""
    factor = "" if share.days == period_days else f" x {share.days}/{period_days} days"
    sign = "-" if share.rate < 0 else ""
    details["derivation"] = f"{share.quantity} {unit}{factor} x {sign}${rate_text(abs(share.rate))}"
    if part.effective_from is not None:
        details["effective_from"] = part.effective_from.isoformat()
    if part.source_event_id:
        details["source_event_id"] = part.source_event_id
    return line(rule_id, description, unit, share, period_days, details)


def rate_parts(parts: Sequence[ParcelPart], plan: Plan, notes: list[Note]) -> list[BillLine]:
    """X-PERIOD: an ERU determination or a credit that took effect inside the period. Each
    part of the period is charged at the values then in force, prorated by days: the base
    charge on the days the parcel was not exempt (one line when that is all of them), the
    ERU charge per ERU value, the credit per (ERU, percent); each share its own line."""
    cut = pieces(plan, parts)
    if all(p.exempt for p in parts):
        notes.append(StormwaterExempt.NOTES[parts[-1].use])
        return []
    days = plan.period_days
    out: list[BillLine] = []
    base = StormwaterBaseCharge
    for share, part in piece_shares(cut, lambda p: None if p.part.exempt else (ONE, p.rates.base)):
        made = _part_line(
            base.RULE_ID, "Clean Water Utility base charge", base.UNIT, share, part, days, {"use": part.use}
        )
        if made is not None:
            out.append(made)
    eru = StormwaterEruCharge
    for share, part in piece_shares(cut, lambda p: None if p.part.exempt else (p.part.eru, p.rates.eru_rate)):
        details: dict[str, Any] = {"eru": part.eru, "determination": part.eru_details}
        made = _part_line(eru.RULE_ID, "Clean Water Utility ERU charge", eru.UNIT, share, part, days, details)
        if made is not None:
            out.append(made)
    credit = StormwaterCredit

    def credit_rate(p: Piece) -> tuple[Decimal, Decimal] | None:
        if p.part.use != "nonresidential" or p.part.credit_percent <= 0:
            return None
        return (p.part.eru, p.rates.credit_per_eru.get(p.part.credit_percent))

    for share, part in piece_shares(cut, credit_rate):
        rates: StormwaterRates = share.rates
        percent = part.credit_percent
        applied = percent if percent < rates.cap_percent else rates.cap_percent
        details = {
            "credit_percent": percent,
            "cap_percent": rates.cap_percent,
            "applied_percent": applied,
            "eru": part.eru,
            "eru_rate": rates.eru_rate,
        }
        description = f"Clean Water Utility credit, {applied}% of the ERU charge"
        made = _part_line(credit.RULE_ID, description, credit.UNIT, share, part, days, details)
        if made is not None:
            out.append(made)
    if any(ln.rule_id == credit.RULE_ID for ln in out):
        _hold_credit_within_cap(out, plan.segments[0].rates.cap_percent, notes)
    return out


def _hold_credit_within_cap(out: list[BillLine], cap_percent: Decimal, notes: list[Note]) -> None:
    """PP-CWU-CREDIT is capped at 30% of the ERU charge: a hard limit on the bill.

    Rounding the credit half-up can take it a fraction of a cent past the cap (30% of a
    0.06 ERU charge is 0.018, which rounds to 0.02). The cap is the ordinance's, so the
    credit is held to the cap rounded down to the cent. The held line is no longer
    quantity x rate: its description says so and its details carry the ERU charge, the cap
    percent and the cap, so a clerk's multiplication (ERU charge x cap percent / 100,
    rounded down) gives the amount. A note says why, also when the credit is held to 0.00
    and no line is left.
    """
    eru_charge = sum((ln.amount for ln in out if ln.rule_id == StormwaterEruCharge.RULE_ID), Decimal(0))
    exact_cap = eru_charge * cap_percent / HUNDRED
    cap = exact_cap.quantize(CENT, rounding=ROUND_DOWN)
    credits = [i for i, ln in enumerate(out) if ln.rule_id == StormwaterCredit.RULE_ID]
    credit_total = -sum(out[i].amount for i in credits)
    excess = credit_total - cap
    if excess <= 0:
        return
    last = out[credits[-1]]
    held = last.amount + excess
    how = (
        f"{plain(cap_percent)}% of the ERU charge {eru_charge} is {plain(exact_cap)}, "
        f"held to {cap} (rounded down) instead of {credit_total} (half-up)"
    )
    notes.append(Note(StormwaterCredit.RULE_ID, f"credit held to the cap: {how}"))
    if held == 0:
        del out[credits[-1]]
        return
    details = {
        **last.details,
        "eru_charge": eru_charge,
        "cap_percent": cap_percent,
        "held_to_cap": cap,
        "before_cap": last.amount,
    }
    description = f"{last.description}, held to the cap: {plain(cap_percent)}% of the ERU charge {eru_charge}, rounded down"
    out[credits[-1]] = last._replace(amount=held, description=description, details=details)


class ProjectEvaluationFee:
    """PP-CWU-PEF: one-time fee when a parcel converts from undeveloped to developed or is
    part of a lot split (assessed by the stormwater service's event)."""

    RULE_ID = "PP-CWU-PEF"


def project_evaluation_fee(tariff: PPStormwaterTariff, parcel_id: str) -> BillLine:
    """The one-time PP-CWU-PEF line for a parcel."""
    rates = StormwaterRates(tariff)
    share = Share(ONE, rates.project_fee, 1, (rates.version_id,), rates)
    plan = Plan((Segment(rates, 1, rates.version_id),), 1, (rates.version_id,))
    bl = line(
        ProjectEvaluationFee.RULE_ID,
        "Project evaluation fee",
        "parcel",
        share,
        plan.period_days,
        {"parcel_id": parcel_id},
    )
    if bl is None:
        raise InvalidScenario("project_evaluation_fee", f"tariff version {rates.version_id} sets no fee")
    return bl
