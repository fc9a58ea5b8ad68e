"""A new stormwater tariff version redetermines the parcels on its first day (cause
``tariff_change``), through the daily schedule on the local runtime's simulated clock."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from conftest import REPO, TENANT, Captured

from sewerbill.local import LocalRuntime
from stormwater.domain.determinations import ParcelData, determine
from stormwater.domain.eru import StormwaterSettings

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRuntime]:
    tariffs = tmp_path_factory.mktemp("tariffs")
    shutil.copytree(REPO / "infra" / "tariffs", tariffs, dirs_exist_ok=True)
    current = tariffs / TENANT / "2023-01-01.yaml"
    text = current.read_text()
    current.write_text(
        text.replace(
            "effective_from: 2023-01-01\n", "effective_from: 2023-01-01\neffective_until: 2027-01-01\n"
        )
    )
    (tariffs / TENANT / "2027-01-01.yaml").write_text(
        text.replace("effective_from: 2023-01-01", "effective_from: 2027-01-01").replace(
            'pervious_cn: {rule: PP-CWU-CN, example: true, value: "74"',
            'pervious_cn: {rule: PP-CWU-CN, example: true, value: "61"',
        )
    )
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2026, 12, 30, 12, 0, tzinfo=UTC),
        parameters={"TariffsDir": str(tariffs)},
    ) as runtime:
        yield runtime


def test_a_new_tariff_version_redetermines_the_parcels_whose_eru_changes(
    rt: LocalRuntime, captured: Captured
) -> None:
    rt.upload(
        "UploadsBucket",
        "gis/before-2027.csv",
        "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft\n"
        f"{TENANT},TC-R1,Ann Home,residential,15100,1999.71\n"  # the standard parcel: 1.00 under any CN
        f"{TENANT},TC-C1,Lakeview Commerce LLC,nonresidential,43560,30000\n",
    )
    captured.take()
    rt.clock.advance(to=datetime(2027, 1, 1, 12, 0, tzinfo=UTC))  # the check runs at 01:00 Chicago
    events = captured.take("ERUDetermined")
    assert [e["detail"]["parcel_id"] for e in events] == ["TC-C1"]  # TC-R1 stays 1.00: nothing sent
    changed = events[0]["detail"]
    assert (changed["cause"], changed["cause_ref"]) == ("tariff_change", f"{TENANT}@2027-01-01")
    assert changed["effective_from"] == "2027-01-01" and changed["previous_eru"] == "6.54"
    # Worked by the same domain code under pervious CN 61 (the fixture's new version):
    settings = replace(StormwaterSettings.tariff_defaults(), pervious_cn=Decimal(61))
    data = ParcelData(use="nonresidential", area_sqft=Decimal(43560), impervious_sqft=Decimal(30000))
    assert changed["eru"] == format(determine(data, settings, "v").eru, "f") != "6.54"

    rt.clock.advance(to=datetime(2027, 1, 3, 12, 0, tzinfo=UTC))  # two more daily checks
    assert captured.take("ERUDetermined") == []
    assert rt.dead_letters == []
