"""Hostile lab files (issues 26, 27): safe ids, dates inside the tenant's window, formula
cells refused as metering refuses them, and counts that add up to the data lines."""

from __future__ import annotations

from datetime import date

import pytest

from common.fields import DateWindow
from common.imports import ImportCounts
from sampling.domain.intake import Checked, date_windows, import_counts
from sampling.domain.lab_files import ParsedLabFile, parse_lab_file
from sampling.domain.policy import TenantPolicy
from sampling.domain.strength import CLASSIFIED_TENANTS, PLEASANT_PRAIRIE_SEWER, StrengthLimits

TODAY = date(2025, 2, 3)
FIRST_TARIFF = date(2024, 1, 1)
PP = PLEASANT_PRAIRIE_SEWER
HEADER = "tenant,sample_id,account_id,collected_on,parameter,value,units,analysed_on,lab\n"
WINDOWS = {t: DateWindow(FIRST_TARIFF, TODAY) for t in CLASSIFIED_TENANTS}


def parse(text: str) -> ParsedLabFile:
    return parse_lab_file(text.encode("utf-8"), today=TODAY, tenants=CLASSIFIED_TENANTS, windows=WINDOWS)


def line(
    sample: str = "S1",
    account: str = "PP-0002",
    collected: str = "2025-01-15",
    parameter: str = "bod",
    value: str = "220",
    analysed: str = "2025-01-17",
    lab: str = "Acme",
) -> str:
    return f"{PP},{sample},{account},{collected},{parameter},{value},mg/l,{analysed},{lab}\n"


def only_rejection(text: str) -> tuple[str, str, bool]:
    parsed = parse(HEADER + text)
    assert parsed.rows == [] and len(parsed.rejected) == 1, parsed.rejected
    (bad,) = parsed.rejected
    return bad.column, bad.reason, bad.retry


@pytest.mark.parametrize(
    ("cells", "column", "cause"),
    [
        ({"sample": "../../etc/passwd"}, "sample_id", "holds a slash"),
        ({"sample": "S\x001"}, "sample_id", "control character"),
        ({"sample": "S" * 2000}, "sample_id", "2000 characters long"),
        ({"account": "PP#0002"}, "account_id", "holds '#'"),
        ({"account": "a/b"}, "account_id", "holds a slash"),
    ],
)
def test_an_unsafe_id_is_rejected_naming_its_column(cells: dict[str, str], column: str, cause: str) -> None:
    got_column, reason, _ = only_rejection(line(**cells))
    assert got_column == column and cause in reason


@pytest.mark.parametrize(
    ("cells", "column", "cause", "retry"),
    [
        (
            {"collected": "1900-01-01"},
            "collected_on",
            "before the first tariff of pleasant-prairie-sewer",
            False,
        ),
        ({"collected": "2023-12-31"}, "collected_on", "before the first tariff", False),
        ({"collected": "2100-01-01", "analysed": "2100-01-02"}, "collected_on", "in the future", True),
        ({"analysed": "2025-02-04"}, "analysed_on", "in the future", True),
        ({"analysed": "2025-01-14"}, "analysed_on", "before the sample was collected", False),
    ],
)
def test_dates_lie_between_the_first_tariff_and_today(
    cells: dict[str, str], column: str, cause: str, retry: bool
) -> None:
    got_column, reason, got_retry = only_rejection(line(**cells))
    assert (got_column, got_retry) == (column, retry) and cause in reason


def test_the_first_tariff_day_and_today_are_inside_the_window() -> None:
    parsed = parse(HEADER + line(collected="2024-01-01", analysed="2025-02-03"))
    assert len(parsed.rows) == 1 and parsed.rejected == []


@pytest.mark.parametrize(
    ("cells", "column"),
    [
        ({"lab": '"=HYPERLINK(""http://x"",""y"")"'}, "lab"),
        ({"lab": "@SUM(A1)"}, "lab"),
        ({"value": "+220"}, "value"),
        ({"value": "=1+1"}, "value"),
        ({"parameter": "=bod"}, "parameter"),
    ],
)
def test_a_formula_cell_is_refused_as_metering_refuses_it(cells: dict[str, str], column: str) -> None:
    got_column, reason, _ = only_rejection(line(**cells))
    assert got_column == column and "spreadsheet formula is refused (CSV injection)" in reason


def test_a_negative_value_is_reported_as_negative() -> None:
    column, reason, _ = only_rejection(line(value="-5"))
    assert column == "value" and "negative" in reason


def test_a_repeated_result_is_repeated_and_a_conflicting_one_rejected_with_both_values() -> None:
    parsed = parse(HEADER + line() + line() + line(value="230") + "\n" + line(parameter="tss", value="140"))
    assert [r.parameter for r in parsed.rows] == ["bod", "tss"]
    assert parsed.repeated == 1 and parsed.lines == 4  # the blank line is no data line
    (conflict,) = parsed.rejected
    assert conflict.line == 4 and conflict.column == "value"
    assert "230" in conflict.reason and "220" in conflict.reason
    counts = import_counts(parsed.lines, Checked(new=parsed.rows), parsed.repeated, parsed.rejected)
    assert counts == ImportCounts(lines=4, accepted=2, repeated=1, rejected=1)


def test_a_refused_header_rejects_every_data_line() -> None:
    parsed = parse("tenant,sample_id,zoning\n" + line() + line(sample="S2"))
    counts = import_counts(parsed.lines, Checked(), parsed.repeated, parsed.rejected)
    assert counts == ImportCounts(lines=2, rejected=2)
    assert parsed.rejected[0].line == 1 and "unknown column(s) zoning" in parsed.rejected[0].reason


def test_the_windows_start_at_each_tenants_first_tariff_version() -> None:
    def policies(tenant: str, on: date) -> TenantPolicy:
        limits = StrengthLimits.from_mapping({"bod": "180"}, rule_id="X")  # type: ignore[arg-type]
        return TenantPolicy(tenant, "v1", limits, 1, first_tariff_on=date(2023, 1, 1))

    windows = date_windows(policies, TODAY)
    assert windows[PP] == DateWindow(date(2023, 1, 1), TODAY)
