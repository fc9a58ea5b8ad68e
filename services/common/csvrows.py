"""CSV records read one at a time, each with the file line it ends on; a record csv cannot
read (a cell over its 131,072 characters, a line break in an unquoted cell) is given back as
its error instead of raised, so that an import reports that line and keeps the rest."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Protocol


class CsvReader(Protocol):
    line_num: int

    def __iter__(self) -> Iterator[list[str]]: ...


def records(reader: CsvReader) -> Iterator[tuple[int, list[str] | csv.Error]]:
    """``(line, cells)`` for each record of ``reader``, or ``(line, error)`` for one it cannot
    read; ``line`` is the file's line where the record ends (a quoted cell may span lines).
    One ``for`` over the reader per stretch of good CSV, not a ``try`` and ``next()`` per
    record: a csv.Error ends the stretch and the loop goes on after it. (Metering's interval
    reader keeps this loop inline: its rows are a million a file.)"""
    while True:
        try:
            for cells in reader:
                yield reader.line_num, cells
            return
        except csv.Error as exc:
            yield reader.line_num, exc
