"""Consumption per billing period from register reads (X-READS, X-PERIOD, PP-SEW-FLOW, PP-SEW-WINTER)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from support import Utility

GR = "grafton-sewer"
PP = "pleasant-prairie-sewer"
Q1, Q2, Q3, Q4 = (
    (date(2026, 1, 1), date(2026, 4, 1)),
    (date(2026, 4, 1), date(2026, 7, 1)),
    (
        date(2026, 7, 1),
        date(2026, 10, 1),
    ),
    (date(2026, 10, 1), date(2027, 1, 1)),
)


def grafton_meter(
    u: Utility, meter: str = "GR-M1", account: str = "GR-1", digits: int = 6, initial: int = 1000
) -> None:
    r = u.meters(f"{GR},{meter},{account},water,gal,{digits},2026-01-01,{initial},5/8,,")
    assert r.rejected == 0, r.first_rejections


def test_reads_on_the_boundaries_give_the_register_advance_as_actual_use() -> None:
    u = Utility()
    grafton_meter(u)
    u.reads(f"{GR},GR-M1,2026-04-01,11000,", f"{GR},GR-M1,2026-07-01,23000,")
    # 11,000 - 1,000 (initial reading on install) and 23,000 - 11,000
    assert u.repo.volumes("GR-1") == {Q1: Decimal(10000), Q2: Decimal(12000)}
    assert {c.quality for c in u.repo.consumptions.values()} == {"actual"}


def test_a_read_off_the_boundary_is_prorated_by_days_and_nothing_is_lost() -> None:
    u = Utility()
    grafton_meter(u)
    u.reads(f"{GR},GR-M1,2026-04-01,11000,", f"{GR},GR-M1,2026-07-15,25000,", f"{GR},GR-M1,2026-10-01,33000,")
    # 14,000 gal over the 105 days 04-01..07-15; 91 of them are in Q2: 14,000 x 91 / 105 = 12,133.333
    volumes = u.repo.volumes("GR-1")
    assert volumes[Q2] == Decimal("12133.333")
    assert volumes[Q3] == Decimal("9866.667")  # the rest: 33,000 - 23,133.333
    assert sum(volumes.values()) == 33000 - 1000
    q2 = u.repo.consumptions[(GR, "GR-1", *Q2)]
    assert q2.quality == "prorated"
    assert [(r.read_on, r.read_type) for r in q2.reads_used] == [
        (date(2026, 4, 1), "actual"),
        (date(2026, 7, 1), "prorated"),
    ]


def test_a_register_that_wrapped_is_a_rollover_not_negative_use() -> None:
    u = Utility()
    grafton_meter(u, digits=5, initial=95000)
    u.reads(f"{GR},GR-M1,2026-04-01,99000,", f"{GR},GR-M1,2026-07-01,2500,")
    # 10^5 - 99,000 + 2,500 = 3,500 gal, plausible beside the 4,000 of Q1 (factor 3)
    q2 = u.repo.consumptions[(GR, "GR-1", *Q2)]
    assert q2.volume_gal == 3500 and "rollover" in q2.flags


def test_a_reading_below_the_previous_that_is_no_plausible_rollover_is_rejected_and_kept() -> None:
    u = Utility()
    grafton_meter(u)
    u.reads(f"{GR},GR-M1,2026-04-01,11000,")
    result = u.reads(f"{GR},GR-M1,2026-07-01,10000,")
    # 10^6 - 11,000 + 10,000 = 999,000 gal in 91 days against ~111 gal/day of history: rejected
    [rejection] = result.first_rejections
    assert (rejection.line, rejection.column) == (2, "reading")
    assert "below the previous reading 11000" in rejection.reason
    assert [f.reading.reading for f in u.repo.failed] == [Decimal(10000)]  # kept, flagged failed
    assert Q2 not in u.repo.volumes("GR-1")


def test_a_meter_exchanged_mid_period_sums_both_meters() -> None:
    u = Utility()
    grafton_meter(u)
    u.reads(f"{GR},GR-M1,2026-04-01,11000,")
    u.meters(
        f"{GR},GR-M1,GR-1,water,gal,6,2026-01-01,1000,5/8,2026-05-10,15000",
        f"{GR},GR-M2,GR-1,water,cf,4,2026-05-10,20,5/8,,",
    )
    u.reads(f"{GR},GR-M2,2026-07-01,820,")
    # old meter: final 15,000 - 11,000 = 4,000 gal; new meter: (820 - 20) cf x 7.48052 = 5,984.416 gal
    q2 = u.repo.consumptions[(GR, "GR-1", *Q2)]
    assert q2.volume_gal == Decimal("9984.416")
    assert [(m.meter_id, m.volume_gal) for m in q2.meters] == [
        ("GR-M1", 4000),
        ("GR-M2", Decimal("5984.416")),
    ]
    assert "exchange" in q2.flags


def test_a_waste_discharge_meter_replaces_water_use() -> None:
    u = Utility()
    u.meters(
        f"{PP},PP-W1,PP-1,water,gal,6,2026-01-01,0,1,,",
        f"{PP},PP-D1,PP-1,waste,gal,6,2026-01-01,0,1,,",
    )
    u.reads(f"{PP},PP-W1,2026-02-01,9000,", f"{PP},PP-D1,2026-02-01,7000,")
    # PP-SEW-FLOW: the waste meter's 7,000 gal are billed, not the 9,000 of water
    jan = u.repo.consumptions[(PP, "PP-1", date(2026, 1, 1), date(2026, 2, 1))]
    assert jan.volume_gal == 7000 and jan.flags == ("waste_meter",)
    assert [m.meter_id for m in jan.meters] == ["PP-D1"]


def test_zero_use_and_high_and_low_use_are_flagged_against_the_accounts_history() -> None:
    u = Utility()
    u.meters(f"{PP},PP-W1,PP-1,water,gal,6,2026-01-01,0,1,,")
    u.reads(
        f"{PP},PP-W1,2026-02-01,3100,",  # 100 gal/day
        f"{PP},PP-W1,2026-03-01,5900,",  # 100 gal/day
        f"{PP},PP-W1,2026-04-01,5900,",  # zero
        f"{PP},PP-W1,2026-05-01,26900,",  # 700 gal/day > 3 x ~65
        f"{PP},PP-W1,2026-06-01,27000,",  # ~3 gal/day < 1/3 of the average
    )
    flags = {c.period_start.month: c.flags for c in u.repo.consumptions.values()}
    assert flags[3] == ("zero_use",)  # March: nothing used on an account with a meter
    assert flags[4] == ("high_use",)
    assert flags[5] == ("low_use",)


def test_a_period_without_a_read_is_estimated_after_the_read_window() -> None:
    u = Utility(today=date(2026, 4, 3))
    u.meters(f"{PP},PP-W1,PP-1,water,gal,6,2026-01-01,0,1,,")
    u.reads(f"{PP},PP-W1,2026-02-01,3100,", f"{PP},PP-W1,2026-03-01,5900,")
    assert u.estimate() == 0  # the read window (5 days) after 2026-04-01 has not passed
    u.today = date(2026, 4, 6)
    assert u.estimate() == 1
    march = u.repo.consumptions[(PP, "PP-1", date(2026, 3, 1), date(2026, 4, 1))]
    # no March last year: the average of the last periods, (3,100 + 2,800) / (31 + 28) gal/day x 31 days
    assert march.volume_gal == (Decimal(5900) / 59 * 31).quantize(Decimal("0.001"))
    assert march.estimated and march.quality == "estimated"
    # the next actual read measures from the estimate, so the total still adds up
    u.today = date(2026, 5, 2)
    u.reads(f"{PP},PP-W1,2026-05-01,12000,")
    assert sum(u.repo.volumes("PP-1").values()) == 12000


def test_winter_average_is_the_mean_of_january_to_march() -> None:
    u = Utility()
    u.meters(f"{PP},PP-W1,PP-1,water,gal,6,2026-01-01,0,1,,")
    u.reads(
        f"{PP},PP-W1,2026-02-01,3000,",
        f"{PP},PP-W1,2026-03-01,7000,",
        f"{PP},PP-W1,2026-04-01,12000,",
        f"{PP},PP-W1,2026-05-01,20000,",
    )
    april = u.repo.consumptions[(PP, "PP-1", date(2026, 4, 1), date(2026, 5, 1))]
    # PP-SEW-WINTER: (3,000 + 4,000 + 5,000) / 3
    assert april.winter_average_gal == 4000
    march = u.repo.consumptions[(PP, "PP-1", date(2026, 3, 1), date(2026, 4, 1))]
    assert march.winter_average_gal is None
