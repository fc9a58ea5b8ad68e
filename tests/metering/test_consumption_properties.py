"""Property (issue 9): consumption over consecutive periods sums to the total register advance.

Nothing is lost or counted twice at period boundaries (prorated reads), rollovers, meter
exchanges or estimates (X-PERIOD: a read that comes late, after the daily run estimated the
periods without it, replaces the estimates), whatever the dates and volumes of valid
readings. A period determined again counts with its latest determination.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support import Utility
from support import settings as tenant_settings

from metering.domain.determination import period_containing

PP = "pleasant-prairie-sewer"  # monthly periods
GR = "grafton-sewer"  # quarterly periods
CAPACITY = 100_000  # 5-digit registers: a rollover every few dozen reads


Step = tuple[int, int, bool]  # days since the previous read, gallons a day, read comes late


@st.composite
def histories(draw: st.DrawFn) -> tuple[int, list[Step], int | None, int]:
    initial = draw(st.integers(0, CAPACITY - 1))
    daily = draw(st.integers(1, 50))
    reads = draw(
        st.lists(
            st.tuples(st.integers(5, 70), st.integers(max(1, daily * 2 // 3), daily * 3 // 2), st.booleans()),
            min_size=2,
            max_size=14,
        )
    )
    exchange_after = draw(st.none() | st.integers(0, len(reads) - 2))
    new_initial = draw(st.integers(0, CAPACITY - 1))
    return initial, reads, exchange_after, new_initial


@pytest.mark.parametrize("tenant", [PP, GR])
@settings(max_examples=80, deadline=None)
@given(history=histories())
def test_periods_sum_to_the_register_advance_across_boundaries_rollovers_exchanges_and_estimates(
    tenant: str, history: tuple[int, list[Step], int | None, int]
) -> None:
    initial, steps, exchange_after, new_initial = history
    start = date(2026, 1, 1)
    u = Utility(today=start)
    meter, register, day = "M1", initial, start
    u.meters(f"{tenant},M1,A1,water,gal,5,{start},{initial},,,")
    expected = 0
    rows: list[str] = []
    estimated = 0

    def upload(until: date) -> None:
        nonlocal rows
        if rows:
            u.today = until
            result = u.reads(*rows)
            assert result.rejected == 0, result.first_rejections
            rows = []

    for i, (days, per_day, late) in enumerate(steps):
        previous, day = day, day + timedelta(days=days)
        used = days * per_day
        expected += used
        register = (register + used) % CAPACITY
        if late:  # the daily run on the read's day comes first: the periods since are estimated
            upload(previous)
            u.today = day
            estimated += u.estimate()
        rows.append(f"{tenant},{meter},{day},{register},")
        if exchange_after == i:
            upload(day)
            u.meters(
                f"{tenant},M1,A1,water,gal,5,{start},{initial},,{day},{register}",
                f"{tenant},M2,A1,water,gal,5,{day},{new_initial},,,",
            )
            meter, register = "M2", new_initial
    # the last read on a period boundary, so every gallon falls in a determined period
    end = period_containing(day, tenant_settings(tenant).period_months)[1]
    last_use = (end - day).days * steps[-1][1]
    expected += last_use
    rows.append(f"{tenant},{meter},{end},{(register + last_use) % CAPACITY},")
    upload(end)
    event(f"estimated periods: {min(estimated, 3)}{'+' if estimated > 3 else ''}")

    volumes = u.repo.volumes("A1")
    periods = sorted(volumes)
    assert periods[0][0] == start and periods[-1][1] == end
    assert all(a[1] == b[0] for a, b in zip(periods, periods[1:], strict=False))  # consecutive, half-open
    assert sum(volumes.values()) == Decimal(expected)
