"""Import files as CONTRACTS.md "Import files" defines them, read as a stream of lines.

UTF-8 (a BOM is accepted), one header row, columns in any order, an unknown or missing
required column rejects the file, a blank optional cell means "not given". Every field is
bounded here, before it can reach DynamoDB (numbers of 38 digits, keys of 2 KB), EventBridge
(256 KB) or Python's limits (4,300-digit ints, csv's 131,072-character fields): a bad row
is rejected with its line number, column and reason, and the rows around it are kept.

Lines are counted by this module (the header is line 1), so a quoted field that spans
lines, an over-long line or a line csv cannot parse still leaves every later line number
right. Nothing here holds more than one line at a time.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from itertools import chain
from typing import Any

from common import csvrows
from common import fields as safe
from common.errors import PermanentError
from metering.events import ID_MAX, LineRejection

LINE_MAX_CHARS = 8_192  # the longest legitimate line is far shorter; csv's own limit is 131,072
NUMBER_MAX_DIGITS = 20  # register and interval values; well inside DynamoDB's 38 digits
DECIMAL_PLACES_MAX = 6
EARLIEST_DATE = date(1990, 1, 1)  # dates in 1900 or 2100 are typing errors, not history
LATEST_DATE = date(2099, 12, 31)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
_TENANT = re.compile(r"[a-z0-9][a-z0-9-]*")
_NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class FileRejected(PermanentError):
    """The whole file cannot be taken in (encoding, empty, header); ``line`` says where."""

    def __init__(self, line: int, column: str, reason: str) -> None:
        super().__init__(f"line {line}, {column}: {reason}")
        self.rejection = LineRejection(line=line, column=column, reason=reason[:300])


class BadField(ValueError):
    """One cell is wrong; ``column`` names it."""

    def __init__(self, column: str, reason: str) -> None:
        super().__init__(reason)
        self.column = column
        self.reason = reason


@dataclass(frozen=True)
class Header:
    columns: tuple[str, ...]
    required: frozenset[str]

    def index(self, names: Sequence[str], *, line: int = 1) -> dict[str, int]:
        seen = [n.strip().lower() for n in names]
        unknown = [n for n in seen if n not in self.columns]
        if unknown:
            raise FileRejected(line, "(header)", f"unknown column {unknown[0][:60]!r}")
        if len(set(seen)) != len(seen):
            raise FileRejected(line, "(header)", "a column is named twice")
        missing = sorted(self.required - set(seen))
        if missing:
            raise FileRejected(line, "(header)", f"missing required column {missing[0]!r}")
        return {name: i for i, name in enumerate(seen)}


# Stands for a line cut short at LINE_MAX_CHARS: longer than any line kept, so no line of a
# file (a NUL in a cell included, issue 27) can end with it; only a cut line does.
TOO_LONG = "\x00" * (LINE_MAX_CHARS + 1)


def decoded_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """Lines of UTF-8 text from byte chunks (a BOM dropped); raises FileRejected on bad bytes.

    A line longer than ``LINE_MAX_CHARS`` is replaced by ``TOO_LONG`` (the reader rejects
    it) without ever being held whole: memory stays bounded whatever the file.
    Lines are yielded with their newline, as a file's lines are: csv.reader then reads a
    quoted value that spans lines as CSV has it, newline included (the column's check then
    rejects it). Without the newline it joined the lines' text, so ``"M-7<newline>X"`` was read
    as the id ``M-7X``, another meter's, silently.
    """
    # The lines of a chunk are handed on as one list and chained in C: no Python frame is
    # resumed per line (the hot path of interval files).
    return chain.from_iterable(_decoded_blocks(chunks))


def _decoded_blocks(chunks: Iterable[bytes]) -> Iterator[list[str]]:
    """The lines of :func:`decoded_lines`, a list of them per chunk read."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    pending = ""
    skipping = False  # inside an over-long line, already yielded cut short
    line = 0

    def split(text: str) -> list[str]:
        nonlocal pending, skipping, line
        parts = (pending + text).split("\n")
        pending = parts.pop()
        line += len(parts)
        if skipping and parts:
            skipping = False
            parts = parts[1:]
        if max(map(len, parts), default=0) > LINE_MAX_CHARS:
            parts = [part if len(part) <= LINE_MAX_CHARS else TOO_LONG for part in parts]
        if len(pending) > LINE_MAX_CHARS:
            if not skipping:
                parts.append(TOO_LONG)
                skipping = True
            pending = ""
        return [part + "\n" for part in parts]

    def not_utf8(exc: UnicodeDecodeError) -> Iterator[list[str]]:
        # the chunk's text before the bad bytes (valid UTF-8, after any BOM the decoder
        # dropped): its whole lines stand, and the file stops at the line the bytes are on
        if block := split(exc.object[: exc.start].decode("utf-8")):
            yield block
        raise FileRejected(line + 1, "(file)", f"not UTF-8 text: {exc.reason}") from None

    for chunk in chunks:
        try:
            text = decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            yield from not_utf8(exc)
        if text and (block := split(text)):
            yield block
    try:
        last = split(decoder.decode(b"", final=True))
    except UnicodeDecodeError as exc:
        yield from not_utf8(exc)
    if pending and not skipping:
        last.append(pending)
    if last:
        yield last


@dataclass(frozen=True)
class Row:
    line: int
    cells: dict[str, str]


Record = tuple[int, list[str]]


def records(
    chunks: Iterable[bytes], header: Header
) -> tuple[dict[str, int], Iterator[Record | LineRejection]]:
    """The header's column index, and each data row as (line, cells) or its line's rejection.

    Raises :class:`FileRejected` here for an empty file or a bad header; bytes that are not
    UTF-8 later in the file end the iterator with their line's rejection (the rows before
    it stand). No per-row dict. (Interval files read the same rows their own way: ``interval``.)
    """
    index, reader = opened(chunks, header)
    return index, _records(reader, len(index))


def opened(chunks: Iterable[bytes], header: Header) -> tuple[dict[str, int], Any]:
    """The header's column index and a csv reader past it (FileRejected: empty, bad header)."""
    reader = csv.reader(decoded_lines(chunks), strict=True)
    try:
        names = next(reader)
    except StopIteration:
        raise FileRejected(1, "(file)", "the file is empty") from None
    except csv.Error as exc:
        raise FileRejected(1, "(header)", f"not CSV: {exc}") from None
    return header.index(names), reader


def _records(reader: Any, width: int) -> Iterator[Record | LineRejection]:
    try:
        for line, cells in csvrows.records(reader):
            if isinstance(cells, csv.Error):
                yield LineRejection(line=line, column="(row)", reason=f"not CSV: {str(cells)[:200]}")
            elif len(cells) == width and not cells[-1].endswith(TOO_LONG):
                yield line, cells
            elif rejection := bad_row(cells, width, line):
                yield rejection
    except FileRejected as exc:  # bad bytes part-way: the lines before it stand, the rest cannot be read
        yield exc.rejection


def bad_row(cells: list[str], width: int, line: int) -> LineRejection | None:
    """Why a row of the wrong width or an over-long line is rejected (None: a blank line)."""
    if cells[-1:] and cells[-1].endswith(TOO_LONG):
        return LineRejection(
            line=line, column="(row)", reason=f"line longer than {LINE_MAX_CHARS} characters"
        )
    if not cells or all(not c.strip() for c in cells):
        return None
    return LineRejection(line=line, column="(row)", reason=f"expected {width} fields, got {len(cells)}")


def rows(chunks: Iterable[bytes], header: Header) -> Iterator[Row | LineRejection]:
    """Each data row as its cells by column name (stripped), or the rejection of its line."""
    index, found = records(chunks, header)
    items = tuple(index.items())
    for record in found:
        if isinstance(record, LineRejection):
            yield record
        else:
            line, cells = record
            yield Row(line, {name: cells[i].strip() for name, i in items})


# ---------------------------------------------------------------- field parsers


def text_id(cells: dict[str, str], column: str, *, pattern: re.Pattern[str] = _ID) -> str:
    value = cells.get(column, "")
    if not value:
        raise BadField(column, "required")
    if value.startswith(FORMULA_STARTS):
        raise BadField(column, f"starts with {value[0]!r}: a spreadsheet formula is refused (CSV injection)")
    if len(value) > ID_MAX:
        raise BadField(column, f"longer than {ID_MAX} characters ({len(value)})")
    if not pattern.fullmatch(value):
        raise BadField(column, f"not an id (letters, digits, . _ / -): {_shown(value)}")
    return value


def safe_id(cells: dict[str, str], column: str) -> str:
    """A tenant-scoped id (meter, account) as ``common.fields.identifier`` has it: a safe
    charset and length, no control character, slash or '#' (issue 27). A cell a spreadsheet
    would run is named as such."""
    value = cells.get(column, "")
    if value.startswith(FORMULA_STARTS):
        raise BadField(column, f"starts with {value[0]!r}: a spreadsheet formula is refused (CSV injection)")
    try:
        return safe.identifier(column, value)
    except safe.BadField as exc:
        raise BadField(column, exc.reason) from None


def in_window(column: str, check: Callable[[], date]) -> date:
    """A date checked against its window (``common.fields.DateWindow``), as a BadField."""
    try:
        return check()
    except safe.BadField as exc:
        raise BadField(column, exc.reason) from None


def tenant(cells: dict[str, str], tenants: Sequence[str]) -> str:
    value = text_id(cells, "tenant", pattern=_TENANT)
    if value not in tenants:
        raise BadField("tenant", f"unknown tenant {_shown(value)}")
    return value


def a_date(cells: dict[str, str], column: str, *, required: bool = True) -> date | None:
    value = cells.get(column, "")
    if not value:
        if required:
            raise BadField(column, "required")
        return None
    if not _DATE.fullmatch(value):
        raise BadField(column, f"not a date (YYYY-MM-DD): {_shown(value)}")
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise BadField(column, f"not a calendar date: {_shown(value)}") from None
    if not EARLIEST_DATE <= day <= LATEST_DATE:
        raise BadField(column, f"{value} is outside {EARLIEST_DATE.year}-{LATEST_DATE.year}")
    return day


def a_number(cells: dict[str, str], column: str, *, required: bool = True) -> Decimal | None:
    """A plain non-negative decimal (ASCII digits, optional fraction), bounded in size."""
    value = cells.get(column, "")
    if not value:
        if required:
            raise BadField(column, "required")
        return None
    if value.startswith(FORMULA_STARTS) and value[0] != "-":
        raise BadField(column, f"starts with {value[0]!r}: a spreadsheet formula is refused (CSV injection)")
    if len(value) > NUMBER_MAX_DIGITS + DECIMAL_PLACES_MAX + 1:
        raise BadField(column, f"more than {NUMBER_MAX_DIGITS} digits ({len(value)} characters)")
    if not _NUMBER.fullmatch(value):
        raise BadField(column, f"not a non-negative decimal number: {_shown(value)}")
    whole, _, fraction = value.partition(".")
    if len(whole.lstrip("0")) > NUMBER_MAX_DIGITS:
        raise BadField(column, f"more than {NUMBER_MAX_DIGITS} digits before the point")
    if len(fraction) > DECIMAL_PLACES_MAX:
        raise BadField(column, f"more than {DECIMAL_PLACES_MAX} decimal places")
    return Decimal(value)


def choice(cells: dict[str, str], column: str, allowed: Sequence[str], default: str | None = None) -> str:
    value = cells.get(column, "")
    if not value:
        if default is None:
            raise BadField(column, "required")
        return default
    if value not in allowed:
        raise BadField(column, f"{_shown(value)} is not one of {', '.join(allowed)}")
    return value


def _shown(value: str) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "...'"
