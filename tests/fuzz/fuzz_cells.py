"""Hostile cells and files for every import kind (issue 27), and the README's column rules
re-stated independently of the readers, so an accepted row is checked by other code than
the code that accepted it.

A kind's strategy draws rows from its valid-row builder and mutates some of them:
:data:`HOSTILE` cells (control characters, NUL, formula starts, huge, negative and exponent
numbers, dates far out, unsafe ids, over-long text), a cell dropped or added, an over-long
line. :func:`as_file` then writes the rows with a drawn line end (LF, CRLF, CR) and encoding
(UTF-8, UTF-8 with a BOM, latin-1, UTF-16).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from hypothesis import settings
from hypothesis import strategies as st


def examples(n: int) -> settings:
    """``n`` examples a property (``make test``: derandomized, under a minute for the whole
    directory); ``FUZZ_EXAMPLES`` sets another number, to hunt with ``HYPOTHESIS_PROFILE=dev``."""
    return settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES") or n))


TRIED: Counter[str] = Counter()  # files tried per kind, printed at the session's end (conftest)
TAKEN: Counter[str] = Counter()  # lines accepted or changed per kind: the rules were checked on them

# --- the README's rules ("Import columns' date windows and field rules (issue 27)") -------
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:()+\-]{0,63}", re.ASCII)
ZIP = re.compile(r"[0-9]{5}(-[0-9]{4})?", re.ASCII)
FORMULA = ("=", "+", "-", "@", "\t", "\r")
AHEAD = timedelta(days=366)
PLAIN_NEGATIVE = re.compile(r"-[0-9]+(\.[0-9]+)?", re.ASCII)


def safe_id(value: object) -> bool:
    """README: 1 to 64 of letters, digits and ``. _ - : ( ) +``, starting with a letter or
    digit (so no formula start), no control character, slash, ``#`` or space."""
    return isinstance(value, str) and ID.fullmatch(value) is not None


def printable(value: object, maximum: int = 200) -> bool:
    """README: text cells printable, at most 200 characters, not a formula (a plain negative
    number excepted: no spreadsheet runs it, and ``csvsafe`` writes it as it is)."""
    return (
        isinstance(value, str)
        and len(value) <= maximum
        and not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in value)
        and (not value.startswith(FORMULA) or PLAIN_NEGATIVE.fullmatch(value) is not None)
    )


def happened(day: date, first: date, today: date) -> bool:
    """A fact's date: the tenant's first tariff to today."""
    return first <= day <= today


def started(day: date, today: date) -> bool:
    """A record's start: any past date, at most 366 days ahead."""
    return day <= today + AHEAD


def ended(day: date, start: date, today: date) -> bool:
    """A record's end: after its start, at most 366 days ahead."""
    return start < day <= today + AHEAD


# --- hostile cells ------------------------------------------------------------------------
HOSTILE_TEXT = (
    "",
    " ",
    "=1+1",
    '=HYPERLINK("http://x")',
    "+1",
    "-1",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(A1)",
    "\t=1",
    "\r=1",
    "\x00",
    "A\x00B",
    "A\x1bB",
    "A\x7fB",
    "A\x85B",
    "\ufeffA",
    "A\u202eB",
    "Ä",
    "a/b",
    "../../etc/passwd",
    "a\\b",
    "A#B",
    "A B",
    " A",
    "x" * 65,
    "x" * 201,
    "x" * 9000,  # beyond every reader's line bound
    '"',
    'A"B',
    "A,B",
    "A\nB",
    "A\rB",
    "NULL",
    "None",
    "true",
)
HOSTILE_NUMBER = (
    "-5",
    "-0",
    "1e400",
    "1E5",
    "-1e5",
    "NaN",
    "nan",
    "Infinity",
    "-Infinity",
    "9" * 40,
    "9" * 5000,
    "0." + "1" * 30,
    "1.",
    ".5",
    "1,000.00",
    "$10.00",
    "0x10",
    "١٢٣",  # Arabic-Indic digits: str.isdigit() is true
    "²",
    "1_000",
    " 1 ",
)
HOSTILE_DATE = (
    "0001-01-01",
    "1900-01-01",
    "1989-12-31",
    "2999-12-31",
    "9999-12-31",
    "2026-02-30",
    "2026-13-01",
    "2026-1-1",
    "20260101",
    "2026-01-01T00:00:00",
    "01/02/2026",
    "２０２６-01-01",  # full-width digits
    "2026-01-01\x00",
)
HOSTILE_STAMP = (
    "2026-04-01T05:00:00",  # no offset
    "2026-04-01T05:00:00+25:00",
    "2026-04-01T05:03:00+00:00",  # not on a 5-minute boundary
    "1900-01-01T00:00:00+00:00",
    "9999-12-31T23:55:00+00:00",
    "2999-01-01T00:00:00-05:00",
    "2026-04-01 05:00:00Z",
    "nonsense",
)
HOSTILE = HOSTILE_TEXT + HOSTILE_NUMBER + HOSTILE_DATE + HOSTILE_STAMP

hostile_cell = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(max_size=12),  # any code point, surrogates excluded by Hypothesis
    st.text(alphabet=st.characters(max_codepoint=0x9F), max_size=8),  # ASCII and C1 controls
)


# --- rows and files -----------------------------------------------------------------------
@dataclass(frozen=True)
class Drawn:
    """A file as drawn: its rows (cells), how each was mutated, and its bytes."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    mutated: tuple[bool, ...]
    data: bytes
    encoding: str
    newline: str

    @property
    def plain(self) -> bool:
        """Every line is one physical line of UTF-8 (no quote or line break in a cell, LF
        or CRLF ends): the reader's line count must then be exactly the rows'."""
        return (
            self.encoding in ("utf-8", "utf-8-sig")
            and self.newline in ("\n", "\r\n")
            and not any(('"' in c or "\n" in c or "\r" in c) for r in self.rows for c in r)
            and all(any(c.strip() for c in r) for r in self.rows)
        )


def mutate(
    draw: st.DrawFn, row: Sequence[str], cell: st.SearchStrategy[str] = hostile_cell
) -> tuple[str, ...]:
    """``row`` with one or two cells replaced by hostile ones, a cell dropped or added, a
    control character put inside a cell or a formula start in front of one."""
    cells = list(row)
    how = draw(st.sampled_from(("cell", "cell", "cell", "two", "drop", "extra", "control", "formula")))
    if how in ("control", "formula"):  # inside a cell, or in front of it: every column, every kind
        i = draw(st.integers(0, len(cells) - 1))
        if how == "control":
            at = draw(st.integers(0, len(cells[i])))
            ch = draw(st.sampled_from(CONTROLS))
            cells[i] = cells[i][:at] + ch + cells[i][at:]
        else:
            cells[i] = draw(st.sampled_from(FORMULA)) + cells[i]
    elif how == "drop":
        del cells[draw(st.integers(0, len(cells) - 1))]
    elif how == "extra":
        cells.insert(draw(st.integers(0, len(cells))), draw(cell))
    else:
        for _ in range(2 if how == "two" else 1):
            cells[draw(st.integers(0, len(cells) - 1))] = draw(cell)
    return tuple(cells)


def quoted(cell: str) -> str:
    """A CSV cell as a spreadsheet writes it (quoted when it must be)."""
    if any(ch in cell for ch in ',"\r\n'):
        return '"' + cell.replace('"', '""') + '"'
    return cell


ENCODINGS = ("utf-8", "utf-8", "utf-8", "utf-8-sig", "latin-1", "utf-16")
NEWLINES = ("\n", "\n", "\r\n", "\r")


@st.composite
def csv_file(
    draw: st.DrawFn,
    header: Sequence[str],
    valid_row: st.SearchStrategy[tuple[str, ...]],
    *,
    max_rows: int = 8,
    all_mutated: bool = False,
    refusing: Callable[[st.DrawFn, tuple[str, ...]], tuple[str, ...]] | None = None,
) -> Drawn:
    """A CSV import file of ``header`` and up to ``max_rows`` rows, some mutated.

    ``all_mutated``: every row is mutated by ``refusing`` (a mutation the kind's rules must
    refuse) and the file is plain UTF-8, so no line can be taken in."""
    n = draw(st.integers(0 if not all_mutated else 1, max_rows))
    rows: list[tuple[str, ...]] = []
    mutated: list[bool] = []
    for _ in range(n):
        row = draw(valid_row)
        if all_mutated:
            assert refusing is not None
            rows.append(refusing(draw, row))
            mutated.append(True)
        elif draw(st.booleans()):
            rows.append(mutate(draw, row))
            mutated.append(True)
        else:
            rows.append(row)
            mutated.append(False)
    if all_mutated:
        encoding, newline = "utf-8", "\n"
    else:
        encoding, newline = draw(st.sampled_from(ENCODINGS)), draw(st.sampled_from(NEWLINES))
    text = newline.join(",".join(quoted(c) for c in r) for r in [tuple(header), *rows]) + newline
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError:  # latin-1 cannot hold the cell: the bytes as UTF-8 instead
        encoding = "utf-8"
        data = text.encode(encoding)
    return Drawn(tuple(header), tuple(rows), tuple(mutated), data, encoding, newline)


def ids(prefix: str, n: int = 4) -> st.SearchStrategy[str]:
    """A few valid ids, so that rows of one file meet the same keys (repeats, conflicts)."""
    return st.sampled_from([f"{prefix}{i}" for i in range(1, n + 1)])


def days(first: date, last: date) -> st.SearchStrategy[str]:
    return st.dates(min_value=first, max_value=last).map(date.isoformat)


def refuse_with(cells: dict[int, Sequence[str]]) -> Callable[[st.DrawFn, tuple[str, ...]], tuple[str, ...]]:
    """A mutation the kind must refuse: one of ``cells`` (column index -> values its rules
    refuse) put in its column."""

    def refusing(draw: st.DrawFn, row: tuple[str, ...]) -> tuple[str, ...]:
        column = draw(st.sampled_from(sorted(cells)))
        out = list(row)
        out[column] = draw(st.sampled_from(list(cells[column])))
        return tuple(out)

    return refusing


SPACES = (" ", "\t", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u2003", "\u3000")
CONTROLS = tuple(chr(c) for c in (*range(0x20), *range(0x7F, 0xA0)))


def spoil(column: int) -> Callable[[st.DrawFn, tuple[str, ...]], tuple[str, ...]]:
    """Column ``column`` given a control character (anywhere in it) or a formula start (bare
    or behind whitespace): a cell no kind may keep as it is (it is refused, or the
    whitespace at its ends stripped)."""

    def spoiling(draw: st.DrawFn, row: tuple[str, ...]) -> tuple[str, ...]:
        out = list(row)
        cell = out[column]
        how = draw(st.sampled_from(("control", "formula", "disguised")))
        if how == "control":
            at = draw(st.integers(0, len(cell)))
            out[column] = cell[:at] + draw(st.sampled_from(CONTROLS)) + cell[at:]
        else:  # a formula, or one behind whitespace a reader strips (str.strip: Unicode's)
            space = draw(st.sampled_from(SPACES)) if how == "disguised" else ""
            out[column] = space + draw(st.sampled_from(FORMULA)) + cell
        return tuple(out)

    return spoiling


UNSAFE_IDS = ("=X1", "+X1", "-X1", "@X1", "A#1", "A/1", "A B", "A\x00", "x" * 65, "../x", "\t=X1")
