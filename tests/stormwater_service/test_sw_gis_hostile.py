"""Hostile GIS extracts (issue 27): bounded GeoJSON, checked geometries, safe ids, no
formula cells, plain numbers; each case refused with its line or feature, field and cause."""

from __future__ import annotations

import io
import json
import tracemalloc
from decimal import Decimal

import pytest

from stormwater.domain.gis import ExtractRejected, ParcelRecord, Rejection
from stormwater.domain.gis_files import read_extract

T = "pleasant-prairie-stormwater"
HEADER = "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft,woods_sqft,excluded_sqft,farmstead,parent_parcel_id\n"
PROPS = {"tenant": T, "parcel_id": "P-1", "owner_name": "O", "use": "residential", "area_sqft": 15100}
PROPS |= {"impervious_sqft": 2000}
RING = [[0, 0], [0, 10], [10, 10], [10, 0], [0, 0]]


def _read(data: bytes, key: str) -> list[ParcelRecord | Rejection]:
    return list(read_extract(io.BytesIO(data), key, tenants={T}))


def _csv(row: str) -> ParcelRecord | Rejection:
    (only,) = _read((HEADER + row + "\n").encode(), "gis/x.csv")
    return only


def _geojson_text(geometry_json: str) -> bytes:
    props = json.dumps(PROPS)
    return f'{{"type":"FeatureCollection","features":[{{"type":"Feature","properties":{props},"geometry":{geometry_json}}}]}}'.encode()


def _peak(data: bytes, key: str) -> tuple[object, int]:
    tracemalloc.start()
    try:
        try:
            outcome: object = _read(data, key)
        except ExtractRejected as exc:
            outcome = exc
        return outcome, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("depth", "inside"), [(100_000, True), (20_000, False)])
def test_a_deeply_nested_geojson_is_refused_in_bounded_memory(depth: int, inside: bool) -> None:
    # 200 KB of 100,000 '[' killed the worker five times; 40 KB at depth 20,000 used ~1 GB.
    bomb = b"[" * depth + b"]" * depth
    data = _geojson_text(bomb.decode()) if inside else b'{"features":' + bomb + b"}"
    outcome, peak = _peak(data, "gis/bomb.geojson")
    assert isinstance(outcome, ExtractRejected)
    assert "nested deeper than 32 levels" in outcome.reason
    assert peak < 5_000_000, f"{peak:,} bytes"


@pytest.mark.parametrize(
    ("geometry", "cause"),
    [
        ('"garbage"', "a geometry must be an object, not a string"),
        ('{"type":"Polygon","coordinates":[[[0,0],[0,10],[10,10],[10,0]]]}', "a ring is not closed"),
        ('{"type":"Polygon","coordinates":"string"}', "coordinates must be an array"),
        ('{"type":"Point","coordinates":[1e400,42.5]}', "coordinate about 10^400 is beyond"),
        (
            '{"type":"Polygon","coordinates":[[[1e400,0],[0,10],[10,10],[1e400,0]]]}',
            "coordinate about 10^400",
        ),
        ('{"type":"Blob","coordinates":[1,2]}', "'Blob' is not a GeoJSON geometry"),
        ('{"type":"Polygon","coordinates":[[0,0],[0,10]]}', "not nested as a Polygon's are"),
        ('{"type":"Polygon","coordinates":[[[0,0],[1,1],[0,0]]]}', "fewer than 4 positions"),
        ('{"type":"Point","coordinates":[1,"x"]}', "is not a number"),
    ],
)
def test_a_broken_geometry_rejects_its_feature_with_the_reason(geometry: str, cause: str) -> None:
    (row,) = _read(_geojson_text(geometry), "gis/x.geojson")
    assert isinstance(row, Rejection) and (row.line, row.field) == (0, "geometry")
    assert cause in row.reason


def test_a_good_polygon_is_kept_as_compact_json_and_a_null_geometry_is_allowed() -> None:
    (row,) = _read(_geojson_text(json.dumps({"type": "Polygon", "coordinates": [RING]})), "gis/x.geojson")
    assert isinstance(row, ParcelRecord)
    assert json.loads(row.geometry or "") == {"type": "Polygon", "coordinates": [RING]}
    (bare,) = _read(_geojson_text("null"), "gis/x.geojson")
    assert isinstance(bare, ParcelRecord) and bare.geometry is None


@pytest.mark.parametrize(
    ("parcel_id", "cause"),
    [
        ("../../etc/passwd", "holds a slash"),
        ("P\x00-1", "control character"),
        ("P" * 2000, "2000 characters long"),
        ("P#1", "holds '#'"),
    ],
)
def test_an_unsafe_parcel_id_is_rejected(parcel_id: str, cause: str) -> None:
    row = _csv(f'{T},"{parcel_id}",Owner,residential,15100,2000,,,,')
    assert isinstance(row, Rejection) and row.field == "parcel_id" and cause in row.reason
    parent = _csv(f'{T},P-2,Owner,residential,15100,2000,,,,"{parcel_id}"')
    assert isinstance(parent, Rejection) and parent.field == "parent_parcel_id"


@pytest.mark.parametrize(
    ("row", "field"),
    [
        (f'{T},P-1,"=HYPERLINK(""http://x"")",residential,15100,2000,,,,', "owner_name"),
        (f"{T},P-1,@SUM(A1),residential,15100,2000,,,,", "owner_name"),
        (f"{T},P-1,Owner,residential,+15100,2000,,,,", "area_sqft"),
        (f"{T},P-1,Owner,=residential,15100,2000,,,,", "use"),
    ],
)
def test_a_formula_cell_is_refused_as_metering_refuses_it(row: str, field: str) -> None:
    bad = _csv(row)
    assert isinstance(bad, Rejection) and bad.field == field
    assert "spreadsheet formula is refused" in bad.reason


def test_a_negative_area_is_reported_as_negative_not_as_a_formula() -> None:
    bad = _csv(f"{T},P-1,Owner,residential,-5,0,,,,")
    assert isinstance(bad, Rejection) and bad.field == "area_sqft" and "negative" in bad.reason


def test_numbers_in_messages_and_records_are_plain() -> None:
    # impervious 5000.00 > area 4000: the message said "(5E+3) is larger than the lot (4E+3)".
    bad = _csv(f"{T},P-1,Owner,residential,4000,5000.00,,,,")
    assert isinstance(bad, Rejection) and bad.reason == "impervious area (5000) is larger than the lot (4000)"
    good = _csv(f"{T},P-1,Owner,residential,15000,5000,,,,")
    assert isinstance(good, ParcelRecord) and str(good.impervious_sqft) == "5000"


def test_use_is_only_one_the_tariff_knows_and_areas_are_bounded() -> None:
    bad_use = _csv(f"{T},P-1,Owner,industrial,15100,2000,,,,")
    assert isinstance(bad_use, Rejection) and bad_use.field == "use" and "residential" in bad_use.reason
    huge = _csv(f"{T},P-1,Owner,residential,{10**10 + 1},2000,,,,")
    assert isinstance(huge, Rejection) and huge.field == "area_sqft" and "at most" in huge.reason
    exact = _csv(f"{T},P-1,Owner,residential,{10**10},2000,,,,")
    assert isinstance(exact, ParcelRecord) and exact.area_sqft == Decimal(10**10)


def test_1e400_in_a_property_is_a_rejected_area_not_a_crash() -> None:
    props = json.dumps(PROPS).replace('"area_sqft": 15100', '"area_sqft": 1e400')
    data = f'{{"type":"FeatureCollection","features":[{{"type":"Feature","properties":{props},"geometry":null}}]}}'
    (row,) = _read(data.encode(), "gis/x.geojson")
    assert isinstance(row, Rejection) and row.field == "area_sqft" and "10^12" in row.reason
