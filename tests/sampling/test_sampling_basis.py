"""The basis of the surcharge: the result whose concentrations billing uses while a user is
in the above-normal category (PP-SEW-SURCHARGE, GR-HIGH, SU-SURCHARGE; CONTRACTS.md
`classify` ``basis``)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from sampling.domain.strength import (
    LabResult,
    classify_grafton,
    classify_pleasant_prairie,
    classify_sullivan,
)


def d(iso: str) -> date:
    return date.fromisoformat(iso)


def pp(iso: str, bod: str, tss: str = "150") -> LabResult:
    return LabResult(d(iso), bod=Decimal(bod), tss=Decimal(tss), phosphorus=Decimal("4"), fog=Decimal("40"))


def test_category_b_bills_on_the_exceeding_result_through_the_compliant_24_months():
    # B on 2025-01-15 (BOD 220 > 180), then compliant monthly samples (BOD 150) from
    # 2025-02-15: the 24 months end 2027-02-15, so on 2026-06-30 the user is still B and
    # the surcharge basis is the 2025-01-15 result, not the lower compliant ones.
    results = [pp("2025-01-15", "220")] + [pp(f"2025-{m:02d}-15", "150") for m in range(2, 13)]
    result = classify_pleasant_prairie(results, d("2026-06-30"))
    assert result.category == "B"
    assert result.basis == results[0]
    assert result.to_contract_dict()["basis"] == {
        "sampled_on": "2025-01-15",
        "bod": "220",
        "tss": "150",
        "phosphorus": "4",
        "fog": "40",
    }


def test_a_newer_exceeding_result_replaces_the_basis_even_when_lower():
    # 2025-01-15 BOD 300, compliant 2025-02-15, then 2025-06-15 BOD 190 (> 180): the basis
    # is the most recent exceeding result, 190, not the higher 300.
    results = [pp("2025-01-15", "300"), pp("2025-02-15", "150"), pp("2025-06-15", "190")]
    assert classify_pleasant_prairie(results, d("2025-12-31")).basis == results[2]


def test_return_to_category_a_drops_the_basis():
    # Compliant from 2025-02-15: Category A from 2027-02-15, after which no surcharge.
    results = [pp("2025-01-15", "220"), pp("2025-02-15", "150")]
    assert classify_pleasant_prairie(results, d("2027-02-14")).basis == results[0]
    after = classify_pleasant_prairie(results, d("2027-02-15"))
    assert after.category == "A"
    assert after.basis is None
    assert after.to_contract_dict()["basis"] is None


def test_results_after_as_of_are_not_the_basis():
    results = [pp("2025-01-15", "220"), pp("2025-03-15", "400")]
    assert classify_pleasant_prairie(results, d("2025-02-28")).basis == results[0]


def test_grafton_high_basis_is_the_latest_result_and_normal_has_none():
    # TKN 25 > 20 on 2026-02-01: high, basis that result (only TKN measured, only TKN shown).
    high = LabResult(d("2026-02-01"), tkn=Decimal("25"))
    result = classify_grafton([high], d("2026-06-30"))
    assert result.to_contract_dict()["basis"] == {"sampled_on": "2026-02-01", "tkn": "25"}
    # A compliant result on 2026-05-01 makes the user normal again (GR-REASSIGN): no basis.
    back = classify_grafton([high, LabResult(d("2026-05-01"), tkn=Decimal("15"))], d("2026-06-30"))
    assert back.category == "normal"
    assert back.basis is None


def test_sullivan_above_normal_basis():
    result = classify_sullivan([LabResult(d("2026-02-01"), bod=Decimal("450.5"))], d("2026-06-30"))
    assert result.category == "above-normal"
    assert result.to_contract_dict()["basis"] == {"sampled_on": "2026-02-01", "bod": "450.5"}


def test_two_exceeding_results_on_one_day_are_one_basis_at_the_higher_concentrations():
    # Same day: BOD 250 / TSS 210 and BOD 230 / TSS 260: basis BOD 250, TSS 260 (the day's
    # highest), whatever the order the two results arrive in.
    a = LabResult(d("2025-01-15"), bod=Decimal("250"), tss=Decimal("210"))
    b = LabResult(d("2025-01-15"), bod=Decimal("230"), tss=Decimal("260"))
    expected = LabResult(d("2025-01-15"), bod=Decimal("250"), tss=Decimal("260"))
    assert classify_pleasant_prairie([a, b], d("2025-12-31")).basis == expected
    assert classify_pleasant_prairie([b, a], d("2025-12-31")).basis == expected


def test_a_compliant_result_on_the_exceeding_day_is_not_part_of_the_basis():
    over = LabResult(d("2025-01-15"), bod=Decimal("250"))
    under = LabResult(d("2025-01-15"), bod=Decimal("100"), tss=Decimal("190"))
    assert classify_pleasant_prairie([over, under], d("2025-12-31")).basis == over
