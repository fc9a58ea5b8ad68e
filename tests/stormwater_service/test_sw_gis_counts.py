"""What a repeated or changed GIS line means (issue 26): a parcel is a record, so a line is
accepted (a new parcel), changed (a new version, the old one kept as history), repeated
(identical to the version kept or to an earlier line) or rejected; the counts add up to the
lines, and an extract redelivered after a crash reports what a run without it reported."""

from __future__ import annotations

from typing import Any

import pytest
from test_sw_extract_concurrency import HEADER, TENANT, Files, OverrideWhileReading, _ingest, world

from stormwater.app.service import StormwaterService

__all__ = ["world"]  # the fixture, shared with the concurrency tests

World = tuple[Any, OverrideWhileReading, StormwaterService, Files]
FIRST = HEADER + "".join(f"{TENANT},CT-{n},Owner {n},nonresidential,43560,{20000 + n}\n" for n in range(5))


class Crash(Exception):
    """The worker stopped after the parcels were written, before the file record."""


def test_a_second_extract_counts_each_line_once_by_what_it_is(world: World) -> None:
    first = _ingest(world, "gis/a.csv", FIRST)
    assert (first.lines, first.accepted, first.changed, first.repeated) == (5, 5, 0, 0)
    second = _ingest(
        world,
        "gis/b.csv",
        HEADER
        + f"{TENANT},CT-0,Owner 0,nonresidential,43560,20000\n"  # identical: repeated
        + f"{TENANT},CT-1,Owner 1,nonresidential,43560,25000\n"  # remeasured: changed
        + f"{TENANT},CT-1,Owner 1,nonresidential,43560,25000\n"  # the same line again: repeated
        + f"{TENANT},CT-9,Owner 9,residential,15000,2000\n",  # new: accepted
    )
    assert (second.lines, second.accepted, second.changed, second.repeated, second.rejected) == (
        4,
        1,
        1,
        2,
        0,
    )
    _client, _repo, service, _files = world
    history = service.eru_view(TENANT, "CT-1")["gis_history"]
    assert [h["values"]["impervious_sqft"] for h in history] == ["20001", "25000"]  # kept as history


def test_an_extract_redelivered_after_a_crash_reports_the_counts_of_a_run_without_it(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    _client, repo, _service, _files = world
    _ingest(world, "gis/a.csv", FIRST)
    changed = HEADER + "".join(
        f"{TENANT},CT-{n},Owner {n},nonresidential,43560,{30000 + n}\n" for n in range(3)
    )
    changed += f"{TENANT},CT-3,Owner 3,nonresidential,43560,20003\n{TENANT},CT-7,New,residential,15000,2000\n"
    record_file = repo.record_file
    calls: list[Any] = []

    def crash_once(event: Any) -> None:
        calls.append(event)
        if len(calls) == 1:
            raise Crash()
        record_file(event)

    monkeypatch.setattr(repo, "record_file", crash_once)
    with pytest.raises(Crash):
        _ingest(world, "gis/b.csv", changed)
    again = _ingest(world, "gis/b.csv", changed)
    # As a run without the crash: 3 changed, 1 repeated, 1 new (before the fix: 0 changed,
    # 4 repeated and the new parcel counted as repeated too).
    assert (again.lines, again.accepted, again.changed, again.repeated) == (5, 1, 3, 1)
    assert (calls[0].accepted, calls[0].changed, calls[0].repeated) == (1, 3, 1)
    assert (calls[1].accepted, calls[1].changed, calls[1].repeated, calls[1].lines) == (1, 3, 1, 5)
