"""PP-SEW-SPLIT: a discharger's resample request after a split, decided on the difference."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from sampling.domain.samples import (
    AccountInfo,
    AccountRecord,
    DecisionRefused,
    StoredResult,
    decide_split_resample,
)

PP = "pleasant-prairie-sewer"
TWENTY = Decimal(20)


def result(
    sample_id: str, parameter: str, value: str, kind: str = "routine", of: str | None = None
) -> StoredResult:
    return StoredResult(sample_id, parameter, Decimal(value), date(2025, 11, 3), kind, of, "Acme")


def record(*results: StoredResult) -> AccountRecord:
    return AccountRecord(
        info=AccountInfo(tenant=PP, account_id="PP-0005", sampling_point="MH-5"), results=list(results)
    )


UTILITY = (result("ORIG-5", "bod", "900"), result("ORIG-5", "tss", "240"))


def test_a_significant_difference_in_one_parameter_accepts_the_request_at_the_dischargers_cost() -> None:
    # BOD 400 against 900: a difference of 500 > 20% of 900 (180); TSS 230 against 240: 10 <= 48.
    split = (
        result("SPLIT-5", "bod", "400", "split", "ORIG-5"),
        result("SPLIT-5", "tss", "230", "split", "ORIG-5"),
    )
    outcome = decide_split_resample(record(*UTILITY, *split), "SPLIT-5", TWENTY)
    assert outcome.accepted and outcome.rule_id == "PP-SEW-SPLIT"
    assert outcome.original_id == "ORIG-5"
    assert outcome.differences == {"bod": Decimal(-500), "tss": Decimal(-10)}
    assert outcome.significant == ("bod",)
    assert "discharger's cost" in outcome.reason


def test_a_difference_within_the_tolerance_is_refused_with_the_figures() -> None:
    # BOD 880 against 900: 20 <= 180 (20% of 900). Exactly 20% (720) is not more than 20%.
    for value in ("880", "720", "1080"):
        split = result("SPLIT-5", "bod", value, "split", "ORIG-5")
        outcome = decide_split_resample(record(*UTILITY, split), "SPLIT-5", TWENTY)
        assert not outcome.accepted and outcome.significant == ()
        assert f"bod {value} mg/l against 900 mg/l" in outcome.reason
    # One mg/l more is significant: 181 > 180.
    split = result("SPLIT-5", "bod", "1081", "split", "ORIG-5")
    assert decide_split_resample(record(*UTILITY, split), "SPLIT-5", TWENTY).accepted


def test_a_sample_already_resampled_is_not_resampled_again() -> None:
    split = result("SPLIT-5", "bod", "400", "split", "ORIG-5")
    resample = result("RE-5", "bod", "500", "resample", "ORIG-5")
    outcome = decide_split_resample(record(*UTILITY, split, resample), "SPLIT-5", TWENTY)
    assert not outcome.accepted and "already been resampled (RE-5)" in outcome.reason


def test_only_a_split_sample_can_carry_the_request() -> None:
    with pytest.raises(DecisionRefused) as refused:
        decide_split_resample(record(*UTILITY), "ORIG-5", TWENTY)
    assert refused.value.field == "sample_id"
