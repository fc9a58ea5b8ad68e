"""Every CSV the system writes neutralises the cells a spreadsheet would run (issue 27:
``=``, ``+``, ``-``, ``@``, tab, CR first; ``common.csvsafe``).

Two halves. An architecture test lists every CSV writer in the code (``csv.writer``,
``csv.DictWriter``) and proves each row it writes goes through ``csvsafe``: a writer found
that is not in :data:`WRITERS` fails, as does a row written around ``csvsafe``. Then
properties on each writer the system has (the reports of ``common.reports``, billing's CSV
read models, the print room's manifest): whatever text the cells hold, the file read back
as a spreadsheet reads it has as many lines as rows and no cell a spreadsheet would run.
"""

from __future__ import annotations

import ast
import csv
import io
import re
from pathlib import Path
from typing import Any

import fuzz_cells as fc
from hypothesis import given
from hypothesis import strategies as st

from billing.app.readmodels import to_csv
from billing.app.receipts import RECEIPT_COLUMNS, drawer_csv
from common import csvsafe
from common.reports import write_report
from notices.adapters.aws import MANIFEST_COLUMNS, manifest_csv

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("services", "infra", "portal")
WRITERS = {
    "services/common/reports.py": "write_report: reports as CSV (staff downloads)",
    "services/billing/app/readmodels.py": "to_csv: the staff reports' format=csv (aging, suspense, ...)",
    "services/notices/adapters/aws.py": "manifest_csv: the print room's manifest of a batch",
    "services/billing/app/receipts.py": "drawer_csv: a day's counter receipts for the deposit",
}
NOT_SYSTEM_OUTPUT = {
    # The demo writes the import files a utility would upload (its own fixed cells, some
    # deliberately hostile, to be refused on import) and an index of them: input to the
    # system, never a file the system gives anyone to open.
    "infra/sewerbill/cli/demogen.py",
    "infra/sewerbill/demo/generator.py",
}
_PLAIN_NEGATIVE = re.compile(r"-[0-9]+(\.[0-9]+)?")
EXAMPLES = fc.examples(80)


def _csv_writers() -> dict[str, list[ast.Call]]:
    """Each source file creating a csv writer, with its ``writerow``/``writerows`` calls."""
    found: dict[str, list[ast.Call]] = {}
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "csv." not in text:
                continue
            tree = ast.parse(text)
            calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
            makes = [
                c
                for c in calls
                if isinstance(c.func, ast.Attribute)
                and c.func.attr in ("writer", "DictWriter")
                and isinstance(c.func.value, ast.Name)
                and c.func.value.id == "csv"
            ]
            if makes:
                rel = path.relative_to(ROOT).as_posix()
                found[rel] = [
                    c
                    for c in calls
                    if isinstance(c.func, ast.Attribute) and c.func.attr in ("writerow", "writerows")
                ]
    return found


def _through_csvsafe(call: ast.Call) -> bool:
    """The row is ``csvsafe.row/record/records(...)``, or a module constant of column names."""
    (arg,) = call.args
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute):
        return isinstance(arg.func.value, ast.Name) and arg.func.value.id == "csvsafe"
    return isinstance(arg, ast.Name) and arg.id.isupper()  # e.g. MANIFEST_COLUMNS


def test_every_csv_writer_is_listed_and_writes_its_rows_through_csvsafe() -> None:
    found = _csv_writers()
    assert set(found) - set(WRITERS) - NOT_SYSTEM_OUTPUT == set(), (
        "a new CSV writer: route it through csvsafe"
    )
    assert set(WRITERS) <= set(found), "a listed writer is gone: update WRITERS"
    for path in WRITERS:
        assert found[path], f"{path} makes a csv writer but writes no row"
        for call in found[path]:
            assert _through_csvsafe(call), f"{path}:{call.lineno} writes a row around common.csvsafe"


def test_the_architecture_check_catches_a_raw_writer() -> None:
    raw = ast.parse("w = csv.writer(out)\nw.writerow(row)\nw.writerow(csvsafe.row(row))\n")
    calls = [
        n for n in ast.walk(raw) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "writerow"
    ]
    assert [_through_csvsafe(c) for c in calls] == [False, True]


# --- behaviour: what each writer's file holds, read back as a spreadsheet reads it ---------
cells = st.one_of(st.sampled_from(fc.HOSTILE), st.text(max_size=20), st.decimals(-100, 100, places=2))


def _read_back(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def _safe(row: list[str]) -> None:
    for c in row:
        assert not c.startswith(csvsafe.FORMULA_STARTS) or _PLAIN_NEGATIVE.fullmatch(c), row
        assert "\r" not in c, row


class _S3:
    def __init__(self) -> None:
        self.body = b""

    def put_object(self, **kwargs: Any) -> None:
        self.body = kwargs["Body"]


@EXAMPLES
@given(st.lists(st.tuples(cells, cells, cells), max_size=6))
def test_a_csv_report_holds_no_cell_a_spreadsheet_runs(rows: list[tuple[Any, Any, Any]]) -> None:
    fc.TRIED["csv writer: common.reports"] += 1
    s3 = _S3()
    dicts = [{"line": a, "reason": b, "value": c} for a, b, c in rows]
    write_report(s3, bucket="b", service="billing", parts=("t", "rejections"), rows=dicts, fmt="csv")
    back = _read_back(s3.body.decode("utf-8"))
    assert len(back) == (len(rows) + 1 if rows else 0)
    for row in back:
        _safe(row)


@EXAMPLES
@given(st.lists(st.tuples(cells, cells), min_size=1, max_size=6))
def test_a_staff_report_as_csv_holds_no_cell_a_spreadsheet_runs(rows: list[tuple[Any, Any]]) -> None:
    fc.TRIED["csv writer: billing readmodels"] += 1
    back = _read_back(to_csv([{"account_id": a, "balance": b} for a, b in rows]))
    assert len(back) == len(rows) + 1
    for row in back:
        _safe(row)


@EXAMPLES
@given(st.lists(st.tuples(cells, cells, st.lists(cells, max_size=4), cells), max_size=5))
def test_a_print_manifest_holds_no_cell_a_spreadsheet_runs(letters: list[tuple[Any, Any, Any, Any]]) -> None:
    fc.TRIED["csv writer: print manifest"] += 1
    given_letters = [
        {
            "zip": z,
            "name": n,
            "address_lines": lines,
            "account_id": a,
            "rule": "N-1",
            "notice_id": f"n-{i}",
            "pages_key": "k",
        }
        for i, (z, n, lines, a) in enumerate(letters)
    ]
    header, *back = _read_back(manifest_csv(given_letters))
    assert header == list(MANIFEST_COLUMNS) and len(back) == len(letters)
    for row in back:
        _safe(row)


@EXAMPLES
@given(st.lists(st.tuples(cells, cells, cells), max_size=5))
def test_a_drawer_holds_no_cell_a_spreadsheet_runs(receipts: list[tuple[Any, Any, Any]]) -> None:
    fc.TRIED["csv writer: drawer"] += 1
    close = {
        "receipts": [
            {
                "receipt": f"R-{i}",
                "clerk": c,
                "account_id": a,
                "tender": "check",
                "check_number": n,
                "amount": "1.00",
            }
            for i, (c, a, n) in enumerate(receipts)
        ],
        "by_clerk_and_tender": [
            {"clerk": c, "tender": "check", "count": 1, "total": "1.00"} for c, _, _ in receipts
        ],
        "by_tender": [{"tender": "check", "count": len(receipts), "total": f"{len(receipts)}.00"}],
        "count": len(receipts),
        "total": f"{len(receipts)}.00",
    }
    header, *back = _read_back(drawer_csv(close))
    assert header == list(RECEIPT_COLUMNS) and len(back) == 2 * len(receipts) + 2
    for row in back:
        _safe(row)
