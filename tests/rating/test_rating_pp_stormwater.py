"""Worked examples for pleasant-prairie-stormwater (TARIFFS.md 2023-01-01).

Base charge 2.00 per parcel per month (example), ERU rate 6.00 per ERU per month
(published); credit nonresidential only, capped at 30% of the ERU charge. ERUs arrive
already determined (and rounded to 2 decimals) by the stormwater service.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal as D

from billing.domain.rating import ParcelCharge, RatingInput

SW = "pleasant-prairie-stormwater"
JUL, AUG = date(2026, 7, 1), date(2026, 8, 1)


def amounts(bill):
    return [(line.rule_id, line.amount) for line in bill.lines]


def test_standard_residential_parcel(rate):
    # PP-CWU-BASE 2.00 + PP-CWU-ERU 1.00 x 6.00 = 6.00 -> 8.00.
    bill = rate(SW, JUL, AUG, parcel=ParcelCharge("residential", D("1.00"), eru_details={"eru": "1.00"}))
    assert amounts(bill) == [("PP-CWU-BASE", D("2.00")), ("PP-CWU-ERU", D("6.00"))]
    assert bill.total == D("8.00")
    eru_line = bill.lines[1]
    assert (eru_line.quantity, eru_line.unit, eru_line.rate) == (D("1.00"), "ERU", D("6.00"))
    assert eru_line.details["determination"] == {"eru": "1.00"}


def test_nonresidential_credit_is_a_negative_line_on_the_eru_charge_only(rate):
    # ERU 12.34 x 6.00 = 74.04; credit 20%: 74.04 x 0.20 = 14.808 -> 14.81 -> -14.81.
    # Total 2.00 + 74.04 - 14.81 = 61.23 (the base charge is never credited).
    bill = rate(SW, JUL, AUG, parcel=ParcelCharge("nonresidential", D("12.34"), D(20)))
    assert amounts(bill) == [
        ("PP-CWU-BASE", D("2.00")),
        ("PP-CWU-ERU", D("74.04")),
        ("PP-CWU-CREDIT", D("-14.81")),
    ]
    assert bill.total == D("61.23")
    credit = bill.lines[2]
    assert credit.rate == D("-1.2")  # per ERU: 6.00 x 20 / 100
    assert credit.details["applied_percent"] == D(20)


def test_credit_is_rounded_on_its_magnitude(rate):
    # ERU 1.75 x 6.00 = 10.50; 15%: 1.575 -> 1.58 (half-up on the magnitude) -> -1.58.
    bill = rate(SW, JUL, AUG, parcel=ParcelCharge("nonresidential", D("1.75"), D(15)))
    assert bill.lines[2].amount == D("-1.58")


def test_credit_is_capped_at_thirty_percent(rate):
    # The scenario parser refuses a percent above 30; the engine caps it anyway.
    # ERU 10 x 6.00 = 60.00; 30% = 18.00.
    bill = rate(SW, JUL, AUG, parcel=ParcelCharge("nonresidential", D(10), D(45)))
    assert bill.lines[2].amount == D("-18.00")
    assert bill.lines[2].details["applied_percent"] == D(30)


def test_no_credit_for_a_residential_parcel(rate):
    bill = rate(SW, JUL, AUG, parcel=ParcelCharge("residential", D(2), D(20)))
    assert [line.rule_id for line in bill.lines] == ["PP-CWU-BASE", "PP-CWU-ERU"]


def test_exempt_parcels_have_no_charges(rate):
    # PP-CWU-EXEMPT: agricultural land and right-of-way pay nothing, not even the base charge.
    for use in ("agricultural", "right_of_way"):
        bill = rate(SW, JUL, AUG, parcel=ParcelCharge(use, D(0)))  # type: ignore[arg-type]
        assert bill.lines == ()
        assert bill.total == D("0.00")


def test_a_parcel_with_zero_erus_still_pays_the_base_charge(rate):
    bill = rate(SW, JUL, AUG, parcel=ParcelCharge("nonresidential", D(0)))
    assert amounts(bill) == [("PP-CWU-BASE", D("2.00"))]


def test_a_credit_that_rounds_past_the_cap_is_held_to_the_cap(engine):
    # ERU 0.01 x 6.00 = 0.06 ERU charge; 30% of it is 0.018, which half-up would make 0.02
    # (33% of the charge). The cap is the ordinance's hard limit, so the credit is held to
    # 0.018 rounded down: 0.01.
    from billing.domain.rating.model import RatingInput

    inp = RatingInput(
        tenant="pleasant-prairie-stormwater",
        period_start=date(2026, 7, 1),
        period_end=date(2026, 8, 1),
        parcel=ParcelCharge(use="nonresidential", eru=D("0.01"), credit_percent=D("30")),
    )
    lines = {ln.rule_id: ln for ln in engine.rate(inp).lines}
    assert lines["PP-CWU-ERU"].amount == D("0.06")
    assert lines["PP-CWU-CREDIT"].amount == D("-0.01")
    assert lines["PP-CWU-CREDIT"].details["held_to_cap"] == D("0.01")


# --- a zero still says why (issue 8) -------------------------------------------------------


def test_an_exempt_parcel_s_zero_bill_says_why(rate):
    # PP-CWU-EXEMPT: no lines, total 0.00, and a note naming the rule.
    bill = rate(SW, JUL, AUG, parcel=ParcelCharge("agricultural", D(0)))
    assert (bill.lines, bill.total) == ((), D("0.00"))
    assert [(n.rule_id, n.text) for n in bill.notes] == [("PP-CWU-EXEMPT", "agricultural land is exempt")]
    bill = rate(SW, JUL, AUG, parcel=ParcelCharge("right_of_way", D(0)))
    assert [(n.rule_id, n.text) for n in bill.notes] == [("PP-CWU-EXEMPT", "public right-of-way is exempt")]


def test_a_credit_held_to_the_cap_says_so_and_carries_the_cap(engine):
    # ERU 0.01 x 6.00 = 0.06; 30% of it is 0.018: half-up 0.02 would pass the cap, so the
    # credit is 0.018 rounded down = 0.01. Quantity x rate (0.01 x -1.80 = -0.018 -> -0.02)
    # is not the amount: the description says "held to the cap" and the details carry the
    # ERU charge and cap percent, so 0.06 x 30 / 100 = 0.018, rounded down, gives 0.01.
    inp = RatingInput(
        SW, JUL, AUG, parcel=ParcelCharge(use="nonresidential", eru=D("0.01"), credit_percent=D("30"))
    )
    bill = engine.rate(inp)
    credit = bill.lines[-1]
    assert credit.rule_id == "PP-CWU-CREDIT"
    assert credit.amount == D("-0.01")
    assert "held to the cap: 30% of the ERU charge 0.06, rounded down" in credit.description
    assert (credit.details["eru_charge"], credit.details["cap_percent"]) == (D("0.06"), D(30))
    assert credit.details["held_to_cap"] == D("0.01") and credit.details["before_cap"] == D("-0.02")
    (note,) = bill.notes
    assert note.rule_id == "PP-CWU-CREDIT"
    assert "0.018, held to 0.01 (rounded down) instead of 0.02 (half-up)" in note.text


def test_a_credit_held_to_zero_leaves_only_a_note(engine_with):
    # With an ERU rate of 1.00 (a changed tariff): ERU 0.02 x 1.00 = 0.02 ERU charge; 30% is
    # 0.006, half-up 0.01, but the cap rounded down is 0.00: no credit line, a note.
    engine = engine_with(SW, eru_rate=D("1.00"))
    inp = RatingInput(
        SW, JUL, AUG, parcel=ParcelCharge(use="nonresidential", eru=D("0.02"), credit_percent=D("30"))
    )
    bill = engine.rate(inp)
    assert amounts(bill) == [("PP-CWU-BASE", D("2.00")), ("PP-CWU-ERU", D("0.02"))]
    (note,) = bill.notes
    assert note.rule_id == "PP-CWU-CREDIT" and "held to 0.00" in note.text
