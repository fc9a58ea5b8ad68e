"""Worked examples for pleasant-prairie-sewer, by hand from the ordinance and TARIFFS.md.

2019-10-01 rates (published): PP zone 5/8" 14.10, 1" 22.50, volume 4.49/kgal; LM zone 5/8"
17.63, volume 5.61; 1" not published in LM. 2015-06-01: PP 5/8" 13.26, volume 5.76; 3/4"
charged as 5/8". Surcharge (factor 8.34): BOD > 180 at 0.48/lb, TSS > 200 at 0.41/lb,
phosphorus > 6.0 at 6.86/lb; FOG > 100 has no rate. Sampling 85.00 per sample (example).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal as D

import pytest

from billing.domain.rating import Account, RateNotPublished, RatingInput

PP = "pleasant-prairie-sewer"
JUL, AUG = date(2026, 7, 1), date(2026, 8, 1)


def res(zone: str = "PP", meter: str = "5/8") -> Account:
    return Account("residential", zone, meter)


def nonres(meter: str = "2") -> Account:
    return Account("nonresidential", "PP", meter, 0)


def amounts(bill):
    return [(line.rule_id, line.amount) for line in bill.lines]


def test_residential_bills_the_monthly_service_charge_and_volume(rate):
    # PP-SEW-SVC 14.10 (5/8", PP zone); PP-SEW-VOL 5,000 gal = 5 kgal x 4.49 = 22.45.
    bill = rate(PP, JUL, AUG, account=res(), water_gallons=D(5000))
    assert amounts(bill) == [("PP-SEW-SVC", D("14.10")), ("PP-SEW-VOL", D("22.45"))]
    assert bill.total == D("36.55")
    assert bill.tariff_versions == ("pleasant-prairie-sewer@2019-10-01",)
    assert bill.lines[0].details["tariff_versions"] == ("pleasant-prairie-sewer@2019-10-01",)


def test_kgal_is_never_rounded_and_the_line_rounds_half_up_once(rate):
    # 24,500 gal = 24.5 kgal (exact) x 4.49 = 110.005 -> 110.01 (half-up).
    bill = rate(PP, JUL, AUG, account=res(), water_gallons=D(24500))
    vol = bill.lines[1]
    assert vol.quantity == D("24.5")
    assert vol.amount == D("110.01")


def test_winter_average_caps_residential_volume(rate):
    # PP-SEW-WINTER: min(6,000 metered, 4,000 winter average) = 4,000 gal = 4 x 4.49 = 17.96.
    bill = rate(PP, JUL, AUG, account=res(), water_gallons=D(6000), winter_average_gallons=D(4000))
    vol = bill.lines[1]
    assert vol.amount == D("17.96")
    assert vol.details["billed_gallons"] == D(4000)
    assert vol.details["metered_gallons"] == D(6000)
    assert vol.details["volume_rule"] == "PP-SEW-WINTER"


def test_metered_use_below_the_winter_average_is_billed_as_metered(rate):
    # min(3,000, 4,000) = 3,000 gal = 3 x 4.49 = 13.47.
    bill = rate(PP, JUL, AUG, account=res(), water_gallons=D(3000), winter_average_gallons=D(4000))
    assert bill.lines[1].amount == D("13.47")


def test_without_winter_history_metered_use_is_billed(rate):
    bill = rate(PP, JUL, AUG, account=res(), water_gallons=D(6000))
    assert bill.lines[1].amount == D("26.94")  # 6 x 4.49


def test_lake_michigan_zone_rates(rate):
    # LM: 17.63 + 5 kgal x 5.61 = 28.05 -> 45.68.
    bill = rate(PP, JUL, AUG, account=res("LM"), water_gallons=D(5000))
    assert amounts(bill) == [("PP-SEW-SVC", D("17.63")), ("PP-SEW-VOL", D("28.05"))]


def test_a_rate_not_published_for_the_zone_is_an_error_never_zero(rate):
    # TARIFFS.md: LM 1" is "—" (not published).
    with pytest.raises(RateNotPublished) as err:
        rate(PP, JUL, AUG, account=Account("nonresidential", "LM", "1", 0), water_gallons=D(5000))
    assert err.value.field == "account.meter_size"
    message = str(err.value)
    for part in ("pleasant-prairie-sewer", "zone LM", 'meter size 1"', "pleasant-prairie-sewer@2019-10-01"):
        assert part in message


def test_an_unknown_zone_is_an_error_naming_the_zone(rate):
    with pytest.raises(RateNotPublished) as err:
        rate(PP, JUL, AUG, account=res("XX"), water_gallons=D(5000))
    assert err.value.field == "account.zone"


def test_2015_three_quarter_inch_meter_is_charged_as_five_eighths(rate):
    # 2015 version: 3/4" not published, charged as 5/8" = 13.26; 2 kgal x 5.76 = 11.52.
    bill = rate(PP, date(2018, 3, 1), date(2018, 4, 1), account=res(meter="3/4"), water_gallons=D(2000))
    assert amounts(bill) == [("PP-SEW-SVC", D("13.26")), ("PP-SEW-VOL", D("11.52"))]
    assert bill.tariff_versions == ("pleasant-prairie-sewer@2015-06-01",)


def test_surcharge_one_line_per_parameter_over_its_limit(rate):
    # 50,000 gal = 0.05 million gallons; factor 8.34.
    # BOD 300: (300 - 180) x 0.05 x 8.34 = 50.04 lb x 0.48 = 24.0192 -> 24.02
    # TSS 250: (250 - 200) x 0.05 x 8.34 = 20.85 lb x 0.41 = 8.5485 -> 8.55
    # P 10:    (10 - 6.0) x 0.05 x 8.34 = 1.668 lb x 6.86 = 11.44248 -> 11.44
    # FOG 150: over its limit of 100 but no per-pound rate -> no line.
    strength = {"bod": D(300), "tss": D(250), "phosphorus": D(10), "fog": D(150)}
    bill = rate(PP, JUL, AUG, account=nonres(), water_gallons=D(50000), strength=strength)
    surcharges = [line for line in bill.lines if line.rule_id == "PP-SEW-SURCHARGE"]
    assert [(s.details["parameter"], s.quantity, s.amount) for s in surcharges] == [
        ("bod", D("50.04"), D("24.02")),
        ("tss", D("20.85"), D("8.55")),
        ("phosphorus", D("1.668"), D("11.44")),
    ]
    # 2" PP 53.30 + 50 kgal x 4.49 = 224.50 + surcharges 44.01 = 321.81
    assert bill.total == D("321.81")


def test_no_surcharge_at_or_below_the_limits(rate):
    strength = {"bod": D(180), "tss": D(200), "phosphorus": D("6.0")}
    bill = rate(PP, JUL, AUG, account=nonres(), water_gallons=D(50000), strength=strength)
    assert [line.rule_id for line in bill.lines] == ["PP-SEW-SVC", "PP-SEW-VOL"]


def test_sampling_cost_is_a_separate_line(rate):
    # PP-SEW-SAMPLE-COST: 2 samples x 85.00 = 170.00.
    bill = rate(PP, JUL, AUG, account=nonres("1"), water_gallons=D(0), samples_collected=2)
    assert amounts(bill) == [("PP-SEW-SVC", D("22.50")), ("PP-SEW-SAMPLE-COST", D("170.00"))]


def test_zero_volume_produces_no_volume_line(rate):
    # CONTRACTS.md: a rule whose amount is zero produces no line.
    bill = rate(PP, JUL, AUG, account=res(), water_gallons=D(0))
    assert amounts(bill) == [("PP-SEW-SVC", D("14.10"))]


def test_period_across_2019_10_01_is_prorated_by_days(rate):
    # 2019-09-15 .. 2019-10-15 = 30 days: 16 days of the 2015 rates, 14 of the 2019 rates.
    # SVC: 13.26 x 16/30 = 7.072 -> 7.07;  14.10 x 14/30 = 6.58
    # VOL 6 kgal: 6 x 5.76 x 16/30 = 18.432 -> 18.43;  6 x 4.49 x 14/30 = 12.572 -> 12.57
    bill = rate(PP, date(2019, 9, 15), date(2019, 10, 15), account=res(), water_gallons=D(6000))
    assert amounts(bill) == [
        ("PP-SEW-SVC", D("7.07")),
        ("PP-SEW-SVC", D("6.58")),
        ("PP-SEW-VOL", D("18.43")),
        ("PP-SEW-VOL", D("12.57")),
    ]
    assert bill.total == D("44.65")
    assert bill.tariff_versions == ("pleasant-prairie-sewer@2015-06-01", "pleasant-prairie-sewer@2019-10-01")
    first = bill.lines[0]
    assert (first.details["days"], first.details["period_days"]) == (16, 30)
    assert first.details["tariff_versions"] == ("pleasant-prairie-sewer@2015-06-01",)
    assert "16 of 30 days" in first.description


def test_a_charge_with_the_same_rate_in_both_versions_is_not_split(rate):
    # The surcharge rates and limits are equal in 2015 and 2019: one line for the period.
    # BOD 300 on 50,000 gal: 50.04 lb x 0.48 = 24.02 (as if one version).
    bill = rate(
        PP,
        date(2019, 9, 15),
        date(2019, 10, 15),
        account=nonres(),
        water_gallons=D(50000),
        strength={"bod": D(300)},
    )
    surcharges = [line for line in bill.lines if line.rule_id == "PP-SEW-SURCHARGE"]
    assert len(surcharges) == 1
    assert surcharges[0].amount == D("24.02")
    assert surcharges[0].details["tariff_versions"] == (
        "pleasant-prairie-sewer@2015-06-01",
        "pleasant-prairie-sewer@2019-10-01",
    )
    assert "days" not in surcharges[0].details


# --- a zero still says why; PP-SEW-WINTER is a switch (issue 8) ----------------------------


def test_fog_only_category_b_user_is_noted_not_charged(rate):
    # FOG 150 > 100 puts the user in Category B (PP-SEW-CAT-B) but FOG has no published
    # per-pound rate: no surcharge line, a note. 2" 53.30 + 50 kgal x 4.49 = 224.50.
    bill = rate(PP, JUL, AUG, account=nonres(), water_gallons=D(50000), strength={"fog": D(150)})
    assert amounts(bill) == [("PP-SEW-SVC", D("53.30")), ("PP-SEW-VOL", D("224.50"))]
    (note,) = bill.notes
    assert note.rule_id == "PP-SEW-SURCHARGE"
    assert "FOG 150 mg/l is over the Category A limit of 100 mg/l" in note.text
    assert "Category B" in note.text


def test_fog_beside_a_charged_parameter_is_still_noted(rate):
    # The surcharge example above: three lines for BOD, TSS and P, and a note for FOG.
    strength = {"bod": D(300), "tss": D(250), "phosphorus": D(10), "fog": D(150)}
    bill = rate(PP, JUL, AUG, account=nonres(), water_gallons=D(50000), strength=strength)
    assert [n.rule_id for n in bill.notes] == ["PP-SEW-SURCHARGE"]
    assert "FOG" in bill.notes[0].text


def test_an_excess_whose_surcharge_rounds_to_zero_is_noted(rate):
    # 100 gal = 0.0001 Mgal, BOD 181: (181 - 180) x 0.0001 x 8.34 = 0.000834 lb x 0.48
    # = 0.00040032 -> 0.00: no line (a zero amount makes none), a note instead.
    bill = rate(PP, JUL, AUG, account=nonres(), water_gallons=D(100), strength={"bod": D(181)})
    assert [line.rule_id for line in bill.lines] == ["PP-SEW-SVC", "PP-SEW-VOL"]
    (note,) = bill.notes
    assert note.rule_id == "PP-SEW-SURCHARGE"
    assert "0.000834 lb x 0.48 per lb rounds to 0.00" in note.text


@pytest.mark.parametrize("applies", [True, False])
def test_the_winter_average_is_a_tariff_switch(engine_with, applies):
    # 6,000 gal metered, winter average 4,000 gal; SVC 14.10.
    # on:  PP-SEW-WINTER bills min(6,000, 4,000) = 4 kgal x 4.49 = 17.96 -> total 32.06
    # off: metered use, 6 kgal x 4.49 = 26.94 -> total 41.04, and a note says why
    engine = engine_with(PP, winter_average_applies=applies)
    bill = engine.rate(
        RatingInput(PP, JUL, AUG, res(), water_gallons=D(6000), winter_average_gallons=D(4000))
    )
    volume = bill.lines[1]
    if applies:
        assert (volume.quantity, volume.amount, bill.total) == (D(4), D("17.96"), D("32.06"))
        assert volume.details["volume_rule"] == "PP-SEW-WINTER"
        assert bill.notes == ()
    else:
        assert (volume.quantity, volume.amount, bill.total) == (D(6), D("26.94"), D("41.04"))
        assert "volume_rule" not in volume.details
        (note,) = bill.notes
        assert note.rule_id == "PP-SEW-WINTER"
        assert "pleasant-prairie-sewer@2019-10-01" in note.text


def test_a_prorated_line_carries_its_factor_so_a_clerk_can_multiply(rate):
    # 2019-09-15 .. 2019-10-15 (30 days), 16 days under 2015: 13.26 x 1 x 16/30 = 7.072 -> 7.07.
    bill = rate(PP, date(2019, 9, 15), date(2019, 10, 15), account=res(), water_gallons=D(6000))
    first = bill.lines[0]
    assert first.details["factor"] == "16/30"
    assert "prorated, 16 of 30 days" in first.description
    assert (first.quantity * first.rate * 16 / 30).quantize(D("0.01")) == first.amount == D("7.07")
