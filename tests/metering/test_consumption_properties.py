"""Property (issue 9): consumption over consecutive periods sums to the total register advance.

Nothing is lost or counted twice at period boundaries (prorated reads), rollovers or meter
exchanges, whatever the dates and volumes of valid readings.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
from support import Utility

PP = "pleasant-prairie-sewer"
CAPACITY = 100_000  # 5-digit registers: a rollover every few dozen reads


@st.composite
def histories(draw: st.DrawFn) -> tuple[int, list[tuple[int, int]], int | None, int]:
    initial = draw(st.integers(0, CAPACITY - 1))
    daily = draw(st.integers(1, 50))
    reads = draw(
        st.lists(
            st.tuples(st.integers(5, 40), st.integers(max(1, daily * 2 // 3), daily * 3 // 2)),
            min_size=2,
            max_size=14,
        )
    )
    exchange_after = draw(st.none() | st.integers(0, len(reads) - 2))
    new_initial = draw(st.integers(0, CAPACITY - 1))
    return initial, reads, exchange_after, new_initial


@settings(max_examples=60, deadline=None)
@given(histories())
def test_periods_sum_to_the_register_advance_across_boundaries_rollovers_and_exchanges(
    history: tuple[int, list[tuple[int, int]], int | None, int],
) -> None:
    initial, steps, exchange_after, new_initial = history
    u = Utility(today=date(2030, 1, 1))
    start = date(2026, 1, 1)
    meter, register, day = "M1", initial, start
    u.meters(f"{PP},M1,A1,water,gal,5,{start},{initial},,,")
    expected = 0
    rows: list[str] = []
    for i, (days, per_day) in enumerate(steps):
        day += timedelta(days=days)
        used = days * per_day
        expected += used
        register = (register + used) % CAPACITY
        rows.append(f"{PP},{meter},{day},{register},")
        if exchange_after == i:
            u.reads(*rows)
            rows = []
            u.meters(
                f"{PP},M1,A1,water,gal,5,{start},{initial},,{day},{register}",
                f"{PP},M2,A1,water,gal,5,{day},{new_initial},,,",
            )
            meter, register = "M2", new_initial
    # the last read on a period boundary, so every gallon falls in a determined period
    end = date(day.year + (day.month == 12), day.month % 12 + 1, 1)
    last_use = (end - day).days * steps[-1][1]
    expected += last_use
    rows.append(f"{PP},{meter},{end},{(register + last_use) % CAPACITY},")
    result = u.reads(*rows)

    assert result.rejected == 0, result.first_rejections
    volumes = u.repo.volumes("A1")
    periods = sorted(volumes)
    assert periods[0][0] == start and periods[-1][1] == end
    assert all(a[1] == b[0] for a, b in zip(periods, periods[1:], strict=False))  # consecutive, half-open
    assert sum(volumes.values()) == Decimal(expected)
