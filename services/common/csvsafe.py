"""Cells a spreadsheet cannot run: every CSV the system writes passes its cells through here.

A spreadsheet opening a CSV takes a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a
formula (``=HYPERLINK(...)``, ``@SUM(...)``, ``-2+3+cmd|...``), and one that starts with a
tab or carriage return may be read the same way once the whitespace is dropped (OWASP "CSV
Injection"; ASVS 1.2.10 adds NUL). Such a cell is written with a single quote ``'`` in
front, which the spreadsheet reads as "this is text" and does not show.

A plain negative number (``-12.50``, ``-3``: a minus, ASCII digits, at most one point with
digits after it) is left as it is, so a credit balance or refund stays a number a staff
member can sum; OWASP allows leaving cells that are purely numeric, and such a cell cannot
hold a formula. ``+1`` and ``-1e5`` are not plain numbers here and are quoted: nothing the
system writes has that form, so only input could put it there.

A carriage return inside a cell is written as a line feed (``\r\n`` as one ``\n``). Python
3.11's ``csv`` writer quotes a cell holding a character of its line terminator, and ours is
``\n``, so a bare ``\r`` went out unquoted: a reader takes it as the end of the line, and
what follows it (``x\r=HYPERLINK(...)``) becomes a new line's first cell, unquoted. A line
feed is quoted, and a spreadsheet shows it as the same line break within the cell.

Values are written as ``str(value)``; ``None`` is an empty cell (as ``csv`` writes it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

# OWASP's list, and NUL from ASVS 1.2.10.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\0")
_PLAIN_NEGATIVE = re.compile(r"-[0-9]+(?:\.[0-9]+)?")


def cell(value: object) -> str:
    """``value`` as the text of a CSV cell that no spreadsheet evaluates."""
    text = "" if value is None else str(value)
    if text.startswith(FORMULA_STARTS) and not _PLAIN_NEGATIVE.fullmatch(text):
        text = "'" + text
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def row(values: Iterable[object]) -> list[str]:
    """A ``csv.writer`` row, each cell through :func:`cell`."""
    return [cell(v) for v in values]


def record(values: Mapping[str, Any]) -> dict[str, str]:
    """A ``csv.DictWriter`` row, each value through :func:`cell` (the keys are columns)."""
    return {k: cell(v) for k, v in values.items()}


def records(rows: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, str]]:
    """``csv.DictWriter.writerows``'s rows, each through :func:`record`."""
    return (record(r) for r in rows)
