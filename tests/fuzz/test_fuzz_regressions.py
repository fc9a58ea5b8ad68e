"""Plain regression tests for what the hostile import suite found (issue 27): each case is
one the properties of this directory drew, written out so that it fails on the code before
its fix whatever examples Hypothesis draws."""

from __future__ import annotations

import io
import json

import pytest

from stormwater.domain.gis import ParcelRecord, Rejection
from stormwater.domain.gis_files import read_extract

T = "pleasant-prairie-stormwater"
GIS_HEADER = "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft\n"


@pytest.mark.parametrize("owner", ["\x00Ann Lee", "Ann\x1bLee", "Ann\x7fLee", "Ann\x85Lee", "Ann\x08"])
def test_a_gis_owner_name_holding_a_control_character_is_refused_in_csv(owner: str) -> None:
    """Before: stormwater's GIS text cells were checked for length and formula starts only,
    so '\\x00Ann Lee' was kept as the parcel's owner (every other reader's text cells are
    printable, ``common.fields.text``)."""
    data = (GIS_HEADER + f"{T},P-1,{owner},residential,15000,2000\n").encode()
    (row,) = read_extract(io.BytesIO(data), "gis/x.csv", tenants={T})
    assert isinstance(row, Rejection), row
    assert (row.line, row.field) == (2, "owner_name") and "control character" in row.reason


def test_a_gis_owner_name_holding_a_control_character_is_refused_in_geojson() -> None:
    props = {"tenant": T, "parcel_id": "P-1", "owner_name": "Ann\x00", "use": "residential"}
    props |= {"area_sqft": 15000, "impervious_sqft": 2000}
    data = json.dumps({"type": "FeatureCollection", "features": [{"type": "Feature", "properties": props}]})
    (row,) = read_extract(io.BytesIO(data.encode()), "gis/x.geojson", tenants={T})
    assert isinstance(row, Rejection) and row.field == "owner_name" and "control character" in row.reason


def test_a_printable_gis_owner_name_is_kept_as_it_was() -> None:
    data = (GIS_HEADER + f'{T},P-1,"Zoë O\'Neil, Jr.",residential,15000,2000\n').encode()
    (row,) = read_extract(io.BytesIO(data), "gis/x.csv", tenants={T})
    assert isinstance(row, ParcelRecord) and row.owner_name == "Zoë O'Neil, Jr."
