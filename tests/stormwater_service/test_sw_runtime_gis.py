"""GIS extracts through the real template on the local runtime: upload -> stormwater ->
table stream -> bus. The determinations are published once, and only when they change."""

from __future__ import annotations

import json

import pytest
from conftest import TENANT, Captured

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
    return {e["detail"]["parcel_id"]: e["detail"] for e in captured.take("ERUDetermined")}


def test_an_extract_determines_and_publishes_erus_and_reports_bad_rows(
    rt: LocalRuntime, captured: Captured
) -> None:
    captured.take()
    rt.upload("UploadsBucket", "gis/2026-10-01.csv", EXTRACT)

    assert rt.dead_letters == []
    events = captured.take()
    published = {e["detail"]["parcel_id"]: e["detail"] for e in events if e["detail-type"] == "ERUDetermined"}
    (summary,) = [e["detail"] for e in events if e["detail-type"] == "GisExtractTakenIn"]
    assert (summary["accepted"], summary["changed"], summary["rejected"]) == (4, 4, 3)
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
    assert summary["accepted"] == 4 and summary["changed"] == 0 and summary["unchanged"] == 4
    report = json.loads(
        rt.client("s3").get_object(Bucket=summary["report_bucket"], Key=summary["report_key"])["Body"].read()
    )
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
