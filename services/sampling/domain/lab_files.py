"""Lab result files (CONTRACTS.md "Import files", prefix ``lab/``): parsing and checking.

One row is one parameter of one sample. UTF-8 (a BOM is accepted), one header row,
columns in any order; an unknown column rejects the whole file; a blank optional cell
means "not given". Every rejected line is reported with its line number (the header is
line 1), the column and the reason; good lines are kept.

Checks made here (pure, ``today`` is an input):

- no cell starting like a spreadsheet formula (``=``, ``+``, ``-``, ``@``, tab, CR: OWASP
  CSV injection; a ``-`` in ``value`` is reported as negative), as metering refuses them;
- required cells, tenant with strength categories, ids safe (``common.fields.identifier``:
  at most 64 letters, digits and ``. _ - : ( ) +``, no slash, no control character, no ``#``);
- dates ``YYYY-MM-DD`` inside the tenant's window (``common.fields.DateWindow.happened``:
  not before its first tariff version, not after ``today``), analysed on or after collection;
- a known parameter and a unit known for it: concentrations in mg/l, converted exactly
  from µg/l (/1000) and g/m³ (= mg/l); pH in standard units. Any other unit is rejected,
  never guessed;
- values are finite, not negative, at most 15 significant digits, and not absurd (above
  the tenant's plausible maximum, e.g. BOD 100,000 mg/l; pH above 14);
- within the file, a sample keeps one account, collection date and kind, and a repeated
  sample and parameter with the same value is a harmless repeat while another value is
  rejected naming both values.

Whether the account is known, and conflicts with results already stored, are checked by
the use case (:mod:`sampling.domain.intake`), which has the repository.
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from enum import StrEnum
from functools import lru_cache
from typing import Any

from common import fields
from common.csvrows import CsvReader, records
from common.fields import BadField, DateWindow
from common.values import FIRST_DATE, NotADate, NotADecimal, to_date, to_decimal


class SampleKind(StrEnum):
    ROUTINE = "routine"
    RESAMPLE = "resample"
    SPLIT = "split"


PARAMETERS: tuple[str, ...] = ("bod", "tss", "phosphorus", "tkn", "fog", "ph")
REQUIRED: tuple[str, ...] = (
    "tenant",
    "sample_id",
    "account_id",
    "collected_on",
    "parameter",
    "value",
    "units",
    "analysed_on",
    "lab",
)
OPTIONAL: tuple[str, ...] = (
    "kind",
    "resample_of",
    "method",
    # Accepted additively (CONTRACTS.md: a service may accept more columns later).
    "sampling_point",
    "collector",
    "custody",
    "lab_invoice",
)
COLUMNS: tuple[str, ...] = REQUIRED + OPTIONAL

MAX_KEY_CHARS = 64
MAX_TEXT_CHARS = 200
MAX_SIGNIFICANT_DIGITS = 15
PH_MAX = Decimal("14")

# Concentration units, normalised (lower case, µ/μ -> u, ³ -> 3, litre -> l), to the factor
# that turns them into mg/l. Exact decimals: µg/l is a thousandth of a mg/l.
_MG_PER_L: Mapping[str, Decimal] = {
    "mg/l": Decimal(1),
    "ug/l": Decimal("0.001"),
    "g/m3": Decimal(1),
    "mg/dm3": Decimal(1),
}
_PH_UNITS = frozenset({"ph", "su", "s.u.", "std units", "standard units"})

DEFAULT_PLAUSIBLE_MAX_MG_L: Mapping[str, Decimal] = {
    "bod": Decimal("100000"),
    "tss": Decimal("100000"),
    "phosphorus": Decimal("10000"),
    "tkn": Decimal("10000"),
    "fog": Decimal("100000"),
}
"""Above these a value is absurd and rejected (interpretation; the tariff can override)."""


@dataclass(frozen=True)
class LineRejection:
    """One line not taken in; ``line`` 1 is the header, 0 the file as a whole.

    ``retry``: the cause can go away (a date after today, an account not known yet), so a
    file holding such a line is read again when it is sent again, never skipped as a
    duplicate; every other cause is the line's own and cannot change.
    """

    line: int
    column: str
    reason: str
    retry: bool = False


@dataclass(frozen=True, slots=True)
class LabRow:
    """One accepted row: a parameter of a sample, its value converted to mg/l (pH: units)."""

    line: int
    tenant: str
    sample_id: str
    account_id: str
    collected_on: date
    parameter: str
    value: Decimal
    reported: str
    analysed_on: date
    lab: str
    kind: SampleKind = SampleKind.ROUTINE
    resample_of: str | None = None
    method: str | None = None
    sampling_point: str | None = None
    collector: str | None = None
    custody: str | None = None
    lab_invoice: str | None = None

    @property
    def result_key(self) -> tuple[str, str, str]:
        return (self.tenant, self.sample_id, self.parameter)

    @property
    def sample_facts(self) -> tuple[str, date, SampleKind, str | None]:
        """What every row of one sample must agree on."""
        return (self.account_id, self.collected_on, self.kind, self.resample_of)


@dataclass
class ParsedLabFile:
    """A file's rows; ``lines`` counts its data lines (blank lines are none), every one of
    which ends in ``rows``, ``repeated`` or a rejection (a refused file rejects them all)."""

    rows: list[LabRow] = field(default_factory=list)
    rejected: list[LineRejection] = field(default_factory=list)
    repeated: int = 0
    lines: int = 0


class BadCell(Exception):
    """A cell that cannot be taken in (``column`` and ``reason`` say why)."""

    def __init__(self, column: str, reason: str, *, retry: bool = False) -> None:
        super().__init__(reason)
        self.column = column
        self.reason = reason
        self.retry = retry


def normalise_unit(units: str) -> str:
    text = units.strip().lower().replace("µ", "u").replace("μ", "u").replace("³", "3")
    text = text.replace("litre", "l").replace("liter", "l").replace(" ", "")
    return text


def convert(parameter: str, value: Decimal, units: str) -> Decimal:
    """``value`` in ``units`` as mg/l (pH in standard units); unknown units raise."""
    unit = normalise_unit(units)
    if parameter == "ph":
        if unit not in {u.replace(" ", "") for u in _PH_UNITS}:
            raise BadCell("units", f"{units!r} is not a pH unit (pH, s.u.)")
        return value
    factor = _MG_PER_L.get(unit)
    if factor is None:
        raise BadCell("units", f"unknown unit {units!r} for {parameter} (known: mg/l, µg/l, g/m³)")
    return value if factor == 1 else _plain(value * factor)


def _plain(value: Decimal) -> Decimal:
    """Trailing zeros a conversion added dropped (4000 µg/l is 4 mg/l, not 4.000), no exponent."""
    reduced = value.normalize()
    return reduced if reduced.as_tuple().exponent <= 0 else reduced.quantize(Decimal(1))  # type: ignore[operator]


def _key(cells: Mapping[str, str], column: str) -> str:
    try:
        return fields.identifier(column, cells[column])
    except BadField as bad:
        raise BadCell(column, bad.reason) from None


def _text(cells: Mapping[str, str], column: str) -> str | None:
    text = cells.get(column, "")
    if not text:
        return None
    try:
        return fields.text(column, text, maximum=MAX_TEXT_CHARS)
    except BadField as bad:
        raise BadCell(column, bad.reason) from None


# A file's dates are few (a month's samples): each parsed once and the date object shared
# by every row giving it, as the repeated cells are (``_shared``): a 50 MB file's rows
# otherwise held a copy of each per row (issue 27, peak memory).
_to_date = lru_cache(maxsize=4096)(to_date)
SHARED_COLUMNS = frozenset(
    {"tenant", "account_id", "parameter", "units", "lab", "kind", "method", "sampling_point", "collector"}
)
_MAX_SHARED = 65_536


def _shared(cells: dict[str, str], pool: dict[str, str]) -> dict[str, str]:
    """``cells`` with the values of the columns that repeat from row to row taken from
    ``pool`` (one string object per distinct value, at most ``_MAX_SHARED`` of them)."""
    for column in SHARED_COLUMNS.intersection(cells):
        value = cells[column]
        kept = pool.get(value)
        if kept is not None:
            cells[column] = kept
        elif len(pool) < _MAX_SHARED:
            pool[value] = value
    return cells


def _date(cells: Mapping[str, str], column: str, window: DateWindow, tenant: str) -> date:
    try:
        day = _to_date(cells[column])
    except NotADate as exc:
        raise BadCell(column, str(exc)) from None
    try:
        return window.happened(column, day, tenant=tenant)
    except BadField as bad:
        # A date after today may be taken in later (the file is read again when re-sent).
        raise BadCell(column, bad.reason, retry=day > window.today) from None


def _no_formulas(cells: Mapping[str, str]) -> None:
    """Every cell checked as metering checks its cells (``common.fields.not_formula``)."""
    for column, value in cells.items():
        try:
            fields.not_formula(column, value, number=column == "value")
        except BadField as bad:
            raise BadCell(column, bad.reason) from None


def _value(cells: Mapping[str, str]) -> Decimal:
    raw = cells["value"]
    try:
        number = to_decimal(raw)
    except NotADecimal as exc:
        raise BadCell("value", str(exc)) from None
    if number < 0:
        raise BadCell("value", f"{raw} is negative")
    if len(number.as_tuple().digits) > MAX_SIGNIFICANT_DIGITS or abs(number.adjusted()) > 20:
        raise BadCell("value", f"{raw[:40]} has more than {MAX_SIGNIFICANT_DIGITS} significant digits")
    return number


def parse_row(
    cells: Mapping[str, str],
    line: int,
    *,
    today: date,
    tenants: Collection[str],
    plausible_max: Mapping[str, Mapping[str, Decimal]] | None = None,
    windows: Mapping[str, DateWindow] | None = None,
) -> LabRow:
    """One data row as a :class:`LabRow`, or ``BadCell`` naming the column.

    ``windows``: each tenant's dates (its first tariff version to ``today``); a tenant not
    in it gets the widest window, :data:`common.values.FIRST_DATE` to ``today``."""
    _no_formulas(cells)
    for column in REQUIRED:
        if not cells.get(column):
            raise BadCell(column, "is required")
    tenant = cells["tenant"]
    if tenant not in tenants:
        shown = tenant[:MAX_KEY_CHARS].encode("unicode_escape").decode("ascii")
        raise BadCell("tenant", f"{shown!r} has no strength sampling ({', '.join(tenants)})")
    window = (windows or {}).get(tenant) or DateWindow(FIRST_DATE, today)
    sample_id = _key(cells, "sample_id")
    account_id = _key(cells, "account_id")
    parameter = next((p for p in PARAMETERS if p == cells["parameter"].lower()), cells["parameter"].lower())
    if parameter not in PARAMETERS:
        raise BadCell("parameter", f"{cells['parameter'][:40]!r} is not one of {', '.join(PARAMETERS)}")
    collected_on = _date(cells, "collected_on", window, tenant)
    analysed_on = _date(cells, "analysed_on", window, tenant)
    if analysed_on < collected_on:
        raise BadCell(
            "analysed_on", f"{analysed_on} is before the sample was collected (collected_on {collected_on})"
        )
    reported = _value(cells)
    value = convert(parameter, reported, cells["units"])
    if parameter == "ph":
        if value > PH_MAX:
            raise BadCell("value", f"pH {value} is outside 0-14")
    else:
        limit = ((plausible_max or {}).get(tenant) or DEFAULT_PLAUSIBLE_MAX_MG_L).get(parameter)
        if limit is not None and value > limit:
            raise BadCell("value", f"{parameter} {value} mg/l is absurd (above {limit} mg/l)")
    kind_text = (cells.get("kind") or SampleKind.ROUTINE.value).lower()
    try:
        kind = SampleKind(kind_text)
    except ValueError:
        raise BadCell("kind", f"{kind_text[:40]!r} is not routine, resample or split") from None
    resample_of = _key(cells, "resample_of") if cells.get("resample_of") else None
    if kind is not SampleKind.ROUTINE and resample_of is None:
        raise BadCell("resample_of", f"a {kind.value} sample names the sample it repeats")
    if kind is SampleKind.ROUTINE and resample_of is not None:
        raise BadCell("resample_of", "only a resample or a split names another sample")
    if resample_of == sample_id:
        raise BadCell("resample_of", "a sample cannot repeat itself")
    return LabRow(
        line=line,
        tenant=tenant,
        sample_id=sample_id,
        account_id=account_id,
        collected_on=collected_on,
        parameter=parameter,
        value=value,
        reported=sys.intern(f"{reported} {cells['units']}"),
        analysed_on=analysed_on,
        lab=_text(cells, "lab") or "",
        kind=kind,
        resample_of=resample_of,
        method=_text(cells, "method"),
        sampling_point=_text(cells, "sampling_point"),
        collector=_text(cells, "collector"),
        custody=_text(cells, "custody"),
        lab_invoice=_text(cells, "lab_invoice"),
    )


def _data_lines(reader: CsvReader) -> int:
    """How many data lines remain in a file refused whole (each is rejected with it)."""
    count = 0
    for _line, row in records(reader):
        count += isinstance(row, csv.Error) or any(cell.strip() for cell in row)
    return count


def parse_lab_file(
    data: bytes,
    *,
    today: date,
    tenants: Collection[str],
    plausible_max: Mapping[str, Mapping[str, Decimal]] | None = None,
    windows: Mapping[str, DateWindow] | None = None,
) -> ParsedLabFile:
    """Split a lab file into accepted rows and rejected lines (module docstring).

    The bytes are decoded as they are read (8 KB at a time), never copied whole into a
    text: a 50 MB file held three times over (bytes, text, the reader's copy) before its
    rows were even parsed."""
    # newline="": lines end at \r\n, \r or \n, as CSV has them (a file with \r alone
    # stopped the reader: "new-line character seen in unquoted field").
    stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
    try:
        return _parse(csv.reader(stream), today, tenants, plausible_max, windows)
    except UnicodeDecodeError as exc:
        parsed = ParsedLabFile()
        parsed.rejected.append(LineRejection(0, "(file)", f"not UTF-8 text: {exc.reason}"))
        lenient = csv.reader(io.StringIO(data.decode("utf-8", "replace"), newline=""))
        next(lenient, None)
        parsed.lines = _data_lines(lenient)
        return parsed


def _parse(
    reader: Any,
    today: date,
    tenants: Collection[str],
    plausible_max: Mapping[str, Mapping[str, Decimal]] | None,
    windows: Mapping[str, DateWindow] | None,
) -> ParsedLabFile:
    parsed = ParsedLabFile()
    try:
        header = [h.strip().lower() for h in next(reader, [])]
    except csv.Error as exc:
        parsed.rejected.append(LineRejection(1, "(header)", f"not a CSV header: {exc}"))
        parsed.lines = _data_lines(reader)
        return parsed
    if not header:
        parsed.rejected.append(LineRejection(1, "(header)", "the file is empty"))
        return parsed
    unknown = [h for h in header if h not in COLUMNS]
    missing = [c for c in REQUIRED if c not in header]
    duplicated = sorted({h for h in header if header.count(h) > 1})
    if unknown or missing or duplicated:
        problems = []
        if unknown:
            shown = (u[:40].encode("unicode_escape").decode("ascii") for u in unknown)
            problems.append(f"unknown column(s) {', '.join(shown)}")
        if missing:
            problems.append(f"missing column(s) {', '.join(missing)}")
        if duplicated:
            problems.append(f"repeated column(s) {', '.join(duplicated)}")
        parsed.rejected.append(LineRejection(1, "(header)", "; ".join(problems) + ": file rejected"))
        parsed.lines = _data_lines(reader)
        return parsed

    first_result: dict[tuple[str, str, str], LabRow] = {}
    first_sample: dict[tuple[str, str], LabRow] = {}
    pool: dict[str, str] = {}
    for line, row in records(reader):
        if isinstance(row, csv.Error):  # a cell over csv's 131,072 characters, and the like
            parsed.lines += 1
            parsed.rejected.append(LineRejection(line, "(line)", f"not valid CSV: {row}"))
            continue
        if not row or all(not cell.strip() for cell in row):
            continue
        parsed.lines += 1
        if len(row) != len(header):
            parsed.rejected.append(
                LineRejection(line, "(line)", f"{len(row)} cells for {len(header)} columns")
            )
            continue
        cells = _shared({name: cell.strip() for name, cell in zip(header, row, strict=True)}, pool)
        try:
            lab_row = parse_row(
                cells, line, today=today, tenants=tenants, plausible_max=plausible_max, windows=windows
            )
        except BadCell as bad:
            parsed.rejected.append(LineRejection(line, bad.column, bad.reason, retry=bad.retry))
            continue
        sample = first_sample.setdefault((lab_row.tenant, lab_row.sample_id), lab_row)
        if sample.sample_facts != lab_row.sample_facts:
            parsed.rejected.append(LineRejection(line, *sample_conflict(sample, lab_row)))
            continue
        earlier = first_result.setdefault(lab_row.result_key, lab_row)
        if earlier is lab_row:
            parsed.rows.append(lab_row)
        elif earlier.value == lab_row.value:
            parsed.repeated += 1
        else:
            parsed.rejected.append(
                LineRejection(
                    line,
                    "value",
                    f"{lab_row.parameter} of sample {lab_row.sample_id} is {lab_row.value} here but "
                    f"{earlier.value} on line {earlier.line}",
                )
            )
    return parsed


def sample_conflict(first: LabRow, other: LabRow) -> tuple[str, str]:
    """(column, reason) for a row whose sample facts differ from the sample's first row."""
    for column, a, b in (
        ("account_id", first.account_id, other.account_id),
        ("collected_on", first.collected_on, other.collected_on),
        ("kind", first.kind, other.kind),
        ("resample_of", first.resample_of, other.resample_of),
    ):
        if a != b:
            return column, f"sample {other.sample_id} has {column} {a} (line {first.line}), not {b}"
    return "(line)", "inconsistent sample"
