"""PP-SEW-CAT-B-EXIT through the local runtime: the daily schedule returns a B account to A.

PP-0005: BOD 220 on 2025-01-15 (B), then compliant every month from 2025-02-15 to
2027-01-15 (24 samples). The 24 months run from 2025-02-15, so the account is A from the
anniversary 2027-02-15, with no new sample needed: sampling's daily run makes the change.
PP-0006: the same, but its month-23 sample (2026-12-15) is BOD 300, which restarts the
clock from the next compliant sample (2027-01-15): it stays B, now billed on BOD 300.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import pytest
from runtime_support import HEADER, PP, REPO, call, captured, start_capture

from common.dates import add_months
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration


def lab_file() -> str:
    lines = [HEADER]
    for account in ("PP-0005", "PP-0006"):
        lines.append(f"{PP},{account}-0,{account},2025-01-15,bod,220,mg/l,2025-01-17,Acme,,,\n")
        for n in range(24):
            day = add_months(date(2025, 2, 15), n)
            bod = "300" if account == "PP-0006" and n == 22 else "150"
            lines.append(f"{PP},{account}-{n + 1},{account},{day},bod,{bod},mg/l,{day},Acme,,,\n")
    return "".join(lines)


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2027, 2, 10, 15, 0, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs")},
    ) as runtime:
        yield runtime


def by_account(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        e["detail"]["account_id"]: e
        for e in events
        if e["detail-type"] in ("StrengthClassified", "StrengthCategoryChanged")
    }


def test_24_compliant_months_return_b_to_a_and_a_month_23_exceedance_restarts_the_clock(
    rt: LocalRuntime,
) -> None:
    capture = start_capture(rt)
    for account in ("PP-0005", "PP-0006"):
        assert call(rt, "PUT", f"/staff/{PP}/sampling-points/{account}", {"sampling_point": "MH-5"})[0] == 200
    rt.upload("UploadsBucket", "lab/history.csv", lab_file())

    after_upload = by_account(captured(rt, capture))
    pp5 = after_upload["PP-0005"]["detail"]
    assert (pp5["category"], pp5["since"]) == ("B", "2025-01-15")
    assert (pp5["exit_clock"]["started_on"], pp5["exit_clock"]["returns_on"]) == ("2025-02-15", "2027-02-15")
    assert pp5["basis"]["bod"] == "220"  # compliant results during the 24 months do not lower it
    pp6 = after_upload["PP-0006"]["detail"]
    assert pp6["category"] == "B" and pp6["basis"]["bod"] == "300"
    assert (pp6["exit_clock"]["started_on"], pp6["exit_clock"]["returns_on"]) == ("2027-01-15", "2029-01-15")

    # The daily runs of Feb 11-16 (06:30 Chicago): on the 15th PP-0005 becomes A.
    rt.clock.advance(to=datetime(2027, 2, 16, 14, 0, tzinfo=UTC))
    after_anniversary = by_account(captured(rt, capture))
    assert set(after_anniversary) == {"PP-0005"}
    returned = after_anniversary["PP-0005"]
    assert returned["detail-type"] == "StrengthCategoryChanged"
    detail = returned["detail"]
    assert (detail["previous_category"], detail["category"], detail["effective_from"]) == (
        "B",
        "A",
        "2027-02-15",
    )
    assert detail["trigger"] == "exit:2027-02-15" and detail["basis"] is None
    assert detail["reassignment"]["rule_id"] == "PP-SEW-CAT-B-EXIT"
    assert rt.dead_letters == []
