"""Lab files (CONTRACTS.md "Import files", lab/): what is taken in and what is reported."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from sampling.domain.lab_files import parse_lab_file
from sampling.domain.strength import CLASSIFIED_TENANTS

TODAY = date(2025, 2, 3)
HEADER = "tenant,sample_id,account_id,collected_on,parameter,value,units,analysed_on,lab\n"


def parse(text: str, **kwargs: object):
    return parse_lab_file(text.encode("utf-8"), today=TODAY, tenants=CLASSIFIED_TENANTS, **kwargs)


def row(
    sample: str = "S1",
    parameter: str = "bod",
    value: str = "220",
    units: str = "mg/l",
    on: str = "2025-01-15",
) -> str:
    return f"pleasant-prairie-sewer,{sample},PP-0002,{on},{parameter},{value},{units},2025-01-17,Acme\n"


def test_known_units_are_converted_exactly_to_mg_per_litre() -> None:
    parsed = parse(
        HEADER
        + row(parameter="phosphorus", value="4500", units="µg/l")
        + row(parameter="tss", value="150", units="g/m³")
        + row(parameter="fog", value="12.5", units="mg/L")
    )
    assert parsed.rejected == []
    # 4,500 µg/l / 1,000 = 4.5 mg/l; 1 g/m³ = 1 mg/l.
    assert {r.parameter: r.value for r in parsed.rows} == {
        "phosphorus": Decimal("4.5"),
        "tss": Decimal("150"),
        "fog": Decimal("12.5"),
    }


def test_an_unknown_unit_is_rejected_never_guessed() -> None:
    parsed = parse(HEADER + row(units="ppm") + row(sample="S2", units="lb/gal"))
    assert [(r.line, r.column) for r in parsed.rejected] == [(2, "units"), (3, "units")]
    assert parsed.rows == []


def test_negative_absurd_and_future_values_are_reported_and_the_rest_kept() -> None:
    parsed = parse(
        HEADER
        + row(sample="OK")
        + row(sample="NEG", value="-1")
        + row(sample="ABSURD", value="100001")
        + row(sample="EDGE", value="100000")
        + row(sample="FUTURE", on="2025-02-04")
    )
    assert [r.sample_id for r in parsed.rows] == ["OK", "EDGE"]  # 100,000 mg/l is not above the limit
    assert [(r.line, r.column) for r in parsed.rejected] == [(3, "value"), (4, "value"), (6, "collected_on")]
    assert "absurd" in parsed.rejected[1].reason


def test_a_repeated_row_changes_nothing_and_a_conflicting_one_names_both_values() -> None:
    parsed = parse(HEADER + row() + row() + row(value="230"))
    assert len(parsed.rows) == 1 and parsed.repeated == 1
    (conflict,) = parsed.rejected
    assert (
        conflict.line == 4
        and "230" in conflict.reason
        and "220" in conflict.reason
        and "line 2" in conflict.reason
    )


def test_an_unknown_column_rejects_the_file_and_columns_come_in_any_order_with_a_bom() -> None:
    bad = parse(HEADER.replace("lab\n", "lab,colour\n") + row().replace("\n", ",red\n"))
    assert bad.rows == [] and bad.rejected[0].line == 1 and "colour" in bad.rejected[0].reason
    reordered = "\ufeffvalue,units,parameter,tenant,sample_id,account_id,collected_on,analysed_on,lab\n" + (
        "220,mg/l,bod,pleasant-prairie-sewer,S1,PP-0002,2025-01-15,2025-01-17,Acme\n"
    )
    assert [r.value for r in parse(reordered).rows] == [Decimal("220")]


def test_a_resample_must_name_the_sample_it_repeats() -> None:
    header = HEADER.replace("lab\n", "lab,kind,resample_of\n")
    parsed = parse(
        header
        + row(sample="R1").replace("\n", ",resample,\n")
        + row(sample="R2").replace("\n", ",resample,S1\n")
    )
    assert [(r.line, r.column) for r in parsed.rejected] == [(2, "resample_of")]
    assert parsed.rows[0].resample_of == "S1"


def test_lines_ended_by_a_carriage_return_alone_are_read() -> None:
    parsed = parse((HEADER + row() + row(sample="S2")).replace("\n", "\r"))
    assert [(r.sample_id, r.line) for r in parsed.rows] == [("S1", 2), ("S2", 3)]
    assert parsed.rejected == []


def test_a_cell_too_large_for_csv_is_its_lines_rejection_and_the_rest_is_kept() -> None:
    parsed = parse(HEADER + row(value="9" * 200_000) + row(sample="S2"))
    assert [r.sample_id for r in parsed.rows] == ["S2"]
    [rejected] = parsed.rejected
    assert (rejected.line, rejected.column) == (2, "(line)")
    assert rejected.reason.startswith("not valid CSV: field larger than field limit")
