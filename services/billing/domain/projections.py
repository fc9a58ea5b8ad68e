"""What billing keeps from its producers' events, and what is in force for a period (pure).

Each kept record names the event it came from (``source_event_id``). X-PERIOD: the
strength category and concentrations are those in force at the end of the period; an
ERU determination or a credit that takes effect inside the period cuts it into parts,
each billed at the values then in force, prorated by days (``eru_over``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from billing.domain.issuing import Eru, Strength

PARAMETERS = ("bod", "tss", "phosphorus", "tkn", "fog")


FROM_THE_START = date.min.isoformat()


def from_the_start(determinations: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """X-PERIOD: a parcel's first determination covers every period of its account not yet
    billed, so it is in force from the beginning of time; later ones take effect on their
    date. The first is the one with the earliest ``effective_from`` (with every other of that
    date: a correction on the same day), whatever order the events arrived in; the cycle
    never bills before the account's first period, so nothing earlier is billed by it."""
    listed = list(determinations)
    if not listed:
        return listed
    first = min(d["effective_from"] for d in listed)
    return [{**d, "effective_from": FROM_THE_START} if d["effective_from"] == first else d for d in listed]


def eru_in_force(
    determinations: Iterable[Mapping[str, Any]], credits: Iterable[Mapping[str, Any]], end: date
) -> Eru | None:
    """ERUDetermined: the highest sequence with ``effective_from`` before ``end`` (the
    first determination counting from the start, ``from_the_start``); CreditChanged: the
    latest approved/revoked credit with ``effective_from`` before ``end``."""
    last_day = end - timedelta(days=1)
    dets = [d for d in from_the_start(determinations) if date.fromisoformat(d["effective_from"]) <= last_day]
    if not dets:
        return None
    det = max(dets, key=lambda d: int(d["sequence"]))
    percent = Decimal(0)
    changes = sorted(
        (
            c
            for c in credits
            if c["status"] in ("approved", "revoked") and date.fromisoformat(c["effective_from"]) <= last_day
        ),
        key=lambda c: (c["effective_from"], c["status"] == "revoked"),
    )
    if changes:
        percent = Decimal(str(changes[-1]["credit_percent"]))
    use = (
        "agricultural"
        if det.get("exempt") and det.get("use") not in ("agricultural", "right_of_way")
        else det["use"]
    )
    return Eru(
        use=use,
        eru=Decimal(str(det["eru"])),
        credit_percent=percent if use == "nonresidential" else Decimal(0),
        details=det.get("breakdown") or {},
        source_event_id=str(det.get("source_event_id", "")),
    )


def strength_in_force(classified: Iterable[Mapping[str, Any]], start: date, end: date) -> Strength:
    """StrengthClassified/Changed: the latest with ``effective_from`` before ``end`` gives the
    basis concentrations (normal category: none); SU-BOD900 days are the distinct dates of
    the period named by any event (never carried forward from another period)."""
    listed = list(classified)
    in_force = [c for c in listed if date.fromisoformat(c["effective_from"]) < end]
    concentrations: dict[str, Decimal] = {}
    source = ""
    if in_force:
        latest = max(in_force, key=lambda c: (c["effective_from"], c["as_of"], c.get("occurred_at", "")))
        source = str(latest.get("source_event_id", ""))
        basis = latest.get("basis") or {}
        concentrations = {p: Decimal(str(basis[p])) for p in PARAMETERS if basis.get(p) is not None}
    dates: set[str] = set()
    counted = 0
    for c in listed:
        for v in c.get("violation_days") or ():
            if v["period_start"] == start.isoformat() and v["period_end"] == end.isoformat():
                if v.get("dates"):
                    dates |= set(v["dates"])
                else:
                    counted = max(counted, int(v["days"]))
    return Strength(
        concentrations=concentrations,
        bod900_violation_days=max(len(dates), counted),
        source_event_id=source,
    )


def eru_over(
    determinations: Iterable[Mapping[str, Any]], credits: Iterable[Mapping[str, Any]], start: date, end: date
) -> Eru | None:
    """The parcel's ERU for the period ``[start, end)``: the values in force at its end
    (``eru_in_force``) and, when a determination or an approved or revoked credit takes
    effect on a day inside the period and changes what is billed, the ``parts`` of the
    period (oldest first, each ``[start, end)`` with the values in force on its days).

    Days before the parcel's first determination are billed on that determination, and so
    are the account's earlier unbilled periods (X-PERIOD, ``from_the_start``): the extract
    that first determined the parcel is when it entered the system, not when its runoff
    began; only a change between determinations, or a credit's approval or revocation
    (never retroactive, PP-CWU-CREDIT), is prorated."""
    dets, creds = from_the_start(determinations), list(credits)
    at_end = eru_in_force(dets, creds, end)
    if at_end is None:
        return None
    changes = {date.fromisoformat(d["effective_from"]) for d in dets} | {
        date.fromisoformat(c["effective_from"]) for c in creds if c["status"] in ("approved", "revoked")
    }
    cuts = sorted(d for d in changes if start < d < end)
    if not cuts:
        return at_end
    bounds = [start, *cuts, end]
    values = [eru_in_force(dets, creds, b) for b in bounds[1:]]
    first = next(v for v in values if v is not None)
    parts: list[Eru] = []
    for a, b, value in zip(bounds, bounds[1:], values, strict=False):
        v = value or first
        if parts and _same_charge(parts[-1], v):
            parts[-1] = replace(parts[-1], end=b)
        else:
            parts.append(replace(v, start=a, end=b))
    if len(parts) == 1:
        return at_end
    return replace(at_end, parts=tuple(parts))


def _same_charge(a: Eru, b: Eru) -> bool:
    return (a.use, a.eru, a.credit_percent) == (b.use, b.eru, b.credit_percent)
