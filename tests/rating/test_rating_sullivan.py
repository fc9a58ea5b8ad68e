"""Worked examples for sullivan-sewer (TARIFFS.md 2025-01-01, amounts are examples).

Quarterly: use 7.25/kgal (replacement 15%, treatment portion 62%); REC charge = 180,000.00
annual debt retirement / total RECs / 4 per REC per quarter; surcharge over BOD 400, TSS 250,
P 12 at 0.30, 0.28, 3.00 per lb with factor 8.34; BOD >= 900: 1,000.00 per violation day.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal as D

import pytest

from billing.domain.rating import Account, InvalidScenario, RatingInput

SU = "sullivan-sewer"
Q3, Q4 = date(2026, 7, 1), date(2026, 10, 1)


def amounts(bill):
    return [(line.rule_id, line.amount) for line in bill.lines]


def test_residential_use_and_rec_charges(rate):
    # SU-USE 30 kgal x 7.25 = 217.50: replacement 15% = 32.625 -> 32.63, O&M 184.87;
    # treatment portion 62% = 134.85. SU-REC 180,000 / 1,200 / 4 = 37.50 per REC x 1.
    bill = rate(
        SU, Q3, Q4, account=Account("residential", None, "5/8"), water_gallons=D(30000), total_recs=D(1200)
    )
    assert amounts(bill) == [("SU-USE", D("217.50")), ("SU-REC", D("37.50"))]
    assert bill.total == D("255.00")
    use = bill.lines[0]
    assert use.details["funds"] == {"replacement": D("32.63"), "om": D("184.87")}
    assert use.details["treatment_portion"]["amount"] == D("134.85")
    assert use.details["treatment_portion"]["rule_id"] == "SU-ANNUAL-NOTICE"
    assert bill.lines[1].rate == D("37.5")


def test_residential_rec_units_default_to_dwelling_units(rate):
    # 3 dwellings x 1.0 REC x 37.50 = 112.50.
    bill = rate(
        SU, Q3, Q4, account=Account("residential", None, "1", 3), water_gallons=D(0), total_recs=D(1200)
    )
    assert amounts(bill) == [("SU-REC", D("112.50"))]


def test_assigned_rec_units(rate):
    # 2.5 RECs x 37.50 = 93.75.
    account = Account("nonresidential", None, "2", 0, D("2.5"))
    bill = rate(SU, Q3, Q4, account=account, water_gallons=D(0), total_recs=D(1200))
    assert amounts(bill) == [("SU-REC", D("93.75"))]


def test_per_rec_rate_is_not_rounded(rate):
    # 180,000 / 1,300 / 4 = 34.615384... per REC (not rounded); x 3 = 103.846... -> 103.85.
    # (Rounding the per-REC rate first would give 34.62 x 3 = 103.86.)
    bill = rate(
        SU, Q3, Q4, account=Account("residential", None, "5/8", 3), water_gallons=D(0), total_recs=D(1300)
    )
    assert bill.lines[0].amount == D("103.85")
    assert bill.lines[0].rate > D("34.6153846")


def test_surcharge_and_bod900_penalty(rate):
    # 100,000 gal = 0.1 Mgal. BOD 950: (950 - 400) x 0.1 x 8.34 = 458.7 lb x 0.30 = 137.61.
    # TSS 250: at the limit, no line. SU-BOD900: 2 days x 1,000.00 = 2,000.00.
    # SU-USE 100 x 7.25 = 725.00; SU-REC 1.0 REC (assigned) x 37.50.  Total 2,900.11.
    bill = rate(
        SU,
        Q3,
        Q4,
        account=Account("nonresidential", None, "2", 0, D("1.0")),
        water_gallons=D(100000),
        strength={"bod": D(950), "tss": D(250)},
        bod900_violation_days=2,
        total_recs=D(1200),
    )
    assert amounts(bill) == [
        ("SU-USE", D("725.00")),
        ("SU-REC", D("37.50")),
        ("SU-SURCHARGE", D("137.61")),
        ("SU-BOD900", D("2000.00")),
    ]
    assert bill.total == D("2900.11")
    assert bill.lines[3].details["funds"] == {"replacement": D("0.00"), "om": D("2000.00")}


# --- SU-REC units, SU-BOD900 days, the SU-SURCHARGE switch (issue 8) ----------------------


def test_a_nonresidential_account_must_have_its_rec_units(rate):
    # SU-REC: no default of 1.0 (one REC for a large industrial user would under-bill it).
    with pytest.raises(InvalidScenario) as err:
        rate(
            SU,
            Q3,
            Q4,
            account=Account("nonresidential", None, "2", 0),
            water_gallons=D(0),
            total_recs=D(1200),
        )
    assert err.value.field == "account.rec_units"


@pytest.mark.parametrize("days", [93, 100])
def test_more_violation_days_than_the_quarter_has_are_refused(rate, days):
    # 2026-07-01 .. 2026-10-01 has 31 + 31 + 30 = 92 days. Issue 8: 100 days billed
    # 100 x 1,000.00 = 100,000.00; now refused naming the field.
    with pytest.raises(InvalidScenario) as err:
        rate(
            SU,
            Q3,
            Q4,
            account=Account("residential", None, "5/8"),
            water_gallons=D(0),
            total_recs=D(1200),
            bod900_violation_days=days,
        )
    assert err.value.field == "bod900_violation_days"


def test_every_day_of_the_quarter_can_be_a_violation_day(rate):
    # 92 days x 1,000.00 = 92,000.00; REC 37.50.
    bill = rate(
        SU,
        Q3,
        Q4,
        account=Account("residential", None, "5/8"),
        water_gallons=D(0),
        total_recs=D(1200),
        bod900_violation_days=92,
    )
    assert amounts(bill) == [("SU-REC", D("37.50")), ("SU-BOD900", D("92000.00"))]


def test_bod_of_900_without_violation_days_is_surcharged_but_not_penalised(rate):
    # The concentration in force may come from an earlier sample; a violation day is a
    # sampled day in the period (SU-BOD900). 20,000 gal = 0.02 Mgal:
    # (950 - 400) x 0.02 x 8.34 = 91.74 lb x 0.30 = 27.522 -> 27.52; SU-USE 20 x 7.25 = 145.00;
    # SU-REC 2 RECs x 37.50 = 75.00; no SU-BOD900 line.
    bill = rate(
        SU,
        Q3,
        Q4,
        account=Account("nonresidential", None, "2", 0, D("2")),
        water_gallons=D(20000),
        strength={"bod": D(950)},
        total_recs=D(1200),
    )
    assert amounts(bill) == [("SU-USE", D("145.00")), ("SU-REC", D("75.00")), ("SU-SURCHARGE", D("27.52"))]


@pytest.mark.parametrize("applies", [True, False])
def test_the_surcharge_is_a_tariff_switch(engine_with, applies):
    # 100,000 gal, BOD 950 and 2 violation days (as test_surcharge_and_bod900_penalty):
    # on:  SU-USE 725.00 + SU-REC 37.50 + SU-SURCHARGE 137.61 + SU-BOD900 2,000.00 = 2,900.11
    # off: no surcharge, a note says why; the BOD 900 penalty stays (its own rule):
    #      725.00 + 37.50 + 2,000.00 = 2,762.50
    engine = engine_with(SU, surcharge_applies=applies)
    bill = engine.rate(
        RatingInput(
            SU,
            Q3,
            Q4,
            Account("nonresidential", None, "2", 0, D("1.0")),
            water_gallons=D(100000),
            strength={"bod": D(950), "tss": D(250)},
            bod900_violation_days=2,
            total_recs=D(1200),
        )
    )
    if applies:
        assert ("SU-SURCHARGE", D("137.61")) in amounts(bill)
        assert bill.total == D("2900.11")
        assert bill.notes == ()
    else:
        assert [line.rule_id for line in bill.lines] == ["SU-USE", "SU-REC", "SU-BOD900"]
        assert bill.total == D("2762.50")
        (note,) = bill.notes
        assert note.rule_id == "SU-SURCHARGE"
        assert "switched off" in note.text and "bod 950 mg/l over 400" in note.text
