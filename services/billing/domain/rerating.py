"""Re-rating a billed period whose consumption was re-determined (X-IMMUTABLE; pure).

A late or corrected read reaches billing after the period was billed: the issued bill is
never edited. The period is rated again with the same engine, tariff and inputs as the
cycle rates it (``issuing.rating_input``), once with the volume the bill (and any earlier
re-rating of it) stands on and once with the re-determined volume; the difference, per
fund (GR-FUNDS, SU-FUNDS), is ONE adjustment on the bill: a credit memo when it is
negative, a debit memo when positive, none when zero. One-time charges on the bill are
not rated and so never enter the difference.

A stormwater period is re-rated the same way when a parcel's ERU or credit for it changes
after it was billed (a back-dated override, a reconsideration or appeal outcome, a credit
approved or revoked with an effective date inside it: ``rerate_parcel``): the period is
rated again with the ERUs and credits kept now (X-PERIOD parts and all), and compared
with what the bill stands at: its rated lines plus the re-ratings booked on it since
(``standing``). The same change again finds the bill standing at the new values and books
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from billing.domain.accounts import STORMWATER, AccountRecord
from billing.domain.bills import Bill, Line
from billing.domain.issuing import ChunkInputs, Eru, Strength, Usage, rating_input
from billing.domain.ledger import ZERO
from billing.domain.rating import RatedBill, RatingEngine
from billing.domain.rating.output import detail_value, plain, rate_text

RULE_ID = "X-IMMUTABLE"


class CannotRerate(ValueError):
    """The period cannot be rated again (the reason names what is missing)."""


@dataclass(frozen=True, slots=True)
class Rerated:
    """The difference between the period rated on ``billed`` and on ``new``."""

    bill_id: str
    account_id: str
    sequence: int  # 1 for the bill's first re-rating, 2 for the next, ...
    from_volume_gal: Decimal | None
    to_volume_gal: Decimal | None
    source_event_id: str
    funds: Mapping[str, Decimal] = field(default_factory=dict)  # non-zero differences by fund
    lines: tuple[tuple[str, Decimal, Decimal], ...] = ()  # (rule id, amount before, after)
    tariff_versions: tuple[str, ...] = ()
    what: str = ""  # what changed, where it is not the consumption (an ERU or a credit)
    derivation: str = ""  # the period's rated lines now, each with its derivation
    standing: Mapping[str, Decimal] = field(default_factory=dict)  # by fund, after this
    standing_rules: Mapping[str, Decimal] = field(default_factory=dict)  # by rule, after this

    @property
    def rule_ids(self) -> tuple[str, ...]:
        changed = [rule for rule, before, after in self.lines if before != after]
        return tuple(dict.fromkeys([*changed, "X-PERIOD" if self.what else "X-VOLUME", RULE_ID]))

    @property
    def amount(self) -> Decimal:
        return sum(self.funds.values(), ZERO)

    @property
    def reference(self) -> str:
        """The adjustment's business key: the bill and the n-th re-rating of it."""
        return f"RERATE-{self.bill_id}-{self.sequence:03d}"

    @property
    def reason(self) -> str:
        changed = "; ".join(
            f"{rule} {before} -> {after}" for rule, before, after in self.lines if before != after
        )
        memo = "credit" if self.amount < 0 else "debit"
        if self.from_volume_gal is None or self.to_volume_gal is None:
            return f"{RULE_ID} re-rating ({memo} memo): {self.what}; {changed}"
        return (
            f"{RULE_ID} re-rating ({memo} memo): consumption re-determined from {plain(self.from_volume_gal)} gal "
            f"to {plain(self.to_volume_gal)} gal; {changed}"
        )


def _rate(
    bill: Bill,
    account: AccountRecord,
    usage: Usage,
    strength: Strength,
    total_recs: Decimal | None,
    engine: RatingEngine,
    erus: Mapping[str, Eru] | None = None,
) -> RatedBill:
    inputs = ChunkInputs(
        tenant=bill.tenant,
        period_start=bill.period_start,
        period_end=bill.period_end,
        bill_date=bill.bill_date,
        accounts=(account,),
        billed=frozenset(),
        usage={account.account_id: usage},
        erus=erus or {},
        strength={account.account_id: strength},
        history={},
        last_bill_dates={},
        total_recs=total_recs,
    )
    built = rating_input(inputs, account)
    if isinstance(built, str):
        raise CannotRerate(f"bill {bill.bill_id}: {built}")
    return engine.rate(built)


def _by_fund(rated: RatedBill) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    for bl in rated.lines:
        ln = Line(
            bl.rule_id,
            bl.description,
            plain(bl.quantity),
            bl.unit,
            rate_text(bl.rate),
            bl.amount,
            detail_value(bl.details),
        )
        for fund, amount in ln.funds.items():
            out[fund] = out.get(fund, ZERO) + amount
    return out


def _difference(old: Mapping[str, Decimal], new: Mapping[str, Decimal]) -> dict[str, Decimal] | None:
    """What each fund moves by (funds that do not move left out), or None when the
    re-rating books nothing: no fund moves, or the moves sum to zero."""
    funds = {f: new.get(f, ZERO) - old.get(f, ZERO) for f in sorted(set(old) | set(new))}
    funds = {f: amount for f, amount in funds.items() if amount != ZERO}
    if not funds or sum(funds.values(), ZERO) == ZERO:
        return None
    return funds


def _by_rule(rated: RatedBill) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    for bl in rated.lines:
        out[bl.rule_id] = out.get(bl.rule_id, ZERO) + bl.amount
    return out


def rerate(
    bill: Bill,
    account: AccountRecord,
    *,
    billed: Usage,
    new: Usage,
    sequence: int,
    engine: RatingEngine,
    strength: Strength | None = None,
    total_recs: Decimal | None = None,
) -> Rerated | None:
    """The adjustment for ``bill`` when its consumption goes from ``billed`` to ``new``, or
    None when the volume is the same or the difference is zero (nothing is booked)."""
    if billed.volume_gal == new.volume_gal and billed.winter_average_gal == new.winter_average_gal:
        return None
    if account.tenant == STORMWATER or account.meter_size is None:
        return None  # rated on ERUs or on estimated gallons: the read does not enter the bill
    strength = strength or Strength()
    before = _rate(bill, account, billed, strength, total_recs, engine)
    after = _rate(bill, account, new, strength, total_recs, engine)
    if bill.tariff_versions and after.tariff_versions != bill.tariff_versions:
        raise CannotRerate(
            f"bill {bill.bill_id}: rated on tariff {', '.join(bill.tariff_versions)}, "
            f"the period now rates on {', '.join(after.tariff_versions)}"
        )
    funds = _difference(_by_fund(before), _by_fund(after))
    if funds is None:
        return None
    old_rules, new_rules = _by_rule(before), _by_rule(after)
    return Rerated(
        bill_id=bill.bill_id,
        account_id=bill.account_id,
        sequence=sequence,
        from_volume_gal=billed.volume_gal,
        to_volume_gal=new.volume_gal,
        source_event_id=new.source_event_id,
        funds=funds,
        lines=tuple(
            (rule, old_rules.get(rule, ZERO), new_rules.get(rule, ZERO))
            for rule in dict.fromkeys([*old_rules, *new_rules])
        ),
        tariff_versions=after.tariff_versions,
    )


def billed_total_recs(bill: Bill) -> Decimal | None:
    """SU-REC: the total REC units the bill was rated on (its SU-REC line's derivation), so
    a re-rating divides the debt retirement as the bill did, whatever accounts were opened
    or changed since; None for a bill without it."""
    for ln in bill.lines:
        if ln.rule_id == "SU-REC" and ln.details.get("total_recs") not in (None, ""):
            return Decimal(str(ln.details["total_recs"]))
    return None


def standing(bill: Bill) -> tuple[dict[str, Decimal], dict[str, Decimal]]:
    """What the bill's rated lines come to, by fund and by rule (its one-time charges, which
    carry a ``charge_id``, are not rated and stay out)."""
    funds: dict[str, Decimal] = {}
    rules: dict[str, Decimal] = {}
    for ln in bill.lines:
        if ln.details.get("charge_id"):
            continue
        for fund, amount in ln.funds.items():
            funds[fund] = funds.get(fund, ZERO) + amount
        rules[ln.rule_id] = rules.get(ln.rule_id, ZERO) + ln.amount
    return funds, rules


def _derivation(rated: RatedBill) -> str:
    parts = []
    for bl in rated.lines:
        details = detail_value(bl.details)
        how = details.get("derivation") or f"{plain(bl.quantity)} {bl.unit} x {rate_text(bl.rate)}"
        parts.append(f"{bl.rule_id} {bl.amount} ({how})")
    return "; ".join(parts)


def rerate_parcel(
    bill: Bill,
    account: AccountRecord,
    *,
    eru: Eru,
    stands_at: tuple[Mapping[str, Decimal], Mapping[str, Decimal]],
    sequence: int,
    engine: RatingEngine,
    what: str,
    source_event_id: str,
) -> Rerated | None:
    """The adjustment for a stormwater ``bill`` whose parcel's ERU or credit changed for its
    period: the period rated with ``eru`` (as kept now, with its X-PERIOD parts) against
    what the bill ``stands_at`` (by fund, by rule: ``standing`` plus the re-ratings booked
    since); None when they are the same (nothing is booked)."""
    after = _rate(bill, account, Usage(ZERO), Strength(), None, engine, erus={account.parcel_id or "": eru})
    if bill.tariff_versions and after.tariff_versions != bill.tariff_versions:
        raise CannotRerate(
            f"bill {bill.bill_id}: rated on tariff {', '.join(bill.tariff_versions)}, "
            f"the period now rates on {', '.join(after.tariff_versions)}"
        )
    old_funds, old_rules = stands_at
    new_funds, new_rules = _by_fund(after), _by_rule(after)
    funds = _difference(old_funds, new_funds)
    if funds is None:
        return None
    return Rerated(
        bill_id=bill.bill_id,
        account_id=bill.account_id,
        sequence=sequence,
        from_volume_gal=None,
        to_volume_gal=None,
        source_event_id=source_event_id,
        funds=funds,
        lines=tuple(
            (rule, old_rules.get(rule, ZERO), new_rules.get(rule, ZERO))
            for rule in dict.fromkeys([*old_rules, *new_rules])
        ),
        tariff_versions=after.tariff_versions,
        what=what,
        derivation=_derivation(after),
        standing=new_funds,
        standing_rules=new_rules,
    )
