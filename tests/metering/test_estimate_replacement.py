"""An actual read replaces the estimate before it (X-PERIOD, X-IMMUTABLE).

Utilities' practice: when a period was estimated (no read within the read window) and the
next actual read arrives, the estimate is replaced by proration on days between the real
reads around it, the estimated period is determined again (a corrected
``ConsumptionDetermined`` for the same period, flagged ``estimate_replaced``) and the
following period is measured from the corrected point: nothing lost, nothing negative.

The account in every test: a meter installed 2026-01-01 at 0, read 3,100 on 2026-02-01
(January: 3,100 gal over 31 days = 100 gal/day). The daily run on 2026-03-06 (five days
after February's end) estimates February at 100 gal/day x 28 days = 2,800 gal, an
``estimated`` point of 5,900 on 2026-03-01.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from support import Utility

PP = "pleasant-prairie-sewer"
FEB = (PP, "PP-1", date(2026, 2, 1), date(2026, 3, 1))
MAR = (PP, "PP-1", date(2026, 3, 1), date(2026, 4, 1))
APR = (PP, "PP-1", date(2026, 4, 1), date(2026, 5, 1))


def february_estimated() -> Utility:
    u = Utility(today=date(2026, 3, 6))
    u.meters(f"{PP},PP-W1,PP-1,water,gal,6,2026-01-01,0,1,,")
    u.reads(f"{PP},PP-W1,2026-02-01,3100,")
    assert u.estimate() == 1
    feb = u.repo.consumptions[FEB]
    assert (feb.volume_gal, feb.quality) == (Decimal(2800), "estimated")
    return u


def test_an_actual_read_above_the_estimate_prorates_it_over_both_periods() -> None:
    u = february_estimated()
    u.today = date(2026, 4, 2)
    result = u.reads(f"{PP},PP-W1,2026-04-01,7100,")  # 4,000 gal since 2026-02-01, over 28 + 31 = 59 days
    assert (result.accepted, result.rejected, result.consumptions) == (1, 0, 2)

    feb, mar = u.repo.consumptions[FEB], u.repo.consumptions[MAR]
    # February: 4,000 x 28/59 = 1,898.3050... -> 1,898.305 (a prorated point carries 1/1000 gal)
    assert feb.volume_gal == Decimal("1898.305")
    assert (feb.quality, feb.estimated) == ("prorated", False)
    assert "estimate_replaced" in feb.flags
    # the corrected point replaces the estimate: 3,100 + 1,898.305 on 2026-03-01, prorated
    assert [(r.read_on, r.reading, r.read_type) for r in feb.reads_used] == [
        (date(2026, 2, 1), Decimal(3100), "actual"),
        (date(2026, 3, 1), Decimal("4998.305"), "prorated"),
    ]
    # March: 7,100 - 4,998.305 = 2,101.695 (= 4,000 x 31/59, to the gallon-thousandth)
    assert mar.volume_gal == Decimal("2101.695")
    assert "estimate_replaced" not in mar.flags
    assert feb.volume_gal + mar.volume_gal == 4000


def test_an_actual_read_below_the_estimate_is_not_lost_nor_clamped_to_zero() -> None:
    u = february_estimated()
    u.today = date(2026, 4, 2)
    # 5,100 is below the estimated register of 5,900: only 2,000 gal were used since 2026-02-01
    result = u.reads(f"{PP},PP-W1,2026-04-01,5100,")
    assert (result.accepted, result.rejected) == (1, 0), result.first_rejections
    feb, mar = u.repo.consumptions[FEB], u.repo.consumptions[MAR]
    # February: 2,000 x 28/59 = 949.1525... -> 949.153; March: 5,100 - 4,049.153 = 1,050.847
    assert (feb.volume_gal, mar.volume_gal) == (Decimal("949.153"), Decimal("1050.847"))
    assert feb.volume_gal + mar.volume_gal == 2000  # the register's advance, nothing lost
    assert "estimate_replaced" in feb.flags and feb.volume_gal < 2800


def test_an_actual_read_on_the_estimated_day_takes_its_place() -> None:
    u = february_estimated()
    u.today = date(2026, 3, 10)
    result = u.reads(f"{PP},PP-W1,2026-03-01,5000,")  # the period-end read, uploaded late
    assert (result.accepted, result.rejected, result.consumptions) == (1, 0, 1), result.first_rejections
    feb = u.repo.consumptions[FEB]
    # 5,000 - 3,100 = 1,900 gal, both ends actual reads
    assert (feb.volume_gal, feb.quality, feb.flags) == (Decimal(1900), "actual", ("estimate_replaced",))
    u.today = date(2026, 4, 2)
    u.reads(f"{PP},PP-W1,2026-04-01,8000,")
    assert u.repo.consumptions[MAR].volume_gal == 3000  # 8,000 - 5,000, from the actual read


def test_consecutive_estimates_are_all_replaced_by_the_next_read() -> None:
    u = february_estimated()
    u.today = date(2026, 4, 6)
    assert u.estimate() == 1  # March: (3,100 + 2,800) / 59 gal/day x 31 days = 3,100.000 (to 1/1000)
    assert u.repo.consumptions[MAR].estimated
    u.today = date(2026, 4, 16)
    result = u.reads(
        f"{PP},PP-W1,2026-04-15,9500,"
    )  # 6,400 gal since 2026-02-01, over 28 + 31 + 14 = 73 days
    assert result.consumptions == 2  # February and March corrected; April is still open
    feb, mar = u.repo.consumptions[FEB], u.repo.consumptions[MAR]
    # February: 6,400 x 28/73 = 2,454.7945... -> 2,454.795
    # to 2026-04-01: 6,400 x 59/73 = 5,172.6027... -> 5,172.603, so March 5,172.603 - 2,454.795 = 2,717.808
    assert (feb.volume_gal, mar.volume_gal) == (Decimal("2454.795"), Decimal("2717.808"))
    assert all("estimate_replaced" in c.flags for c in (feb, mar))
    u.today = date(2026, 5, 2)
    u.reads(f"{PP},PP-W1,2026-05-01,10600,")
    # April: from the prorated 2026-04-01 point (3,100 + 5,172.603 = 8,272.603) to 10,600
    assert u.repo.consumptions[APR].volume_gal == Decimal("2327.397")
    assert sum(u.repo.volumes("PP-1").values()) == 10600


def test_the_same_read_file_again_changes_nothing() -> None:
    u = february_estimated()
    u.today = date(2026, 4, 2)
    u.reads(f"{PP},PP-W1,2026-04-01,5100,")
    before = (dict(u.repo.consumptions), len(u.repo.chunks), dict(u.repo.accounts_))
    again = u.reads(f"{PP},PP-W1,2026-04-01,5100,")
    assert again.duplicate_file
    another_file = u.reads(f"{PP},PP-W1,2026-04-01,5100,", f"{PP},PP-W1,2026-04-01,5100,")
    assert (another_file.accepted, another_file.repeated, another_file.consumptions) == (0, 2, 0)
    assert (dict(u.repo.consumptions), len(u.repo.chunks), dict(u.repo.accounts_)) == before


def test_a_read_dated_inside_an_estimated_period_is_still_rejected() -> None:
    # Left as it was: re-estimating from a read inside the period is not done (rejected, reported)
    u = february_estimated()
    u.today = date(2026, 3, 10)
    result = u.reads(f"{PP},PP-W1,2026-02-20,5000,")
    [rejection] = result.first_rejections
    assert rejection.column == "read_on" and "already determined" in rejection.reason
    assert u.repo.consumptions[FEB].estimated


def test_a_final_reading_at_an_exchange_replaces_the_estimate_too() -> None:
    u = february_estimated()
    u.today = date(2026, 4, 2)
    result = u.meters(
        f"{PP},PP-W1,PP-1,water,gal,6,2026-01-01,0,1,2026-04-01,5100",  # removed: 2,000 gal since 2026-02-01
        f"{PP},PP-W2,PP-1,water,gal,6,2026-04-01,0,1,,",
    )
    # PP-W1 was registered before: its removal is a new version of it (changed), PP-W2 is new
    assert (result.accepted, result.changed, result.rejected, result.consumptions) == (1, 1, 0, 1), (
        result.first_rejections
    )
    feb = u.repo.consumptions[FEB]
    assert (feb.volume_gal, feb.flags) == (Decimal("949.153"), ("estimate_replaced",))  # 2,000 x 28/59
    u.today = date(2026, 5, 2)
    u.reads(f"{PP},PP-W2,2026-05-01,3000,")
    assert u.repo.consumptions[MAR].volume_gal == Decimal("1050.847")  # the old meter's 5,100 - 4,049.153
    assert u.repo.consumptions[APR].volume_gal == 3000  # the new meter from 0
    assert sum(u.repo.volumes("PP-1").values()) == 3100 + 2000 + 3000
