"""The other producers' files under faults (issue 26): a lab file (sampling) and a GIS
extract (stormwater), each with its worker killed at several points and redelivered, end as
the same stored outcome as a run without the kill: the same samples and classifications,
parcels and ERU determinations, reports and published events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fault_harness import Flow, Harness, assert_same, staff_call

from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

PP = "pleasant-prairie-sewer"
PPW = "pleasant-prairie-stormwater"
SAMPLED = 12
PARCELS = 120
LAB_HEADER = (
    "tenant,sample_id,account_id,collected_on,parameter,value,units,analysed_on,lab,kind,resample_of,method\n"
)
GIS_HEADER = "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft,woods_sqft,excluded_sqft,farmstead\n"


def lab_file() -> str:
    """Each account's January sample, every third one strong enough for another category."""
    rows = []
    for n in range(SAMPLED):
        bod = 220 + n if n % 3 == 0 else 150 + n
        sample = f"LAB-2025-0115-{n:02d}"
        rows += [
            f"{PP},{sample},FS-{n:03d},2025-01-15,bod,{bod},mg/l,2025-01-17,Acme Labs,routine,,SM 5210B\n",
            f"{PP},{sample},FS-{n:03d},2025-01-15,tss,{140 + n},mg/l,2025-01-17,Acme Labs,,,\n",
        ]
    rows.append(f"{PP},LAB-2025-0115-99,FS-999,2025-01-15,bod,100,mg/l,2025-01-17,Acme Labs,,,\n")  # unknown
    return LAB_HEADER + "".join(rows)


def gis_file() -> str:
    rows = [
        f"{PPW},FP-{n:04d},Owner {n},{'residential' if n % 4 else 'nonresidential'},"
        f"{15000 + 10 * n},{2000 + 37 * n},,,\n"
        for n in range(PARCELS)
    ]
    rows.append(f"{PPW},FP-BAD,Bad Area,nonresidential,-5,0,,,\n")
    return GIS_HEADER + "".join(rows)


def _sampling_points(rt: LocalRuntime) -> None:
    for n in range(SAMPLED):
        status = staff_call(
            rt, "PUT", f"/staff/{PP}/sampling-points/FS-{n:03d}", {"sampling_point": f"MH-{n}"}, PP
        )
        assert status == 200


def _lab(rt: LocalRuntime) -> None:
    rt.upload("UploadsBucket", "lab/faults.csv", lab_file(), drain=False)


def _gis(rt: LocalRuntime) -> None:
    rt.upload("UploadsBucket", "gis/faults.csv", gis_file(), drain=False)


FLOWS = (
    Flow(
        "lab file",
        "SamplingOnLabFileUploadedFunction",
        datetime(2025, 2, 3, 15, tzinfo=UTC),
        _sampling_points,
        _lab,
        gateway=True,
    ),
    Flow(
        "GIS extract",
        "StormwaterOnGisExtractUploadedFunction",
        datetime(2026, 10, 1, 15, tzinfo=UTC),
        lambda rt: None,
        _gis,
    ),
)
HARNESS = {flow.name: Harness(flow) for flow in FLOWS}
POINTS = ("after 1", "middle", "last call", "before ack")


def _point(harness: Harness, name: str) -> int | None:
    calls = len(harness.baseline.fault.calls)
    chosen = {"after 1": 1, "middle": calls // 2, "last call": calls - 1, "before ack": None}[name]
    if chosen is not None and not 0 < chosen < calls:
        pytest.skip(f"{harness.flow.function} makes only {calls} calls")
    return chosen


# Every flow at every point ends as the faultless run (issue 26: the lab file's counts and
# classifications and the GIS extract's counts are derived from what is stored, by business
# key; they were strict xfails here until then).
CASES = [pytest.param(flow, point) for flow in HARNESS for point in POINTS]


@pytest.mark.parametrize(("flow", "point"), CASES)
def test_a_killed_file_ends_as_a_file_never_killed(flow: str, point: str) -> None:
    harness = HARNESS[flow]
    assert_same(harness, _point(harness, point))
