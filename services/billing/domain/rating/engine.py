"""The rating engine: a ``RatingInput`` in, a ``RatedBill`` out (pure; no I/O, no clock).

Tariff lookups are resolved once per (tenant, period) into a ``Plan`` of compiled rates
(plain Decimals), so the hot path touches no pydantic model and no tariff search.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any, Protocol

from billing.domain.rating.errors import RatingError, UnknownTenant
from billing.domain.rating.grafton import GraftonRater
from billing.domain.rating.model import BillLine, Note, RatedBill, RatingInput
from billing.domain.rating.pp_sewer import PPSewerRater
from billing.domain.rating.pp_stormwater import StormwaterRater
from billing.domain.rating.proration import Plan, Segment
from billing.domain.rating.sullivan import SullivanRater
from common.tariffs import TariffBook, TariffError

ZERO_CENTS = Decimal("0.00")
_new_tuple = tuple.__new__
PLAN_CACHE_SIZE = 4096


class TenantRater(Protocol):
    tenant: str

    def compile(self, tariff: Any) -> Any: ...

    def rate(self, inp: RatingInput, plan: Plan, notes: list[Note]) -> list[BillLine]: ...


RATERS: dict[str, TenantRater] = {
    r.tenant: r for r in (PPSewerRater(), StormwaterRater(), GraftonRater(), SullivanRater())
}


class RatingEngine:
    """Rates bills against one ``TariffBook``.

    ``rate`` raises a ``RatingError`` naming the input field at fault (unknown tenant,
    a period outside the tariffs, a rate the tariff does not publish).
    """

    def __init__(self, book: TariffBook) -> None:
        self.book = book
        self._compiled: dict[str, Any] = {}
        self._plans: dict[tuple[str, date, date], Plan] = {}

    def plan(self, tenant: str, start: date, end: date) -> Plan:
        """The tariff segments of ``[start, end)`` with compiled rates (cached)."""
        key = (tenant, start, end)
        found = self._plans.get(key)
        if found is not None:
            return found
        rater = RATERS.get(tenant)
        if rater is None or tenant not in self.book.tenants:
            raise UnknownTenant("tenant", f"{tenant!r} is not a tenant (expected one of {', '.join(RATERS)})")
        try:
            spans = self.book.split(tenant, start, end)
        except TariffError as exc:
            raise RatingError(exc.field or "period", str(exc).removeprefix(f"{exc.field}: ")) from None
        segments = []
        for span in spans:
            vid = span.tariff.version_id
            rates = self._compiled.get(vid)
            if rates is None:
                rates = self._compiled[vid] = rater.compile(span.tariff)
            segments.append(Segment(rates, span.days, vid))
        single = segments[0].rates if len(segments) == 1 else None
        plan = Plan(
            tuple(segments), (end - start).days, tuple(s.version_id for s in segments), single, rater, {}
        )
        if len(self._plans) >= PLAN_CACHE_SIZE:
            self._plans.clear()
        self._plans[key] = plan
        return plan

    def rate(self, inp: RatingInput) -> RatedBill:
        """Every charge of ``inp``'s tenant for its period; total = sum of the rounded lines."""
        plan = self._plans.get((inp.tenant, inp.period_start, inp.period_end))
        if plan is None:
            plan = self.plan(inp.tenant, inp.period_start, inp.period_end)
        notes: list[Note] = []
        lines = plan.rater.rate(inp, plan, notes)
        total = ZERO_CENTS
        for bl in lines:
            total += bl.amount
        # tuple.__new__: RatedBill(...) without the NamedTuple's Python-level __new__ (hot path).
        return _new_tuple(
            RatedBill,
            (
                inp.tenant,
                inp.period_start,
                inp.period_end,
                plan.tariff_versions,
                tuple(lines),
                total,
                tuple(notes) if notes else (),
            ),
        )
