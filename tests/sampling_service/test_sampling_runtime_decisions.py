"""Resamples, splits, satellite deadlines and Sullivan's BOD 900 days through the local runtime."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from runtime_support import HEADER, PP, REPO, call, captured, start_capture

from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

SU = "sullivan-sewer"
BOTH = (PP, SU)
LAB_FILE = HEADER + (
    # PP-0003: BOD 900 on Nov 3, resampled Nov 17 at 200; the discharger's split at 880.
    f"{PP},ORIG-3,PP-0003,2025-11-03,bod,900,mg/l,2025-11-05,Acme,routine,,\n"
    f"{PP},ORIG-3,PP-0003,2025-11-03,tss,240,mg/l,2025-11-05,Acme,routine,,\n"
    f"{PP},RE-3,PP-0003,2025-11-17,bod,200,mg/l,2025-11-19,Acme,resample,ORIG-3,\n"
    f"{PP},SPLIT-3,PP-0003,2025-11-03,bod,880,mg/l,2025-11-06,State Lab,split,ORIG-3,\n"
    # PP-0004: BOD 900, resampled at 150.
    f"{PP},ORIG-4,PP-0004,2025-11-03,bod,900,mg/l,2025-11-05,Acme,routine,,\n"
    f"{PP},RE-4,PP-0004,2025-11-17,bod,150,mg/l,2025-11-19,Acme,resample,ORIG-4,\n"
    # A satellite system sampled twice.
    f"{PP},SAT-1110,SAT-1,2025-11-10,bod,150,mg/l,2025-11-12,Acme,routine,,\n"
    f"{PP},SAT-1120,SAT-1,2025-11-20,bod,160,mg/l,2025-11-22,Acme,routine,,\n"
    # Sullivan: BOD 950 on two days of Q4 2025 (SU-BOD900).
    f"{SU},SU-1014,SU-0042,2025-10-14,bod,950,mg/l,2025-10-16,Acme,routine,,\n"
    f"{SU},SU-1130,SU-0042,2025-11-30,bod,950,mg/l,2025-12-02,Acme,routine,,\n"
    f"{SU},SU-1130,SU-0042,2025-11-30,tss,300,mg/l,2025-12-02,Acme,routine,,\n"
)


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        # 09:00 in Chicago, after the day's 06:30 sampling run.
        start_time=datetime(2025, 12, 10, 15, 0, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
    ) as runtime:
        yield runtime


@pytest.fixture(scope="module")
def taken_in(rt: LocalRuntime) -> dict[str, list[dict[str, Any]]]:
    capture = start_capture(rt)
    for tenant, account, satellite in (
        (PP, "PP-0003", False),
        (PP, "PP-0004", False),
        (PP, "SAT-1", True),
        (SU, "SU-0042", False),
    ):
        point: dict[str, Any] = {"sampling_point": "MH-1", "satellite": satellite}
        if tenant == SU:
            point |= {"sic_division": "D", "avg_daily_flow_gal": "2400"}
        status, body = call(rt, "PUT", f"/staff/{tenant}/sampling-points/{account}", point, BOTH)
        assert status == 200, body
    rt.upload("UploadsBucket", "lab/2025-11.csv", LAB_FILE)
    assert rt.dead_letters == []
    events: dict[str, list[dict[str, Any]]] = {}
    for event in captured(rt, capture):
        events.setdefault(event["detail-type"], []).append(event["detail"])
    events["_capture"] = [{"url": capture}]
    return events


def strength(events: dict[str, list[dict[str, Any]]], account: str) -> list[dict[str, Any]]:
    return [
        e
        for kind in ("StrengthClassified", "StrengthCategoryChanged")
        for e in events.get(kind, [])
        if e["account_id"] == account
    ]


def test_a_sullivan_bod_950_result_yields_violation_days_for_billing(taken_in: dict[str, Any]) -> None:
    (event,) = strength(taken_in, "SU-0042")
    assert event["category"] == "above-normal"
    # Two days in Q4 2025 with BOD >= 900: 2025-10-14 and 2025-11-30 (SU-BOD900).
    assert event["violation_days"] == [
        {
            "rule_id": "SU-BOD900",
            "period_start": "2025-10-01",
            "period_end": "2026-01-01",
            "days": 2,
            "dates": ["2025-10-14", "2025-11-30"],
        }
    ]
    assert event["basis"]["bod"] == "950" and event["basis"]["tss"] == "300"
    # SU-INDUSTRIAL: SIC Division D (manufacturing) discharging 2,400 GPD > 2,000.
    assert event["industrial_user"]["is_industrial"] is True
    assert "SIC Division D" in event["industrial_user"]["reasons"][0]


def test_the_split_is_shown_beside_the_utilitys_sample(rt: LocalRuntime, taken_in: dict[str, Any]) -> None:
    status, view = call(rt, "GET", f"/staff/{PP}/accounts/PP-0003/samples")
    assert status == 200
    by_id = {s["sample_id"]: s for s in view["samples"]}
    assert set(by_id) == {"ORIG-3", "RE-3"}
    assert [(s["sample_id"], s["results"]["bod"]) for s in by_id["ORIG-3"]["splits"]] == [("SPLIT-3", "880")]
    assert by_id["ORIG-3"]["splits"][0]["difference_mg_l"] == {"bod": "-20"}  # 880 - 900
    # Before any decision the original stands: BOD 900 -> B; the resample waits.
    (event,) = strength(taken_in, "PP-0003")
    assert event["category"] == "B" and event["basis"]["bod"] == "900"


def test_a_dischargers_resample_request_after_its_split_needs_a_significant_difference(
    rt: LocalRuntime, taken_in: dict[str, Any]
) -> None:
    # PP-SEW-SPLIT: SPLIT-3's BOD 880 against the utility's 900 differs by 20, within 20% of
    # 900 (180, the tariff's split_difference_percent): refused, with the figures.
    capture = taken_in["_capture"][0]["url"]
    status, answer = call(
        rt, "POST", f"/staff/{PP}/samples/SPLIT-3/resample-requests", {"requested_on": "2025-12-10"}
    )
    assert status == 200, answer
    assert (answer["accepted"], answer["original_sample_id"], answer["differences_mg_l"]) == (
        False,
        "ORIG-3",
        {"bod": "-20"},
    )
    assert "bod 880 mg/l against 900 mg/l" in answer["reason"]
    (decided,) = [
        e["detail"] for e in captured(rt, capture) if e["detail-type"] == "SplitResampleRequestDecided"
    ]
    assert (decided["accepted"], decided["rule_id"], decided["requested_by"]) == (
        False,
        "PP-SEW-SPLIT",
        "clerk-anna",
    )


def test_staff_choose_the_resample_or_average_the_two_recording_who_and_why(
    rt: LocalRuntime, taken_in: dict[str, Any]
) -> None:
    capture = taken_in["_capture"][0]["url"]
    # Average: BOD (900 + 200) / 2 = 550 > 180, still B, now billed on 550; TSS 240 (the
    # original's only) stays.
    status, averaged = call(
        rt, "POST", f"/staff/{PP}/samples/ORIG-3/decision", {"decision": "average", "reason": "both valid"}
    )
    assert status == 200, averaged
    assert averaged["used"] == {"bod": "550", "tss": "240"} and averaged["category"] == "B"
    assert averaged["decided_by"] == "clerk-anna"
    # Choose: the resample at BOD 150 stands for November, so PP-0004 returns to A.
    status, chosen = call(
        rt,
        "POST",
        f"/staff/{PP}/samples/ORIG-4/decision",
        {"decision": "resample", "reason": "bottle contaminated"},
    )
    assert status == 200 and chosen["category"] == "A"
    events: dict[str, list[dict[str, Any]]] = {}
    for event in captured(rt, capture):
        events.setdefault(event["detail-type"], []).append(event["detail"])
    decided = {e["original_sample_id"]: e for e in events["ResampleDecided"]}
    assert (decided["ORIG-3"]["decision"], decided["ORIG-3"]["decided_by"], decided["ORIG-3"]["reason"]) == (
        "average",
        "clerk-anna",
        "both valid",
    )
    (pp3,) = strength(events, "PP-0003")
    assert pp3["trigger"] == "decision:ORIG-3"
    assert pp3["basis"]["bod"] == "550" and pp3["basis"]["sample_ids"] == ["ORIG-3", "RE-3"]
    (pp4,) = strength(events, "PP-0004")
    assert (pp4["previous_category"], pp4["category"]) == ("B", "A")
    # A second, different decision is refused naming the first.
    status, body = call(
        rt, "POST", f"/staff/{PP}/samples/ORIG-3/decision", {"decision": "original", "reason": "x"}
    )
    assert status == 409 and "average" in body["error"]["message"]


def test_a_satellite_resample_request_on_day_3_is_accepted_and_on_day_4_refused(
    rt: LocalRuntime, taken_in: dict[str, Any]
) -> None:
    capture = taken_in["_capture"][0]["url"]
    captured(rt, capture)
    status, _ = call(rt, "POST", f"/staff/{PP}/samples/SAT-1110/delivery", {"delivered_on": "2025-12-05"})
    assert status == 200
    # PP-SEW-SAT-SAMPLE: the delivery publishes the certified results (notices emails them).
    # Sampled 2025-11-10, due 18 working days later; delivered 2025-12-05, on time.
    (delivery,) = [
        e["detail"] for e in captured(rt, capture) if e["detail-type"] == "SatelliteResultsDelivered"
    ]
    assert (
        delivery["account_id"],
        delivery["sampled_on"],
        delivery["delivered_on"],
        delivery["on_time"],
    ) == (
        "SAT-1",
        "2025-11-10",
        "2025-12-05",
        True,
    )
    assert [(r["parameter"], r["value"], r["lab"]) for r in delivery["results"]] == [("bod", "150", "Acme")]
    status, day3 = call(
        rt, "POST", f"/staff/{PP}/samples/SAT-1110/resample-requests", {"requested_on": "2025-12-08"}
    )
    assert status == 200 and day3["accepted"] is True
    status, day4 = call(
        rt, "POST", f"/staff/{PP}/samples/SAT-1110/resample-requests", {"requested_on": "2025-12-09"}
    )
    assert status == 200 and day4["accepted"] is False
    assert (day4["delivered_on"], day4["last_day"]) == ("2025-12-05", "2025-12-08")
    assert "2025-12-09" in day4["reason"]


def test_the_18_working_day_deadline_reminds_before_and_records_a_breach_after(
    rt: LocalRuntime, taken_in: dict[str, Any]
) -> None:
    capture = taken_in["_capture"][0]["url"]
    captured(rt, capture)
    # SAT-1120 sampled Thu 2025-11-20: due Thu 2025-12-18 (18 working days, skipping the
    # weekends, Thanksgiving 11-27 and the Village's closure 11-28 from the tariff); the
    # reminder goes 3 working days before, Mon 2025-12-15.
    rt.clock.advance(to=datetime(2025, 12, 15, 14, 0, tzinfo=UTC))
    reminders = [e["detail"] for e in captured(rt, capture) if e["detail-type"] == "SatelliteResultsDueSoon"]
    assert [(r["sample_id"], r["due_on"]) for r in reminders] == [("SAT-1120", "2025-12-18")]
    rt.clock.advance(to=datetime(2025, 12, 18, 14, 0, tzinfo=UTC))
    assert [e for e in captured(rt, capture) if e["detail-type"] == "SatelliteResultsOverdue"] == []
    rt.clock.advance(to=datetime(2025, 12, 19, 14, 0, tzinfo=UTC))
    (breach,) = [e["detail"] for e in captured(rt, capture) if e["detail-type"] == "SatelliteResultsOverdue"]
    assert (breach["sample_id"], breach["due_on"], breach["recorded_on"]) == (
        "SAT-1120",
        "2025-12-18",
        "2025-12-19",
    )
    assert rt.dead_letters == []
