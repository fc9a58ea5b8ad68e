"""Classification on every finalised result: the strength events billing keeps.

Runs the existing pure rules (:func:`sampling.domain.strength.classify`, SU-BOD900 in
:mod:`sampling.domain.sullivan`) over an account's finalised results and turns the outcome
into :class:`~sampling.events.StrengthClassified` or, when the category moved,
:class:`~sampling.events.StrengthCategoryChanged`.

The basis (the concentrations billed while the user is above normal) is the classification's
own ``basis`` (:mod:`sampling.domain.strength`, from branch fidelity: the most recent
exceeding result up to ``as_of``, PP-SEW-SURCHARGE), ``None`` in the normal category; the
event adds the ids of the samples it comes from.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from common.dates import add_months
from sampling.domain.strength import (
    PLEASANT_PRAIRIE_SEWER,
    PP_EXIT_MONTHS,
    SULLIVAN_SEWER,
    Classification,
    LabResult,
    StrengthLimits,
    classify,
    classify_pleasant_prairie,
    exceedances,
    exceeds,
)
from sampling.domain.sullivan import bod900_violation_dates
from sampling.events import (
    CategoryPeriod,
    ExitClock,
    IndustrialUser,
    PrivateSewer,
    Reassignment,
    StrengthBasis,
    StrengthCategoryChanged,
    StrengthClassified,
    ViolationDays,
)

NORMAL_CATEGORIES = frozenset({"A", "normal"})


@dataclass(frozen=True)
class FinalResult:
    """A finalised result: one sample, or two averaged by a staff decision (PP-SEW-RESAMPLE)."""

    sample_ids: tuple[str, ...]
    result: LabResult


def billing_period(day: date, months: int) -> tuple[date, date]:
    """The tenant's billing period ``[start, end)`` holding ``day`` (months aligned to January)."""
    start = date(day.year, (day.month - 1) // months * months + 1, 1)
    return start, add_months(start, months)


def _basis(
    basis: LabResult | None, final: Sequence[FinalResult], limits: StrengthLimits
) -> StrengthBasis | None:
    """The classification's basis with the ids of the exceeding samples of its day."""
    if basis is None:
        return None
    ids = tuple(
        sample_id
        for f in final
        if f.result.sampled_on == basis.sampled_on and exceeds(f.result, limits)
        for sample_id in f.sample_ids
    )
    return StrengthBasis(
        sampled_on=basis.sampled_on,
        sample_ids=ids,
        bod=basis.bod,
        tss=basis.tss,
        phosphorus=basis.phosphorus,
        tkn=basis.tkn,
        fog=basis.fog,
    )


def _reason(result: LabResult | None, limits: StrengthLimits) -> str:
    if result is None:
        return "no exceeding result"
    over = exceedances(result, limits)
    return "; ".join(
        f"{p.value} {result.concentration(p)} mg/l > {limits.limit(p)} ({limits.rule_id})" for p in over
    )


def _private_sewer(category: str, basis: LabResult | None, limits: StrengthLimits) -> PrivateSewer:
    """PP-SEW-PRIVATE: why a private sewer is in its category (the same rules as any user)."""
    if category in NORMAL_CATEGORIES:
        reason = f"private sewer discharging normal domestic-strength wastewater: Category {category}"
    else:
        reason = (
            f"private sewer discharging above the thresholds ({_reason(basis, limits)}): "
            f"listed as Category {category}"
        )
    return PrivateSewer(category=category, reason=f"{reason} (PP-SEW-PRIVATE)")


def classify_account(
    *,
    tenant: str,
    account_id: str,
    final: Iterable[FinalResult],
    as_of: date,
    limits: StrengthLimits,
    trigger: str,
    effective_from: date,
    previous_category: str | None,
    billing_period_months: int,
    now: datetime,
    exit_months: int = PP_EXIT_MONTHS,
    industrial_user: IndustrialUser | None = None,
    touched: Sequence[date] = (),
    private: bool = False,
) -> StrengthClassified:
    """The event for an account's classification as of ``as_of`` after ``trigger``.

    ``effective_from`` is the date the outcome applies from (the finalised result's sample
    date, or the anniversary of a PP-SEW-CAT-B-EXIT return). Sullivan events carry the
    SU-BOD900 violation days of each billing period holding ``effective_from`` or one of the
    ``touched`` dates (the new results' sample dates). A Pleasant Prairie ``private`` sewer
    is classified like any user and the event says so, citing PP-SEW-PRIVATE.
    """
    results = sorted(final, key=lambda f: f.result.sampled_on)
    lab_results = [f.result for f in results]
    if tenant == PLEASANT_PRAIRIE_SEWER:
        outcome: Classification = classify_pleasant_prairie(lab_results, as_of, limits, exit_months)
    else:
        outcome = classify(tenant, lab_results, as_of, limits)
    normal = outcome.category in NORMAL_CATEGORIES
    basis = outcome.basis

    reassignment = None
    if outcome.category != previous_category and outcome.history:
        last = outcome.history[-1]
        why = (
            _reason(basis, limits)
            if not normal
            else (
                f"{exit_months} compliant months from {last.basis_sampled_on} (PP-SEW-CAT-B-EXIT)"
                if last.rule_id == "PP-SEW-CAT-B-EXIT"
                else f"compliant result of {last.basis_sampled_on} ({last.rule_id})"
            )
        )
        reassignment = Reassignment(
            rule_id=last.rule_id,
            from_category=previous_category,
            to_category=outcome.category,
            effective_from=last.from_date,
            basis_sampled_on=last.basis_sampled_on,
            reason=why,
        )

    violation_days: tuple[ViolationDays, ...] = ()
    if tenant == SULLIVAN_SEWER:
        periods = sorted({billing_period(d, billing_period_months) for d in (effective_from, *touched)})
        violation_days = tuple(
            ViolationDays(period_start=start, period_end=end, days=len(dates), dates=dates)
            for start, end in periods
            for dates in [bod900_violation_dates(lab_results, start, end)]
        )

    exit_clock = None
    if outcome.exit_window is not None:
        exit_clock = ExitClock(
            started_on=outcome.exit_window.started_on,
            returns_on=outcome.exit_window.ends_on,
            months=exit_months,
        )

    fields = {
        "occurred_at": now,
        "tenant": tenant,
        "account_id": account_id,
        "trigger": trigger,
        "as_of": as_of,
        "category": outcome.category,
        "since": outcome.since,
        "effective_from": effective_from,
        "limits_rule_id": limits.rule_id,
        "basis": _basis(basis, results, limits),
        "history": tuple(
            CategoryPeriod(
                from_date=c.from_date,
                category=c.category,
                rule_id=c.rule_id,
                basis_sampled_on=c.basis_sampled_on,
            )
            for c in outcome.history
        ),
        "exit_clock": exit_clock,
        "reassignment": reassignment,
        "violation_days": violation_days,
        "industrial_user": industrial_user,
        "private_sewer": _private_sewer(outcome.category, basis, limits)
        if private and tenant == PLEASANT_PRAIRIE_SEWER
        else None,
    }
    if outcome.category != previous_category:
        return StrengthCategoryChanged(previous_category=previous_category, **fields)
    return StrengthClassified(**fields)
