"""What billing keeps from its producers' events, and what is in force for a period (pure).

Each kept record names the event it came from (``source_event_id``). X-PERIOD: the
strength category and concentrations are those in force at the end of the period; an
ERU or credit is the one in force at the end of the period (mid-period proration of an
ERU change is not done yet: see the issue's report).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from billing.domain.issuing import Eru, Strength

PARAMETERS = ("bod", "tss", "phosphorus", "tkn", "fog")


def eru_in_force(
    determinations: Iterable[Mapping[str, Any]], credits: Iterable[Mapping[str, Any]], end: date
) -> Eru | None:
    """ERUDetermined: the highest sequence with ``effective_from`` before ``end``;
    CreditChanged: the latest approved/revoked credit with ``effective_from`` before ``end``."""
    last_day = end - timedelta(days=1)
    dets = [d for d in determinations if date.fromisoformat(d["effective_from"]) <= last_day]
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
