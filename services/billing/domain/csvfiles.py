"""Import files as CONTRACTS.md "Import files" defines them (pure: bytes in, rows out).

UTF-8 (a BOM is accepted), one header row, columns in any order, an unknown or missing
required column rejects the whole file, a blank optional cell means "not given". Each bad
line is reported with its line number (the header is line 1), the column and the reason;
good lines are kept.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal

from common import fields
from common.csvrows import records
from common.errors import PermanentError

MAX_CELL_CHARS = fields.MAX_TEXT_LENGTH  # well below DynamoDB's 400 KB item and EventBridge's 256 KB event
MAX_KEY_CHARS = fields.MAX_ID_LENGTH


class FileRejected(PermanentError):
    """The whole file is unusable (encoding, header); nothing of it is taken in."""


@dataclass(frozen=True, slots=True)
class LineError:
    line: int
    column: str
    reason: str
    # A payments line's amount when it could be read (a lockbox file's batch total counts
    # the money of its rejected lines too: the bank deposited it).
    amount: Decimal | None = None


class BadCell(ValueError):
    def __init__(self, column: str, reason: str) -> None:
        super().__init__(f"{column}: {reason}")
        self.column = column
        self.reason = reason


MAX_LINE_CHARS = 262_144  # past csv's 131,072-character cell: such a line is refused, never held whole
CHUNK_BYTES = 1 << 20
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?", re.ASCII)
_LINE_END = re.compile(r"\r\n|\r|\n")
TOO_LONG = "\x00\x00too-long"  # stands in for a line cut short (no file line is this)


def rows(
    data: bytes, *, required: Sequence[str], optional: Sequence[str]
) -> Iterator[tuple[int, dict[str, str] | BadCell]]:
    """:func:`stream_rows` of bytes held whole (tests, the API's one-row bodies)."""
    return stream_rows((data,), required=required, optional=optional)


def decoded_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The file's lines, each with its line end, decoded incrementally from byte chunks (an
    S3 body's ``iter_chunks``): nothing but the line being read is held, so memory does not
    grow with the file. A line over :data:`MAX_LINE_CHARS` is given as :data:`TOO_LONG`
    (its line is rejected) without being held whole. ``\r\n``, ``\r`` and ``\n`` each end
    a line (csv's own rule); a quoted cell spanning lines is joined again by csv."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    pending = ""
    skipping = False
    offset = 0

    def split(text: str, final: bool) -> Iterator[str]:
        nonlocal pending, skipping
        text = pending + text
        start = 0
        for m in _LINE_END.finditer(text):
            if m.end() == len(text) and m.group() == "\r" and not final:
                break  # a \r at a chunk's end may be the first half of \r\n
            line = text[start : m.end()]
            start = m.end()
            if skipping:
                skipping = False
                continue
            yield line if len(line) <= MAX_LINE_CHARS else TOO_LONG + "\n"
        pending = text[start:]
        if len(pending) > MAX_LINE_CHARS:
            if not skipping:
                yield TOO_LONG + "\n"
            skipping, pending = True, ""
        if final and pending and not skipping:
            yield pending
            pending = ""

    for chunk in chunks:
        try:
            text = decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            raise FileRejected(f"file is not UTF-8 (byte {offset + exc.start})") from None
        offset += len(chunk)
        yield from split(text, final=False)
    try:
        text = decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise FileRejected(f"file is not UTF-8 (byte {offset + exc.start})") from None
    yield from split(text, final=True)


def stream_rows(
    chunks: Iterable[bytes], *, required: Sequence[str], optional: Sequence[str]
) -> Iterator[tuple[int, dict[str, str] | BadCell]]:
    """(line number, {column: non-blank value}) for every data line of the file, or (line
    number, what is wrong with the line) for a line that is not a row of the header's columns:
    more cells than columns (an unquoted comma would shift every cell after it into the next
    column), no valid CSV (a cell over csv's 131,072 characters), a line over
    :data:`MAX_LINE_CHARS`, or a cell a spreadsheet would run (:func:`formula_cell`). A line
    number is the file's line where the row ends (a quoted cell may span lines).

    Streamed: ``chunks`` are read as they come (an S3 body), one line held at a time."""
    reader = csv.reader(decoded_lines(chunks))
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
            f"line 1: unknown column {unknown[0][:60]!r} (expected {', '.join([*required, *optional])})"
        )
    if len(set(names)) != len(names):
        raise FileRejected("line 1: a column is named twice")
    missing = [n for n in required if n not in names]
    if missing:
        raise FileRejected(f"line 1: missing required column {missing[0]!r}")
    for line, cells in records(reader):
        if isinstance(cells, csv.Error):
            yield line, BadCell("(line)", f"not valid CSV: {cells}")
            continue
        if cells and cells[-1].startswith(TOO_LONG):
            yield line, BadCell("(line)", f"line longer than {MAX_LINE_CHARS} characters")
            continue
        if not any(c.strip() for c in cells):
            continue
        if len(cells) > len(names):
            yield (
                line,
                BadCell("(line)", f"{len(cells)} cells where the header has {len(names)} columns"),
            )
            continue
        if len(cells) < len(names):
            short = next((n for n in names[len(cells) :] if n in required), None)
            if short is not None:
                yield (
                    line,
                    BadCell(
                        short,
                        f"is required: the line has {len(cells)} cells where the header has {len(names)} columns",
                    ),
                )
                continue
        row = {n: c.strip() for n, c in zip(names, cells, strict=False) if c.strip()}
        bad = next((n for n, c in zip(names, cells, strict=False) if formula_cell(c)), None)
        if bad is not None:
            cell = next(c for n, c in zip(names, cells, strict=False) if n == bad)
            spaced = cell.lstrip(" ")
            first = (spaced if spaced.startswith(FORMULA_STARTS) else cell.strip())[:1]
            yield (
                line,
                BadCell(bad, f"starts with {first!r}: a spreadsheet formula is refused (CSV injection)"),
            )
            continue
        yield line, row


def formula_cell(cell: str) -> bool:
    """A cell a spreadsheet would run: it starts (after spaces) with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return (OWASP "CSV Injection"), and is not a plain number
    (``-12.50``, a returned check's amount). Refused in every column, as metering's readers
    refuse them (``metering.domain.csvinput``), so no export can write one back out.
    The cell as it is kept (stripped of the whitespace at its ends, Unicode's included) is
    checked too: ``\xa0=HYPERLINK(...)`` is kept as ``=HYPERLINK(...)``."""
    return any(
        text.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(text.strip())
        for text in (cell.lstrip(" "), cell.strip())
    )


def key_cell(row: dict[str, str], column: str) -> str:
    """An id cell (account_id, parcel_id, reference, tenant) of the safe set
    (:func:`common.fields.identifier`): no control characters, slashes, '#' or spaces."""
    try:
        return fields.identifier(column, row.get(column, ""))
    except fields.BadField as exc:
        raise BadCell(column, exc.reason) from None


def text_cell(row: dict[str, str], column: str, *, required: bool = False) -> str | None:
    """A text cell (a name, an address): printable, bounded (:func:`common.fields.text`)."""
    value = row.get(column)
    if value is None:
        if required:
            raise BadCell(column, "is required")
        return None
    try:
        return fields.text(column, value)
    except fields.BadField as exc:
        raise BadCell(column, exc.reason) from None
