"""Samples per account: which results are final, resample flags and staff decisions.

- **Final results** (what classification sees): a routine sample's results count as soon
  as they are taken in; a resample counts only once staff decided for it (or to average
  it with the original); a discharger's split sample (PP-SEW-SPLIT) never counts: it is
  kept beside the utility's sample and shown with it. pH is stored but has no strength
  limit, so it is not part of a :class:`LabResult`.
- **Resample flags** (PP-SEW-RESAMPLE): a routine result far from the account's own
  history (above ``factor`` times, or below 1/``factor`` of, the median of its last
  results of that parameter, with at least ``MIN_HISTORY`` of them) is flagged so a
  resample can be taken that month.
- **Decisions** (PP-SEW-RESAMPLE): with a resample, staff choose the most appropriate
  sample or average the two, recording who decided and why. An average is per parameter
  (a parameter measured in only one of the two keeps that value), dated on the original
  sample's date.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from statistics import median

from sampling.domain.classifying import FinalResult
from sampling.domain.errors import InvalidInput, SamplingError
from sampling.domain.strength import LabResult, Parameter

MIN_HISTORY = 3
HISTORY_DEPTH = 12
DEFAULT_DEVIATION_FACTOR = Decimal(3)
DEFAULT_SPLIT_DIFFERENCE_PERCENT = Decimal(20)
"""PP-SEW-SPLIT (interpretation): a discharger's split result differing from the utility's
by more than this percent of the utility's value, in any parameter, is significant."""
DECISIONS = ("original", "resample", "average")


@dataclass(frozen=True)
class StoredResult:
    """One parameter of one sample as stored (value in mg/l; pH in standard units)."""

    sample_id: str
    parameter: str
    value: Decimal
    collected_on: date
    kind: str = "routine"
    resample_of: str | None = None
    lab: str = ""
    analysed_on: date | None = None
    reported: str = ""


@dataclass(frozen=True)
class Decision:
    """A staff decision on a resampled result (PP-SEW-RESAMPLE), with who and why."""

    original_id: str
    resample_id: str
    choice: str  # original | resample | average
    decided_by: str
    reason: str
    decided_at: datetime


@dataclass(frozen=True)
class AccountInfo:
    """What sampling knows of an account: registered with its sampling point."""

    tenant: str
    account_id: str
    sampling_point: str
    satellite: bool = False
    nonresidential: bool = True
    sic_division: str | None = None
    # SU-INDUSTRIAL inputs (Sullivan): average daily flow, governmental or not, toxic finding.
    avg_daily_flow_gal: Decimal | None = None
    nongovernmental: bool = True
    discharges_toxic: bool = False
    # PP-SEW-PRIVATE: a privately owned sewer discharging into the public sewer.
    private: bool = False


@dataclass
class AccountRecord:
    info: AccountInfo | None
    results: list[StoredResult] = field(default_factory=list)
    decisions: dict[str, Decision] = field(default_factory=dict)
    category: str | None = None
    version: int = 0
    exit_returns_on: date | None = None  # a running PP-SEW-CAT-B-EXIT clock's end, as stored
    # The lab file whose intake recorded the classification last: a redelivery of that file
    # finds its own classification there and does not classify again (issue 26).
    classified_by: str | None = None

    def samples(self) -> dict[str, list[StoredResult]]:
        by_sample: dict[str, list[StoredResult]] = {}
        for r in self.results:
            by_sample.setdefault(r.sample_id, []).append(r)
        return by_sample


class DecisionRefused(SamplingError):
    """A decision that cannot be recorded (no resample yet, already decided otherwise)."""


def lab_result(rows: Sequence[StoredResult], sampled_on: date | None = None) -> LabResult | None:
    """The strength parameters of one sample as a LabResult (None when only pH was measured)."""
    values = {r.parameter: r.value for r in rows if r.parameter in _STRENGTH}
    if not values:
        return None
    day = sampled_on or rows[0].collected_on
    return LabResult(sampled_on=day, **values)


_STRENGTH = frozenset(p.value for p in Parameter)


def average(a: Sequence[StoredResult], b: Sequence[StoredResult], sampled_on: date) -> LabResult | None:
    """Per-parameter mean of two samples (exact Decimal; one-sided parameters kept as they are)."""
    first = {r.parameter: r.value for r in a if r.parameter in _STRENGTH}
    second = {r.parameter: r.value for r in b if r.parameter in _STRENGTH}
    values: dict[str, Decimal] = {}
    for parameter in (p.value for p in Parameter):
        pair = [v for v in (first.get(parameter), second.get(parameter)) if v is not None]
        if pair:
            values[parameter] = sum(pair, Decimal(0)) / len(pair)
    return LabResult(sampled_on=sampled_on, **values) if values else None


def final_results(record: AccountRecord) -> list[FinalResult]:
    """The results classification uses (module docstring), oldest first."""
    samples = record.samples()
    decided_resamples = {d.resample_id: d for d in record.decisions.values()}
    final: list[FinalResult] = []
    for sample_id, rows in samples.items():
        kind = rows[0].kind
        if kind == "split":
            continue
        if kind == "resample":
            decision = decided_resamples.get(sample_id)
            if decision is None or decision.choice != "resample":
                continue  # undecided, or the original/average stands for it
            result = lab_result(rows)
            if result is not None:
                final.append(FinalResult((sample_id,), result))
            continue
        decision = record.decisions.get(sample_id)
        if decision is not None and decision.choice == "resample":
            continue
        if decision is not None and decision.choice == "average":
            result = average(rows, samples.get(decision.resample_id, []), rows[0].collected_on)
            ids: tuple[str, ...] = (sample_id, decision.resample_id)
        else:
            result = lab_result(rows)
            ids = (sample_id,)
        if result is not None:
            final.append(FinalResult(ids, result))
    return sorted(final, key=lambda f: (f.result.sampled_on, f.sample_ids))


def deviation_flags(
    history: Iterable[FinalResult],
    new: LabResult,
    factor: Decimal = DEFAULT_DEVIATION_FACTOR,
) -> list[str]:
    """Reasons to resample ``new`` (PP-SEW-RESAMPLE), empty when it is in line with history."""
    earlier = sorted(
        (f.result for f in history if f.result.sampled_on < new.sampled_on), key=lambda r: r.sampled_on
    )[-HISTORY_DEPTH:]
    reasons: list[str] = []
    for parameter, value in new.concentrations().items():
        past = [v for r in earlier if (v := r.concentration(parameter)) is not None]
        if len(past) < MIN_HISTORY:
            continue
        middle = Decimal(median(past))
        if middle > 0 and (value > middle * factor or value * factor < middle):
            reasons.append(
                f"{parameter.value} {value} mg/l is far from the median {middle} mg/l of the "
                f"last {len(past)} results (factor {factor})"
            )
    return reasons


def check_decision(
    record: AccountRecord,
    original_id: str,
    choice: str,
    decided_by: str,
    reason: str,
    decided_at: datetime,
) -> Decision:
    """Validate a staff decision on ``original_id`` and its resample (PP-SEW-RESAMPLE)."""
    if choice not in DECISIONS:
        raise InvalidInput("decision", f"{choice!r} is not one of {', '.join(DECISIONS)}")
    if not reason.strip():
        raise InvalidInput("reason", "a decision records why it was made")
    if not decided_by:
        raise InvalidInput("decided_by", "a decision records who made it")
    samples = record.samples()
    original = samples.get(original_id)
    if original is None or original[0].kind != "routine":
        raise DecisionRefused("sample_id", f"{original_id} is not a routine sample of this account")
    resamples = sorted(
        sid
        for sid, rows in samples.items()
        if rows[0].kind == "resample" and rows[0].resample_of == original_id
    )
    if not resamples:
        raise DecisionRefused("sample_id", f"no resample of {original_id} has been taken in yet")
    return Decision(
        original_id=original_id,
        resample_id=resamples[-1],
        choice=choice,
        decided_by=decided_by,
        reason=reason.strip(),
        decided_at=decided_at,
    )


@dataclass(frozen=True)
class SplitResampleOutcome:
    """PP-SEW-SPLIT: a discharger's resample request after a split, accepted or refused."""

    split_id: str
    original_id: str
    accepted: bool
    differences: dict[str, Decimal]  # the discharger's minus the utility's, mg/l
    significant: tuple[str, ...]
    reason: str
    rule_id: str = "PP-SEW-SPLIT"


def decide_split_resample(record: AccountRecord, split_id: str, percent: Decimal) -> SplitResampleOutcome:
    """A discharger may request a resample, at its own cost, on a significant difference
    between its split result and the utility's (PP-SEW-SPLIT): a parameter whose results
    differ by more than ``percent`` of the utility's value. Refused, with the figures, when
    none does or when the utility's sample has already been resampled."""
    samples = record.samples()
    split = samples.get(split_id)
    if split is None or split[0].kind != "split":
        raise DecisionRefused("sample_id", f"{split_id} is not a discharger's split sample of this account")
    original_id = split[0].resample_of or ""
    original = samples.get(original_id)
    if original is None:
        raise DecisionRefused("sample_id", f"{split_id} splits no sample of this account")
    utility = {r.parameter: r.value for r in original}
    differences = {r.parameter: r.value - utility[r.parameter] for r in split if r.parameter in utility}
    significant = tuple(p for p, d in sorted(differences.items()) if abs(d) * 100 > percent * utility[p])
    figures = "; ".join(
        f"{p} {utility[p] + d} mg/l against {utility[p]} mg/l (difference {d})"
        for p, d in sorted(differences.items())
    )
    resampled = sorted(
        sid
        for sid, rows in samples.items()
        if rows[0].kind == "resample" and rows[0].resample_of == original_id
    )

    def outcome(accepted: bool, reason: str) -> SplitResampleOutcome:
        return SplitResampleOutcome(split_id, original_id, accepted, differences, significant, reason)

    if not significant:
        return outcome(
            False, f"no significant difference (more than {percent}% of the utility's value): {figures}"
        )
    if resampled:
        return outcome(False, f"{original_id} has already been resampled ({resampled[-1]})")
    return outcome(
        True,
        f"significant difference in {', '.join(significant)}: {figures}; {original_id} is resampled "
        "at the discharger's cost",
    )
