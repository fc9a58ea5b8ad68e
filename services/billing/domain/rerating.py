"""Re-rating a billed period whose consumption was re-determined (X-IMMUTABLE; pure).

A late or corrected read reaches billing after the period was billed: the issued bill is
never edited. The period is rated again with the same engine, tariff and inputs as the
cycle rates it (``issuing.rating_input``), once with the volume the bill (and any earlier
re-rating of it) stands on and once with the re-determined volume; the difference, per
fund (GR-FUNDS, SU-FUNDS), is ONE adjustment on the bill: a credit memo when it is
negative, a debit memo when positive, none when zero. One-time charges on the bill are
not rated and so never enter the difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from billing.domain.accounts import STORMWATER, AccountRecord
from billing.domain.bills import Bill, Line
from billing.domain.issuing import ChunkInputs, Strength, Usage, rating_input
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
    from_volume_gal: Decimal
    to_volume_gal: Decimal
    source_event_id: str
    funds: Mapping[str, Decimal] = field(default_factory=dict)  # non-zero differences by fund
    lines: tuple[tuple[str, Decimal, Decimal], ...] = ()  # (rule id, amount before, after)
    tariff_versions: tuple[str, ...] = ()

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
        return (
            f"{RULE_ID} re-rating ({memo} memo): consumption re-determined from {plain(self.from_volume_gal)} gal "
            f"to {plain(self.to_volume_gal)} gal (event {self.source_event_id}); {changed}"
        )


def _rate(
    bill: Bill,
    account: AccountRecord,
    usage: Usage,
    strength: Strength,
    total_recs: Decimal | None,
    engine: RatingEngine,
) -> RatedBill:
    inputs = ChunkInputs(
        tenant=bill.tenant,
        period_start=bill.period_start,
        period_end=bill.period_end,
        bill_date=bill.bill_date,
        accounts=(account,),
        billed=frozenset(),
        usage={account.account_id: usage},
        erus={},
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
    old_funds, new_funds = _by_fund(before), _by_fund(after)
    funds = {
        f: new_funds.get(f, ZERO) - old_funds.get(f, ZERO)
        for f in sorted(set(old_funds) | set(new_funds))
        if new_funds.get(f, ZERO) != old_funds.get(f, ZERO)
    }
    if not funds or sum(funds.values(), ZERO) == ZERO:
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
