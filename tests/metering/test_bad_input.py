"""Bad input (issue 6 and 9): every bad row is rejected with its line, column and reason; the rest is kept.

Nothing here may raise: a file that crashed the handler would be retried into the DLQ.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest
from support import READS_HEADER, Utility, settings

from metering.app.ingest import MAX_FILE_BYTES, UploadedFile, take_in_file
from metering.domain import csvinput

GR = "grafton-sewer"


def utility(meters: int = 1) -> Utility:
    u = Utility(today=date(2026, 12, 1))
    rows = [f"{GR},GR-M{i},GR-{i},water,gal,9,2026-01-01,0,5/8,," for i in range(meters)]
    assert u.meters(*rows).accepted == meters
    return u


def test_three_bad_rows_out_of_a_thousand_keep_the_997_and_report_the_3_by_line() -> None:
    u = utility(1000)
    rows = [f"{GR},GR-M{i},2026-04-01,{1000 + i}," for i in range(1000)]
    rows[10] = f"{GR},GR-M10,2026-04-01,{'9' * 40},"  # 40 digits: more than DynamoDB's 38
    rows[500] = f"{GR},{'A' * 3000},2026-04-01,1,"  # a 3,000-character id: a key over 2 KB
    rows[998] = f"{GR},GR-M998,2026-04-01,{'7' * 4301},"  # beyond Python's 4,300-digit int limit
    result = u.reads(*rows)
    assert (result.accepted, result.rejected) == (997, 3)
    # the header is line 1, so row i is on line i + 2
    assert [(r.line, r.column) for r in result.first_rejections] == [
        (12, "reading"),
        (502, "meter_id"),
        (1000, "reading"),
    ]
    assert len(u.repo.consumptions) == 997


def test_a_field_over_csvs_limit_is_one_rejected_line() -> None:
    u = utility(2)
    huge = "x" * 131_073
    result = u.reads(f"{GR},GR-M0,2026-04-01,5,", f'{GR},"{huge}",2026-04-01,5,', f"{GR},GR-M1,2026-04-01,6,")
    assert result.accepted == 2
    [rejection] = result.first_rejections
    assert rejection.line == 3 and "longer than" in rejection.reason


@pytest.mark.parametrize(
    ("cell", "column", "says"),
    [
        ("=HYPERLINK(1)", "meter_id", "CSV injection"),
        ("+1", "meter_id", "CSV injection"),
        ("-1", "meter_id", "CSV injection"),
        ("@SUM(A1)", "meter_id", "CSV injection"),
    ],
)
def test_a_spreadsheet_formula_in_a_text_field_is_refused(cell: str, column: str, says: str) -> None:
    u = utility()
    [rejection] = u.reads(f"{GR},{cell},2026-04-01,5,").first_rejections
    assert (rejection.line, rejection.column) == (2, column) and says in rejection.reason


@pytest.mark.parametrize(
    ("row", "column", "says"),
    [
        (f"{GR},GR-M0,1900-01-01,5,", "read_on", "outside"),
        (f"{GR},GR-M0,2100-01-01,5,", "read_on", "outside"),
        (f"{GR},GR-M0,2026-02-30,5,", "read_on", "not a calendar date"),
        (f"{GR},GR-M0,2026-04-01,-5,", "reading", "non-negative"),
        (f"{GR},GR-M0,2026-04-01,1e5,", "reading", "non-negative decimal"),
        (f"{GR},GR-M0,2026-04-01,\uff15,", "reading", "non-negative decimal"),
        (f'{GR},GR-M0,2026-04-01,"2,5",', "reading", "non-negative decimal"),
        (f"{GR},GR-M0,2026-04-01,5,guess", "read_type", "not one of"),
        ("Grafton,GR-M0,2026-04-01,5,", "tenant", "not an id"),
        ("pleasant-prairie-stormwater,GR-M0,2026-04-01,5,", "tenant", "unknown tenant"),
        (f"{GR},GR-M0,2026-04-01", "(row)", "expected 5 fields"),
    ],
)
def test_each_bad_cell_is_named(row: str, column: str, says: str) -> None:
    u = utility()
    [rejection] = u.reads(row).first_rejections
    assert (rejection.line, rejection.column) == (2, column)
    assert says in rejection.reason


def test_bytes_that_are_not_utf8_stop_the_file_at_their_line_and_keep_the_lines_before() -> None:
    u = utility(2)
    data = (READS_HEADER + f"{GR},GR-M0,2026-04-01,5,\n").encode() + f"{GR},GR-M1,2026-04-01,6\xff,\n".encode(
        "latin-1"
    )
    result = u.upload("reads", data)
    assert result.accepted == 1
    [rejection] = result.first_rejections
    assert (rejection.line, rejection.column) == (3, "(file)") and "UTF-8" in rejection.reason


@pytest.mark.parametrize(
    ("chunks", "lines", "bad_line"),
    [
        ([b"a,b\nc,d\ne\xff,f\ng,h\n"], ["a,b\n", "c,d\n"], 3),  # the whole file in one chunk
        ([b"\xef\xbb\xbfa,b\n\xffc,d\n"], ["a,b\n"], 2),  # after a BOM
        ([b"a,b\n", b"c,d\nx,\xe2\x82"], ["a,b\n", "c,d\n"], 3),  # cut off inside a character at the end
    ],
    ids=["one-chunk", "after-a-bom", "truncated-at-the-end"],
)
def test_bad_bytes_keep_the_lines_before_them_in_their_own_chunk(
    chunks: list[bytes], lines: list[str], bad_line: int
) -> None:
    """S3 hands a file over in chunks of 1 MiB: a bad byte in the first chunk must not take the
    lines before it along, nor be reported at line 1 (the whole chunk was once dropped)."""
    got = csvinput.decoded_lines(chunks)
    assert [next(got) for _ in lines] == lines
    with pytest.raises(csvinput.FileRejected) as rejected:
        next(got)
    assert (rejected.value.rejection.line, rejected.value.rejection.column) == (bad_line, "(file)")


def test_a_read_file_in_one_chunk_keeps_its_good_lines_before_a_bad_byte() -> None:
    u = utility(2)
    data = (READS_HEADER + f"{GR},GR-M0,2026-04-01,5,\n").encode() + f"{GR},GR-M1,2026-04-01,6\xff,\n".encode(
        "latin-1"
    )
    result = u.upload("reads", data, chunk=len(data))
    assert result.accepted == 1
    [rejection] = result.first_rejections
    assert (rejection.line, rejection.column) == (3, "(file)") and "UTF-8" in rejection.reason


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"", "empty"),
        (b"tenant,meter_id,read_on\n", "missing required column 'reading'"),
        (b"tenant,meter_id,read_on,reading,colour\n", "unknown column 'colour'"),
    ],
)
def test_an_empty_file_or_a_bad_header_is_rejected_as_a_whole(data: bytes, says: str) -> None:
    result = utility().upload("reads", data)
    [rejection] = result.first_rejections
    assert says in rejection.reason and result.accepted == 0


def test_a_bom_and_columns_in_any_order_are_accepted() -> None:
    u = utility()
    result = u.upload(
        "reads", "\ufeffreading,read_on,meter_id,tenant\n5,2026-04-01,GR-M0,grafton-sewer\n".encode()
    )
    assert (result.accepted, result.rejected) == (1, 0)


def test_an_oversized_file_is_rejected_without_reading_it() -> None:
    u = utility()

    def never() -> Iterator[bytes]:
        raise AssertionError("an oversized file must not be read")
        yield b""

    result = take_in_file(
        UploadedFile("b", "reads/huge.csv", "e", MAX_FILE_BYTES + 1),
        kind="reads",
        chunks=never(),
        repo=u.repo,
        report=u.last_report,
        settings=settings,
        tenants=(GR,),
        now=datetime(2026, 12, 1, tzinfo=UTC),
        today=u.today,
    )
    [rejection] = result.first_rejections
    assert (rejection.line, rejection.column) == (0, "(file)") and "larger than" in rejection.reason


def test_a_line_without_end_is_cut_short_without_holding_it_whole() -> None:
    lines = list(csvinput.decoded_lines([b"a,b\n", b"x" * 100_000, b"y" * 100_000, b"\nc,d\n"]))
    assert lines == ["a,b\n", csvinput.TOO_LONG + "\n", "c,d\n"]


def test_a_quoted_value_across_two_lines_keeps_its_newline_and_is_rejected_not_joined() -> None:
    """CSV lets a quoted value span lines. The lines were once handed to csv.reader without
    their newlines, so "GR-M<newline>1" was read as GR-M1, another meter: a reading silently
    recorded on the wrong meter. Now the value keeps its newline and the id check refuses it."""
    u = utility(2)
    result = u.upload(
        "reads", (READS_HEADER + f'{GR},"GR-M\n1",2026-04-01,5,\n{GR},GR-M0,2026-04-01,6,\n').encode()
    )
    assert (result.accepted, result.rejected) == (1, 1)
    [rejection] = result.first_rejections
    assert (rejection.line, rejection.column) == (3, "meter_id") and "control character" in rejection.reason
    assert [c.account_id for c in u.repo.consumptions.values()] == ["GR-0"]
