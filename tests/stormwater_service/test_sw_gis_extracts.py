"""GIS extracts (CONTRACTS.md "Import files", gis/): rows checked as they stream in, bad rows
reported with their line or feature index and field, the rest kept."""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pytest

from stormwater.domain.gis import ExtractRejected, ParcelRecord, Rejection, accepted_records, plan_extract
from stormwater.domain.gis_files import read_extract

T = "pleasant-prairie-stormwater"
TENANTS = {T}
HEADER = "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft,woods_sqft,excluded_sqft,farmstead,parent_parcel_id\n"


def _csv(text: str) -> list[ParcelRecord | Rejection]:
    return list(read_extract(io.BytesIO(text.encode()), "gis/x.csv", tenants=TENANTS))


def _geojson(features: list[dict], key: str = "gis/x.geojson") -> list[ParcelRecord | Rejection]:
    doc = json.dumps({"type": "FeatureCollection", "features": features})
    return list(read_extract(io.BytesIO(doc.encode()), key, tenants=TENANTS))


def _feature(**props: object) -> dict:
    base = {"tenant": T, "parcel_id": "P-1", "owner_name": "O", "use": "residential", "area_sqft": 15100}
    base |= {"impervious_sqft": 2000}
    return {
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": [-87.9, 42.5]},
        "properties": base | props,
    }


def test_a_good_csv_row_becomes_a_record_with_blank_optional_cells_as_not_given() -> None:
    (row,) = _csv("\ufeff" + HEADER + f"{T},P-1,Ann,residential,15100,1999.71,,,,\n")
    assert isinstance(row, ParcelRecord)
    assert (row.area_sqft, row.impervious_sqft, row.woods_sqft, row.farmstead) == (
        Decimal(15100),
        Decimal("1999.71"),
        0,
        False,
    )
    assert row.line == 2  # the header is line 1


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0c", "\x1e"])
def test_a_unicode_line_separator_in_a_name_is_part_of_the_name_not_a_new_line(separator: str) -> None:
    rows = _csv(
        HEADER
        + f"{T},P-1,Ann{separator}Lee,residential,15100,2000,,,,\r\n"
        + f"{T},P-2,Bo,residential,15100,2000,,,,\n"
    )
    kept = [(r.parcel_id, r.owner_name, r.line) for r in rows if isinstance(r, ParcelRecord)]
    if separator in "\u2028\u2029":  # printable text: part of the name
        assert kept == [("P-1", f"Ann{separator}Lee", 2), ("P-2", "Bo", 3)]
    else:  # a control character: the name is refused (issue 27, common.fields.text), on its own line
        assert kept == [("P-2", "Bo", 3)]
        assert [(r.line, r.field) for r in rows if isinstance(r, Rejection)] == [(2, "owner_name")]


def test_lines_split_at_a_chunk_boundary_and_old_mac_line_ends_still_read() -> None:
    body = HEADER + "".join(f"{T},P-{i},Owner {i},residential,15100,2000,,,,\r" for i in range(2000))
    assert len(body) > 2 * 65536  # past the reader's 64 KiB chunks, lines ended by \r only
    rows = _csv(body)
    assert [(r.parcel_id, r.line) for r in rows] == [(f"P-{i}", i + 2) for i in range(2000)]


@pytest.mark.parametrize(
    ("cells", "field", "says"),
    [
        ("-1,0,,,,", "area_sqft", "negative"),
        ("0,0,,,,", "area_sqft", "above 0"),
        ("1000,1200,,,,", "impervious_sqft", "larger than the lot"),
        ("1000,500,400,200,,", "area_sqft", "exceed the parcel area"),
        ("1000,1.5e400,,,,", "impervious_sqft", ""),
        ("abc,1,,,,", "area_sqft", "number"),
        ("1000,1,,,maybe,", "farmstead", "true or false"),
    ],
)
def test_impossible_areas_are_rejected_naming_the_field(cells: str, field: str, says: str) -> None:
    (row,) = _csv(HEADER + f"{T},P-1,Ann,residential,{cells}\n")
    assert isinstance(row, Rejection) and (row.line, row.field) == (2, field)
    assert says in row.reason


def test_unknown_use_and_unknown_tenant_are_rejected() -> None:
    rows = _csv(HEADER + f"{T},P-1,Ann,industrial,100,1,,,,\ngrafton-sewer,P-2,Bo,residential,100,1,,,,\n")
    assert [(r.line, r.field) for r in rows if isinstance(r, Rejection)] == [(2, "use"), (3, "tenant")]


def test_a_farmstead_must_be_entered_as_its_own_residential_parcel() -> None:
    (row,) = _csv(HEADER + f"{T},P-1,Farm,agricultural,100000,1000,,,true,\n")
    assert isinstance(row, Rejection) and row.field == "farmstead" and "PP-CWU-EXEMPT" in row.reason


def test_an_unknown_column_refuses_the_whole_file() -> None:
    with pytest.raises(ExtractRejected) as err:
        _csv("tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft,zoning\n")
    assert err.value.field == "header" and "zoning" in err.value.reason


def test_a_parcel_given_twice_with_different_values_is_rejected_on_every_line_an_exact_repeat_is_kept() -> (
    None
):
    text = (
        HEADER
        + f"{T},P-1,Ann,residential,15100,2000,,,,\n"
        + f"{T},P-2,Bo,residential,15100,2000,,,,\n"
        + f"{T},P-1,Ann,residential,15100,2500,,,,\n"
        + f"{T},P-2,Bo,residential,15100,2000,,,,\n"
    )
    plan = plan_extract(_csv(text))  # first pass: digests only
    assert plan.accepted == 1 and plan.repeats == 1
    assert [(r.line, r.field) for r in plan.rejections] == [(2, "parcel_id"), (4, "parcel_id")]
    assert "lines/features 2, 4" in plan.rejections[0].reason
    # Second pass: P-2 once (its first row, line 3); P-1 is in conflict and never taken.
    taken = list(accepted_records(_csv(text), plan))
    assert [(r.parcel_id, r.line) for r in taken] == [("P-2", 3)]


def test_geojson_features_stream_with_exact_decimals_and_keep_their_geometry() -> None:
    rows = _geojson([_feature(impervious_sqft=1999.71), _feature(parcel_id="P-2", area_sqft=-3)])
    good, bad = rows
    assert isinstance(good, ParcelRecord) and good.impervious_sqft == Decimal("1999.71")
    assert good.line == 0 and good.geometry is not None and "Point" in good.geometry
    assert isinstance(bad, Rejection) and (bad.line, bad.field) == (1, "area_sqft")


def test_an_unknown_geojson_property_refuses_the_file_and_bad_json_too() -> None:
    with pytest.raises(ExtractRejected):
        _geojson([_feature(zoning="B-2")])
    with pytest.raises(ExtractRejected):
        list(read_extract(io.BytesIO(b'{"features": [{"properties": '), "gis/x.geojson", tenants=TENANTS))
    with pytest.raises(ExtractRejected):
        _geojson([_feature()], key="gis/x.xlsx")
