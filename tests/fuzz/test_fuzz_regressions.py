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


BILLING_HEADER = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class\n"


@pytest.mark.parametrize("space", ["\xa0", "\u2003", "\u3000", "\x0b", "\x0c", "\x1c", "\x1f", "\x85"])
def test_a_billing_formula_behind_unicode_whitespace_is_refused(space: str) -> None:
    """Before: billing checked a cell for a formula after stripping spaces only, then kept it
    stripped of all whitespace (``str.strip``: Unicode's), so ``\\xa0=HYPERLINK(1)`` was
    stored as the account's name ``=HYPERLINK(1)``."""
    from billing.domain.accounts import parse_account_file

    line = f"grafton-sewer,GR-1,{space}=HYPERLINK(1),1 Main,1 Main,53024,2026-01-01,residential\n"
    accepted, errors = parse_account_file((BILLING_HEADER + line).encode(), {"grafton-sewer"})
    assert accepted == []
    assert [(e.line, e.column, e.reason) for e in errors] == [
        (2, "name", "starts with '=': a spreadsheet formula is refused (CSV injection)")
    ]


def test_a_billing_cell_of_plain_text_behind_whitespace_is_still_kept_stripped() -> None:
    from billing.domain.accounts import parse_account_file

    line = "grafton-sewer,GR-1,\xa0Ann Lee\xa0,1 Main,1 Main,53024,2026-01-01,residential\n"
    accepted, errors = parse_account_file((BILLING_HEADER + line).encode(), {"grafton-sewer"})
    assert errors == [] and [a.name for _, a in accepted] == ["Ann Lee"]
