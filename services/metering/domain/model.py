"""What metering keeps per account: its meters, their register series, its recent consumption.

One :class:`AccountMetering` per (tenant, account) holds everything consumption needs, so a
batch of reads costs one read and one write per account (issue 7: bounded, batched I/O).
Its size is bounded: each meter keeps its points of roughly the last 13 months and the
account its last ``HISTORY_MAX`` periods.

Register values are in the meter's own units; they become gallons once, here, at the edge
(X-READS: 1 cubic foot = 7.48052 gallons; ``ccf`` is 100 cubic feet). Cumulative gallons
since the meter was installed (``cum_gal``) unwrap rollovers, so consumption between two
points is a subtraction and consecutive periods telescope: nothing is lost or counted
twice at a boundary or an exchange.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from decimal import Decimal
from typing import Any, Literal

Units = Literal["gal", "cf", "ccf"]
Kind = Literal["water", "waste", "flow-monitor"]
PointType = Literal["actual", "customer", "estimated", "initial", "final", "prorated"]

GALLONS_PER: dict[str, Decimal] = {"gal": Decimal(1), "cf": Decimal("7.48052"), "ccf": Decimal("748.052")}
KEEP_POINTS_DAYS = 400
HISTORY_MAX = 15
# Points that are not a reading of the register: never the "previous reading" of a check.
SYNTHETIC: frozenset[str] = frozenset({"prorated"})


@dataclass(frozen=True)
class Point:
    """The register on a day: ``reading`` in meter units, ``cum_gal`` gallons since install."""

    on: date
    reading: Decimal
    type: PointType
    cum_gal: Decimal
    rollover: bool = False  # the register wrapped between the previous point and this one

    def as_json(self) -> list[Any]:
        return [self.on.isoformat(), str(self.reading), self.type, str(self.cum_gal), self.rollover]

    @classmethod
    def from_json(cls, raw: list[Any]) -> Point:
        return cls(date.fromisoformat(raw[0]), Decimal(raw[1]), raw[2], Decimal(raw[3]), bool(raw[4]))


@dataclass(frozen=True)
class Meter:
    """A meter as the registry holds it (CONTRACTS.md ``meters/``)."""

    tenant: str
    meter_id: str
    account_id: str
    kind: Kind
    units: Units
    digits: int
    installed_on: date
    initial_reading: Decimal
    size: str | None = None
    removed_on: date | None = None
    final_reading: Decimal | None = None

    @property
    def capacity(self) -> Decimal:
        """10^digits: the register wraps to zero here (X-READS)."""
        return Decimal(10) ** self.digits

    @property
    def gallons_per_unit(self) -> Decimal:
        return GALLONS_PER[self.units]

    def active_in(self, start: date, end: date) -> bool:
        return self.installed_on < end and (self.removed_on is None or self.removed_on > start)

    def as_json(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "meter_id": self.meter_id,
            "account_id": self.account_id,
            "kind": self.kind,
            "units": self.units,
            "digits": self.digits,
            "installed_on": self.installed_on.isoformat(),
            "initial_reading": str(self.initial_reading),
            "size": self.size,
            "removed_on": self.removed_on.isoformat() if self.removed_on else None,
            "final_reading": None if self.final_reading is None else str(self.final_reading),
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Meter:
        return cls(
            tenant=raw["tenant"],
            meter_id=raw["meter_id"],
            account_id=raw["account_id"],
            kind=raw["kind"],
            units=raw["units"],
            digits=int(raw["digits"]),
            installed_on=date.fromisoformat(raw["installed_on"]),
            initial_reading=Decimal(raw["initial_reading"]),
            size=raw.get("size"),
            removed_on=date.fromisoformat(raw["removed_on"]) if raw.get("removed_on") else None,
            final_reading=None if raw.get("final_reading") is None else Decimal(raw["final_reading"]),
        )


@dataclass
class MeterSeries:
    meter: Meter
    points: list[Point] = field(default_factory=list)

    def point_on(self, day: date) -> Point | None:
        for p in self.points:
            if p.on == day:
                return p
        return None

    def last(self) -> Point | None:
        return self.points[-1] if self.points else None

    def before(self, day: date, *, readings_only: bool = False) -> Point | None:
        found = None
        for p in self.points:
            if p.on >= day:
                break
            if not readings_only or p.type not in SYNTHETIC:
                found = p
        return found

    def after(self, day: date) -> Point | None:
        for p in self.points:
            if p.on > day:
                return p
        return None

    def covers(self, day: date) -> bool:
        last = self.last()
        return last is not None and last.on >= day


@dataclass(frozen=True)
class PeriodUse:
    start: date
    end: date
    volume_gal: Decimal

    @property
    def days(self) -> int:
        return (self.end - self.start).days


@dataclass
class AccountMetering:
    tenant: str
    account_id: str
    series: dict[str, MeterSeries] = field(default_factory=dict)
    last_period_end: date | None = None
    history: list[PeriodUse] = field(default_factory=list)
    version: int = 0

    def trim(self) -> None:
        """Keep the state bounded: points of about the last 13 months, the last periods."""
        self.history = self.history[-HISTORY_MAX:]
        if self.last_period_end is None:
            return
        horizon = self.last_period_end - timedelta(days=KEEP_POINTS_DAYS)
        for s in self.series.values():
            old = [p for p in s.points if p.on < horizon]
            if len(old) > 1:
                s.points = s.points[len(old) - 1 :]  # the newest old point anchors interpolation

    def as_json(self) -> dict[str, Any]:
        return {
            "meters": {
                m: {"meter": s.meter.as_json(), "points": [p.as_json() for p in s.points]}
                for m, s in self.series.items()
            },
            "last_period_end": self.last_period_end.isoformat() if self.last_period_end else None,
            "history": [[h.start.isoformat(), h.end.isoformat(), str(h.volume_gal)] for h in self.history],
        }

    @classmethod
    def from_json(cls, tenant: str, account_id: str, raw: dict[str, Any], version: int) -> AccountMetering:
        return cls(
            tenant=tenant,
            account_id=account_id,
            series={
                m: MeterSeries(Meter.from_json(v["meter"]), [Point.from_json(p) for p in v["points"]])
                for m, v in raw.get("meters", {}).items()
            },
            last_period_end=date.fromisoformat(raw["last_period_end"])
            if raw.get("last_period_end")
            else None,
            history=[
                PeriodUse(date.fromisoformat(a), date.fromisoformat(b), Decimal(v))
                for a, b, v in raw.get("history", [])
            ],
            version=version,
        )


def with_meter(series: MeterSeries, meter: Meter) -> MeterSeries:
    return replace(series, meter=meter)
