"""Rating a chunk of a billing cycle's accounts and issuing their bills (pure).

A cycle fans out in chunks of accounts (never one message per account). For each account
of a chunk: an account already billed for the period is skipped (exactly once: the bill
id is the business key), an account not yet open in the period, or whose ``bills_from`` is later, is left out (a
cycle never bills periods before the account's first period, X-PERIOD), an account
missing what it needs (no consumption, no ERU, a rate the tariff does not publish) is
held with the reason and who can supply it, and billed by a later run once the data is
there, never billed as zero. The cycle rates a chunk once per period it bills: its own
and each back period still unbilled (``billing.domain.periods``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from billing.domain.accounts import STORMWATER, AccountRecord
from billing.domain.bills import Bill, BilledRead, bill_id_of, issue
from billing.domain.ledger import Entry
from billing.domain.rating import Account, ParcelCharge, ParcelPart, RatingEngine, RatingError, RatingInput
from billing.domain.terms import Terms


@dataclass(frozen=True, slots=True)
class Usage:
    """Consumption kept from metering for one account and period (with its source event)."""

    volume_gal: Decimal
    estimated: bool = False
    source_event_id: str = ""
    winter_average_gal: Decimal | None = None  # PP-SEW-WINTER (metering's schema version 2)
    quality: str = "actual"
    reads: tuple[BilledRead, ...] = ()  # the meter reads behind it, where billing has them


@dataclass(frozen=True, slots=True)
class Eru:
    """A parcel's ERU as the stormwater service determined it (with its source event): the
    values in force at the end of the period and, when an ERU or a credit changed inside
    the period, ``parts``: the values of each stretch ``[start, end)`` of it (X-PERIOD)."""

    use: str
    eru: Decimal
    credit_percent: Decimal = Decimal(0)
    details: Mapping[str, Any] = field(default_factory=dict)
    source_event_id: str = ""
    parts: tuple[Eru, ...] = ()  # each with its stretch ``[start, end)`` set (and no parts)
    start: date | None = None
    end: date | None = None


@dataclass(frozen=True, slots=True)
class Strength:
    """Concentrations in force at the end of the period (X-PERIOD) and SU-BOD900 days."""

    concentrations: Mapping[str, Decimal] = field(default_factory=dict)
    bod900_violation_days: int = 0
    samples_collected: int = 0
    source_event_id: str = ""


@dataclass(frozen=True, slots=True)
class Charge:
    """A one-time charge for the account's next bill (PP-SEW-SAMPLE-COST, PP-CWU-PEF, fees)."""

    charge_id: str
    rule_id: str
    description: str
    amount: Decimal
    charged_on: date
    source_event_id: str = ""
    derivation: Mapping[str, str] = field(default_factory=dict)  # a fee's: tariff version, what for


@dataclass(frozen=True, slots=True)
class Held:
    """An account-period not billed: what is missing (``reason``) and who can supply it."""

    account_id: str
    period_start: date
    period_end: date
    reason: str
    who: str = ""


# Who can supply what a held account-period waits for (the unbilled report's column).
FROM_METERING = "metering: a read of the account's meter (reads/ file or estimate)"
FROM_STORMWATER = "stormwater: the parcel's ERU determination (gis/ extract)"
FROM_STAFF = "staff: the account or the tariff"


@dataclass
class ChunkResult:
    bills: list[Bill] = field(default_factory=list)
    held: list[Held] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # already billed, or not open yet

    @property
    def entries(self) -> list[Entry]:
        return [e for b in self.bills for e in b.entries()]


@dataclass(frozen=True, slots=True)
class ChunkInputs:
    tenant: str
    period_start: date
    period_end: date
    bill_date: date
    accounts: Sequence[AccountRecord]
    billed: frozenset[str]  # account ids already billed for this period
    usage: Mapping[str, Usage]
    erus: Mapping[str, Eru]  # by parcel id
    strength: Mapping[str, Strength]
    history: Mapping[str, Sequence[Entry]]
    last_bill_dates: Mapping[str, date]
    total_recs: Decimal | None = None
    charges: Mapping[str, Sequence[Charge]] = field(default_factory=dict)
    billed_charges: frozenset[str] = frozenset()  # charge ids already on an issued bill


def rating_input(inp: ChunkInputs, account: AccountRecord) -> RatingInput | str:
    """The engine's input for one account, or the reason it must be held."""
    if inp.tenant == STORMWATER:
        eru = inp.erus.get(account.parcel_id or "")
        if eru is None:
            return (
                f"no ERU determination for parcel {account.parcel_id} for "
                f"{inp.period_start}..{inp.period_end} from stormwater: waiting for the parcel's extract"
            )
        return RatingInput(
            tenant=inp.tenant,
            period_start=inp.period_start,
            period_end=inp.period_end,
            parcel=ParcelCharge(
                use=eru.use,  # type: ignore[arg-type]
                eru=eru.eru,
                credit_percent=eru.credit_percent,
                eru_details=eru.details,
                parts=tuple(
                    ParcelPart(
                        days=(p.end - p.start).days,
                        use=p.use,  # type: ignore[arg-type]
                        eru=p.eru,
                        credit_percent=p.credit_percent,
                        eru_details=p.details,
                        effective_from=p.start,
                        source_event_id=p.source_event_id,
                    )
                    for p in eru.parts
                    if p.start is not None and p.end is not None
                ),
            ),
        )
    usage = inp.usage.get(account.account_id)
    if account.meter_size is not None and usage is None:
        return (
            f"no consumption for {inp.period_start}..{inp.period_end} from metering: "
            "waiting for a read of the account's meter"
        )
    strength = inp.strength.get(account.account_id, Strength())
    kwargs: dict[str, Any] = {}
    if inp.tenant == "sullivan-sewer":
        kwargs["total_recs"] = inp.total_recs
        kwargs["bod900_violation_days"] = strength.bod900_violation_days
    if inp.tenant == "pleasant-prairie-sewer":
        kwargs["samples_collected"] = strength.samples_collected
        if account.account_class == "residential" and usage is not None:
            kwargs["winter_average_gallons"] = usage.winter_average_gal
    if inp.tenant == "grafton-sewer" and account.meter_size is None:
        kwargs["estimated_gallons"] = account.estimated_gallons or Decimal(0)
    return RatingInput(
        tenant=inp.tenant,
        period_start=inp.period_start,
        period_end=inp.period_end,
        account=Account(
            account_class=account.account_class,
            zone=account.zone if inp.tenant == "pleasant-prairie-sewer" else None,
            meter_size=account.meter_size,
            dwelling_units=account.dwelling_units,
            rec_units=account.rec_units if inp.tenant == "sullivan-sewer" else None,
        ),
        water_gallons=usage.volume_gal if usage is not None and account.meter_size is not None else None,
        strength=dict(strength.concentrations),
        **kwargs,
    )


def rate_chunk(inp: ChunkInputs, *, engine: RatingEngine, terms: Terms) -> ChunkResult:
    """Bills for the chunk's accounts not yet billed for the period; the rest held or skipped."""
    result = ChunkResult()
    for account in inp.accounts:
        if (
            account.account_id in inp.billed
            or not account.active_in(inp.period_start, inp.period_end)
            or (account.bills_from is not None and account.bills_from > inp.period_start)
        ):
            result.skipped.append(account.account_id)
            continue
        built = rating_input(inp, account)
        if isinstance(built, str):
            who = FROM_STORMWATER if inp.tenant == STORMWATER else FROM_METERING
            result.held.append(Held(account.account_id, inp.period_start, inp.period_end, built, who))
            continue
        try:
            rated = engine.rate(built)
        except RatingError as exc:
            result.held.append(
                Held(account.account_id, inp.period_start, inp.period_end, str(exc), FROM_STAFF)
            )
            continue
        usage = inp.usage.get(account.account_id)
        extra = [
            c
            for c in inp.charges.get(account.account_id, ())
            if c.charged_on < inp.period_end and c.charge_id not in inp.billed_charges
        ]
        result.bills.append(
            issue(
                rated,
                account_id=account.account_id,
                bill_date=inp.bill_date,
                due_days=terms.due_days,
                history=inp.history.get(account.account_id, ()),
                last_bill_date=inp.last_bill_dates.get(account.account_id),
                estimated=bool(usage and usage.estimated),
                parcel_id=account.parcel_id,
                charges=extra,
                reads=_reads(usage) if usage is not None and account.meter_size is not None else (),
            )
        )
    return result


def _reads(usage: Usage) -> tuple[BilledRead, ...]:
    """The bill's reads: those billing kept with the consumption, else the consumption alone."""
    if usage.reads:
        return usage.reads
    return (BilledRead(consumption_gal=usage.volume_gal, quality=usage.quality, estimated=usage.estimated),)


def chunks(ids: Iterable[str], size: int) -> list[list[str]]:
    listed = list(ids)
    return [listed[i : i + size] for i in range(0, len(listed), size)]


__all__ = [
    "ChunkInputs",
    "ChunkResult",
    "Eru",
    "Held",
    "Strength",
    "Usage",
    "bill_id_of",
    "chunks",
    "rate_chunk",
]
