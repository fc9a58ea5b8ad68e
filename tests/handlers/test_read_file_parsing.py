"""metering.domain.consumption: parsing read files (pure, no AWS)."""

from __future__ import annotations

from datetime import date

from metering.domain.consumption import parse_reads

HEADER = b"tenant,account_id,period_start,period_end,volume_gal\n"


def test_good_lines_become_consumptions_with_their_line_numbers() -> None:
    parsed = parse_reads(HEADER + b"grafton-sewer,GR-1,2026-07-01,2026-10-01,23000\n\n")
    [c] = parsed.accepted
    assert (c.tenant, c.account_id, c.period_start, c.volume_gal, c.line) == (
        "grafton-sewer",
        "GR-1",
        date(2026, 7, 1),
        23000,
        2,
    )
    assert parsed.rejected == []


def test_each_bad_value_is_rejected_with_line_and_column() -> None:
    parsed = parse_reads(
        HEADER
        + b"Grafton Sewer,GR-1,2026-07-01,2026-10-01,1\n"
        + b"grafton-sewer,,2026-07-01,2026-10-01,1\n"
        + b"grafton-sewer,GR-1,2026-10-01,2026-07-01,1\n"
        + b"grafton-sewer,GR-1,2026-07-01,2026-10-01,12.5\n"
        + b"grafton-sewer,GR-1,2026-07-01\n"
        + b"unknown-sewer,GR-1,2026-07-01,2026-10-01,1\n",
        tenants={"grafton-sewer"},
    )
    assert [(r.line, r.column) for r in parsed.rejected] == [
        (2, "tenant"),
        (3, "account_id"),
        (4, "period_end"),
        (5, "volume_gal"),
        (6, "(row)"),
        (7, "tenant"),
    ]
    assert parsed.accepted == []


def test_a_repeated_line_counts_once_and_a_conflicting_one_is_rejected() -> None:
    line = b"grafton-sewer,GR-1,2026-07-01,2026-10-01,100\n"
    parsed = parse_reads(HEADER + line + line + b"grafton-sewer,GR-1,2026-07-01,2026-10-01,200\n")
    assert len(parsed.accepted) == 1
    [r] = parsed.rejected
    assert (r.line, r.column) == (4, "volume_gal") and "line 2" in r.reason


def test_a_file_that_is_not_text_is_rejected_whole() -> None:
    [r] = parse_reads(b"\xff\xfe\x00garbage").rejected
    assert r.column == "(file)"
