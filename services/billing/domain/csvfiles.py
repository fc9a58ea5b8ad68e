"""Import files as CONTRACTS.md "Import files" defines them (pure: bytes in, rows out).

UTF-8 (a BOM is accepted), one header row, columns in any order, an unknown or missing
required column rejects the whole file, a blank optional cell means "not given". Each bad
line is reported with its line number (the header is line 1), the column and the reason;
good lines are kept.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from common.csvrows import records
from common.errors import PermanentError

MAX_CELL_CHARS = 500  # well below DynamoDB's 400 KB item and EventBridge's 256 KB event
MAX_KEY_CHARS = 64


class FileRejected(PermanentError):
    """The whole file is unusable (encoding, header); nothing of it is taken in."""


@dataclass(frozen=True, slots=True)
class LineError:
    line: int
    column: str
    reason: str


class BadCell(ValueError):
    def __init__(self, column: str, reason: str) -> None:
        super().__init__(f"{column}: {reason}")
        self.column = column
        self.reason = reason


def rows(
    data: bytes, *, required: Sequence[str], optional: Sequence[str]
) -> Iterator[tuple[int, dict[str, str] | BadCell]]:
    """(line number, {column: non-blank value}) for every data line of the file, or (line
    number, what is wrong with the line) for a line that is not a row of the header's columns:
    more cells than columns (an unquoted comma would shift every cell after it into the next
    column) or no valid CSV (a cell over csv's 131,072 characters). A line number is the
    file's line where the row ends (a quoted cell may span lines)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileRejected(f"file is not UTF-8 (byte {exc.start})") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise FileRejected(f"line 1: not a CSV header: {exc}") from None
    if header is None:
        raise FileRejected("file is empty (no header row)")
    names = [h.strip() for h in header]
    known = set(required) | set(optional)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise FileRejected(
            f"line 1: unknown column {unknown[0]!r} (expected {', '.join([*required, *optional])})"
        )
    missing = [n for n in required if n not in names]
    if missing:
        raise FileRejected(f"line 1: missing required column {missing[0]!r}")
    for line, cells in records(reader):
        if isinstance(cells, csv.Error):
            yield line, BadCell("(line)", f"not valid CSV: {cells}")
            continue
        if not any(c.strip() for c in cells):
            continue
        if len(cells) > len(names):
            yield (
                line,
                BadCell("(line)", f"{len(cells)} cells where the header has {len(names)} columns"),
            )
            continue
        yield line, {n: c.strip() for n, c in zip(names, cells, strict=False) if c.strip()}


def key_cell(row: dict[str, str], column: str) -> str:
    value = row.get(column, "")
    if not value:
        raise BadCell(column, "is required")
    if len(value) > MAX_KEY_CHARS or "#" in value:
        raise BadCell(column, f"must be at most {MAX_KEY_CHARS} characters without '#'")
    return value


def text_cell(row: dict[str, str], column: str, *, required: bool = False) -> str | None:
    value = row.get(column)
    if value is None:
        if required:
            raise BadCell(column, "is required")
        return None
    if len(value) > MAX_CELL_CHARS:
        raise BadCell(column, f"must be at most {MAX_CELL_CHARS} characters")
    return value
