"""GIS extracts through the real template on the local runtime: upload -> stormwater ->
table stream -> bus. The determinations are published once, and only when they change."""

from __future__ import annotations

import json

import pytest

from conftest import STAFF, TENANT, Captured, call, determinations, owner
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

HEADER = "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft,woods_sqft,excluded_sqft,farmstead\n"
EXTRACT = HEADER + (
    f"{TENANT},R-1,Ann Home,residential,15100,1999.71,,,\n"  # the standard parcel: 1.00 ERU
    f"{TENANT},C-1,Lakeview Commerce LLC,nonresidential,43560,30000,0,0,\n"
    f"{TENANT},A-1,Hill Farm,agricultural,871200,2000,,,false\n"
    f"{TENANT},F-1,Hill Farm,residential,20000,2500,,,true\n"  # the farmstead is charged
    f"{TENANT},X-1,Bad Area,nonresidential,-5,0,,,\n"
    f"{TENANT},X-2,Too Big,nonresidential,10000,12000,,,\n"
    f"{TENANT},X-3,Odd Use,industrial,10000,100,,,\n"
)


def _determined(captured: Captured) -> dict[str, dict]:
    return {d["parcel_id"]: d for d in determinations(captured.take())}


def test_an_extract_determines_and_publishes_erus_and_reports_bad_rows(
    rt: LocalRuntime, captured: Captured
) -> None:
    captured.take()
    rt.upload("UploadsBucket", "gis/2026-10-01.csv", EXTRACT)

    assert rt.dead_letters == []
    events = captured.take()
    # New parcels' determinations come 50 to an ERUsDetermined (one event per chunk).
    assert [len(e["detail"]["determinations"]) for e in events if e["detail-type"] == "ERUsDetermined"] == [4]
    published = {d["parcel_id"]: d for d in determinations(events)}
    (summary,) = [e["detail"] for e in events if e["detail-type"] == "GisExtractTakenIn"]
    # Four new parcels (accepted, none changed: a parcel's first version is not a change).
    assert (summary["accepted"], summary["changed"], summary["rejected"], summary["lines"]) == (4, 0, 3, 7)
    assert set(published) == {"R-1", "C-1", "A-1", "F-1"}
    assert published["R-1"]["eru"] == "1.00" and published["R-1"]["exempt"] is False
    # 43,560 sq ft with 30,000 impervious: CN = (30000x98 + 13560x74)/43560 = 90.5289,
    # Q = 1.130376 in, 4,103.27 cu ft / 627.0084 = 6.544 -> 6.54 ERU
    assert published["C-1"]["eru"] == "6.54"
    assert published["C-1"]["breakdown"]["composite_cn"] == "90.5289"
    assert published["C-1"]["breakdown"]["tariff_version"] == f"{TENANT}@2023-01-01"
    assert published["A-1"] == published["A-1"] | {"eru": "0", "exempt": True}
    assert published["F-1"]["exempt"] is False and published["F-1"]["breakdown"]["farmstead"] is True
    assert {d["cause"] for d in published.values()} == {"gis_extract"}
    assert {d["sequence"] for d in published.values()} == {1}


def test_the_rejection_report_names_line_and_field_and_is_in_s3(rt: LocalRuntime, captured: Captured) -> None:
    rt.upload(
        "UploadsBucket", "gis/again-with-typo.csv", EXTRACT + f"{TENANT},X-4,,nonresidential,100,1,,,\n"
    )
    taken = captured.take("GisExtractTakenIn")
    (summary,) = [e["detail"] for e in taken]
    # The four parcels repeat the versions kept (repeated, not accepted again); the bad
    # lines are rejected; the counts add up to the file's 8 lines (issue 26).
    assert (summary["accepted"], summary["changed"], summary["repeated"]) == (0, 0, 4)
    assert summary["unchanged"] == 4 and summary["lines"] == 8 and summary["rejected"] == 4
    body = (
        rt.client("s3").get_object(Bucket=summary["report_bucket"], Key=summary["report_key"])["Body"].read()
    )
    report = {"rejections": [json.loads(line) for line in body.decode().splitlines()]}
    assert summary["report"]["rows"] == 4 and summary["report"]["counts"]["area_sqft"] == 1
    assert [(r["line"], r["field"]) for r in report["rejections"]] == [
        (6, "area_sqft"),
        (7, "impervious_sqft"),
        (8, "use"),
        (9, "owner_name"),
    ]
    assert "larger than the lot" in report["rejections"][1]["reason"]
    assert summary["report_key"].startswith("reports/stormwater/gis/")


def test_the_same_extract_again_publishes_nothing(rt: LocalRuntime, captured: Captured) -> None:
    captured.take()
    rt.upload("UploadsBucket", "gis/2026-10-01-copy.csv", EXTRACT)
    assert captured.take() == []  # same bytes: not even a summary
    assert rt.dead_letters == []


def test_a_changed_parcel_publishes_one_new_determination_with_its_cause(
    rt: LocalRuntime, captured: Captured
) -> None:
    captured.take()
    changed = HEADER + (
        f"{TENANT},R-1,Ann Home,residential,15100,1999.71,,,\n"  # as before
        f"{TENANT},C-1,Lakeview Commerce LLC,nonresidential,43560,15000,0,0,\n"  # half the paving
    )
    rt.upload("UploadsBucket", "gis/2026-11-01.csv", changed)
    published = _determined(captured)
    assert list(published) == ["C-1"]
    c1 = published["C-1"]
    assert (c1["sequence"], c1["previous_eru"], c1["eru"]) == (2, "6.54", "3.83")
    assert (c1["cause"], c1["cause_ref"]) == ("gis_extract", "gis/2026-11-01.csv")
    assert c1["effective_from"] == "2026-10-01"  # the day it was taken in (simulated clock)
    # Both GIS versions are kept: the replaced one as history, the current one on the parcel.
    status, view = call(rt, "GET", f"/parcels/{TENANT}/C-1/eru", STAFF)
    assert status == 200
    assert [(g["values"]["impervious_sqft"], g["file_key"]) for g in view["gis_history"]] == [
        ("30000", "gis/2026-10-01.csv"),
        ("15000", "gis/2026-11-01.csv"),
    ]


def test_the_project_evaluation_fee_is_charged_on_development_and_on_a_lot_split(
    rt: LocalRuntime, captured: Captured
) -> None:
    header = "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft,parent_parcel_id\n"
    rt.upload("UploadsBucket", "gis/pef-1.csv", header + f"{TENANT},U-1,Dev Co,nonresidential,40000,0,\n")
    captured.take()
    rt.upload(
        "UploadsBucket",
        "gis/pef-2.csv",
        header
        + f"{TENANT},U-1,Dev Co,nonresidential,20000,8000,\n"  # built on, and split
        + f"{TENANT},U-2,Dev Co,nonresidential,20000,0,U-1\n",  # the other half of the split
    )
    fees = {f["parcel_id"]: f for f in (e["detail"] for e in captured.take("FeeCharged"))}
    assert {p: (f["rule_id"], f["amount"], f["details"]["reason"]) for p, f in fees.items()} == {
        "U-1": ("PP-CWU-PEF", "150.00", "developed"),
        "U-2": ("PP-CWU-PEF", "150.00", "lot_split"),
    }
    assert fees["U-1"]["details"]["impervious_sqft_before"] == "0"
    # Once only: a later extract with U-1 changed again charges nothing more.
    rt.upload("UploadsBucket", "gis/pef-3.csv", header + f"{TENANT},U-1,Dev Co,nonresidential,20000,9000,\n")
    assert captured.take("FeeCharged") == []


def test_an_engineers_override_is_kept_beside_the_gis_values_and_can_be_withdrawn(
    rt: LocalRuntime, captured: Captured
) -> None:
    captured.take()
    path = f"/staff/{TENANT}/parcels/R-1/overrides"
    status, body = call(
        rt, "POST", path, owner("R-1"), {"fields": {"impervious_sqft": "4000"}, "reason": "x"}
    )
    assert status == 403
    status, body = call(rt, "POST", path, STAFF, {"fields": {"impervious_sqft": "40000"}, "reason": "survey"})
    assert status == 400 and body["error"]["message"].startswith("fields.area_sqft:")
    status, body = call(
        rt,
        "POST",
        path,
        STAFF,
        {"fields": {"impervious_sqft": "4000"}, "reason": "2026 aerial photo: new garage"},
    )
    assert status == 200 and body["published"] is True
    (determined,) = [e["detail"] for e in captured.take("ERUDetermined")]
    assert (determined["cause"], determined["cause_ref"]) == ("manual_override", body["override_id"])
    assert determined["breakdown"]["data_source"] == "override"
    assert determined["breakdown"]["impervious_sqft"] == "4000"

    # A later extract repeating the old GIS values changes nothing: the override stays in force.
    rt.upload(
        "UploadsBucket",
        "gis/2026-10-02.csv",
        HEADER + f"{TENANT},R-1,Ann Home,residential,15100,1999.71,,,\n",
    )
    assert determinations(captured.take()) == []
    status, view = call(rt, "GET", f"/parcels/{TENANT}/R-1/eru", owner("R-1"))
    assert status == 200 and view["override"] == {"impervious_sqft": "4000"}
    assert view["gis_history"][0]["values"]["impervious_sqft"] == "1999.71"
    assert view["overrides"][0]["reason"] == "2026 aerial photo: new garage"

    status, body = call(rt, "POST", path, STAFF, {"fields": {}, "reason": "garage demolished"})
    assert status == 200, body
    (back,) = [e["detail"] for e in captured.take("ERUDetermined")]
    assert (back["eru"], back["breakdown"]["data_source"]) == ("1.00", "gis")
