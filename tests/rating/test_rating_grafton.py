"""Worked examples for grafton-sewer (TARIFFS.md 2025-01-01, amounts are examples).

Quarterly: 5/8" 45.00, 1" 75.00, 6" 1,050.00; volume 6.50/kgal; unmetered flat 162.00 for
18 kgal, excess at 6.50; high strength over BOD 200, TSS 250, P 6, TKN 20 at 0.45, 0.38,
5.50, 1.10 per lb with factor 8.345; replacement fund 12% of service and volume charges;
septage 45.00/kgal.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal as D

import pytest

from billing.domain.rating import Account, InvalidScenario, RateNotPublished, rate_septage

GR = "grafton-sewer"
Q3, Q4 = date(2026, 7, 1), date(2026, 10, 1)


def amounts(bill):
    return [(line.rule_id, line.amount) for line in bill.lines]


def test_residential_five_eighths_with_23000_gallons(rate):
    # GR-SVC 45.00; GR-VOL 23 kgal x 6.50 = 149.50; total 194.50.
    # Funds 12%: 45.00 -> 5.40 replacement / 39.60 O&M; 149.50 -> 17.94 / 131.56.
    bill = rate(GR, Q3, Q4, account=Account("residential", None, "5/8"), water_gallons=D(23000))
    assert amounts(bill) == [("GR-SVC", D("45.00")), ("GR-VOL", D("149.50"))]
    assert bill.total == D("194.50")
    assert bill.lines[0].details["funds"] == {"replacement": D("5.40"), "om": D("39.60")}
    assert bill.lines[1].details["funds"] == {"replacement": D("17.94"), "om": D("131.56")}
    assert bill.lines[0].unit == "quarter"


def test_fund_split_rounds_the_replacement_share_half_up(rate):
    # 1" 75.00 -> 9.00 / 66.00. Volume 1,125 gal = 1.125 kgal x 6.50 = 7.3125 -> 7.31;
    # 12% of 7.31 = 0.8772 -> 0.88 replacement, 6.43 O&M.
    bill = rate(GR, Q3, Q4, account=Account("residential", None, "1"), water_gallons=D(1125))
    assert bill.lines[0].details["funds"] == {"replacement": D("9.00"), "om": D("66.00")}
    assert bill.lines[1].amount == D("7.31")
    assert bill.lines[1].details["funds"] == {"replacement": D("0.88"), "om": D("6.43")}


def test_high_strength_one_line_per_parameter_with_factor_8_345(rate):
    # 23,000 gal = 0.023 Mgal.
    # BOD 250: 50 x 0.023 x 8.345 = 9.59675 lb x 0.45 = 4.3185375 -> 4.32
    # TSS 300: 50 x 0.023 x 8.345 = 9.59675 lb x 0.38 = 3.646765 -> 3.65
    # P 8:      2 x 0.023 x 8.345 = 0.38387 lb x 5.50 = 2.111285 -> 2.11
    # TKN 25:   5 x 0.023 x 8.345 = 0.959675 lb x 1.10 = 1.0556425 -> 1.06
    # FOG 50: no Grafton limit -> no line.  Total 194.50 + 11.14 = 205.64.
    strength = {"bod": D(250), "tss": D(300), "phosphorus": D(8), "tkn": D(25), "fog": D(50)}
    bill = rate(
        GR, Q3, Q4, account=Account("residential", None, "5/8"), water_gallons=D(23000), strength=strength
    )
    high = [line for line in bill.lines if line.rule_id == "GR-HIGH"]
    assert [(h.details["parameter"], h.quantity, h.amount) for h in high] == [
        ("bod", D("9.59675"), D("4.32")),
        ("tss", D("9.59675"), D("3.65")),
        ("phosphorus", D("0.38387"), D("2.11")),
        ("tkn", D("0.959675"), D("1.06")),
    ]
    assert bill.total == D("205.64")
    # Decision (module docstring): high-strength revenue is O&M.
    assert high[0].details["funds"] == {"replacement": D("0.00"), "om": D("4.32")}


def test_unmetered_flat_charge_alone_up_to_18_kgal(rate):
    # GR-UNMETERED 162.00; funds 12%: 19.44 / 142.56.
    bill = rate(GR, Q3, Q4, account=Account("residential"), estimated_gallons=D(18000))
    assert amounts(bill) == [("GR-UNMETERED", D("162.00"))]
    assert bill.lines[0].details["funds"] == {"replacement": D("19.44"), "om": D("142.56")}


def test_unmetered_excess_over_18_kgal_at_the_volume_rate(rate):
    # Estimate 25,000 gal: 25 - 18 = 7 kgal x 6.50 = 45.50 (funds 5.46 / 40.04); total 207.50.
    bill = rate(GR, Q3, Q4, account=Account("nonresidential", None, None, 0), estimated_gallons=D(25000))
    assert amounts(bill) == [("GR-UNMETERED", D("162.00")), ("GR-UNMETERED", D("45.50"))]
    assert bill.lines[1].quantity == D(7)
    assert bill.lines[1].details["funds"] == {"replacement": D("5.46"), "om": D("40.04")}
    assert bill.total == D("207.50")


def test_six_inch_meter(rate):
    bill = rate(GR, Q3, Q4, account=Account("nonresidential", None, "6", 0), water_gallons=D(0))
    assert amounts(bill) == [("GR-SVC", D("1050.00"))]


def test_a_meter_size_without_a_rate_is_an_error(rate):
    with pytest.raises(RateNotPublished) as err:
        rate(GR, Q3, Q4, account=Account("residential", None, "7/8"), water_gallons=D(1000))
    assert err.value.field == "account.meter_size"
    assert "grafton-sewer@2025-01-01" in str(err.value)


def test_septage_disposal(book):
    # GR-SEPTAGE-CHARGE: 3,500 gal = 3.5 kgal x 45.00 = 157.50 (O&M).
    tariff = book.in_force(GR, date(2026, 7, 1))
    line = rate_septage(D(3500), tariff)
    assert line is not None
    assert (line.rule_id, line.quantity, line.rate, line.amount) == (
        "GR-SEPTAGE-CHARGE",
        D("3.5"),
        D("45.00"),
        D("157.50"),
    )
    assert line.details["funds"] == {"replacement": D("0.00"), "om": D("157.50")}
    assert rate_septage(D(0), tariff) is None


# --- GR-HIGH is for metered service (issue 8) --------------------------------------------


def test_unmetered_account_with_high_strength_is_refused_naming_strength(rate):
    # Issue 8: unmetered nonresidential, 30,000 gal estimated, BOD 300. It used to bill
    # 162.00 flat + (30 - 18) kgal x 6.50 = 78.00 + GR-HIGH on 0.03 Mgal:
    # (300 - 200) x 0.03 x 8.345 = 25.035 lb x 0.45 = 11.27, total 251.27. The high strength
    # rates are for metered service (GR-HIGH): refused until the account is metered.
    with pytest.raises(InvalidScenario) as err:
        rate(
            GR,
            Q3,
            Q4,
            account=Account("nonresidential", None, None, 0),
            estimated_gallons=D(30000),
            strength={"bod": D(300)},
        )
    assert err.value.field == "strength"
    assert "metered service" in err.value.message


def test_unmetered_account_at_normal_strength_is_billed_as_unmetered(rate):
    # BOD 200 and TKN 20 are at their limits (normal strength): 162.00 + 12 x 6.50 = 240.00.
    bill = rate(
        GR,
        Q3,
        Q4,
        account=Account("nonresidential", None, None, 0),
        estimated_gallons=D(30000),
        strength={"bod": D(200), "tkn": D(20)},
    )
    assert amounts(bill) == [("GR-UNMETERED", D("162.00")), ("GR-UNMETERED", D("78.00"))]
    assert bill.total == D("240.00")
