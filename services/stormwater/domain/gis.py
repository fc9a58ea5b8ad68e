"""GIS extracts under ``gis/`` (CONTRACTS.md "Import files"): rows in, parcel records out.

Columns (or GeoJSON feature properties): tenant*, parcel_id*, owner_name*, use*, area_sqft*,
impervious_sqft*, woods_sqft, excluded_sqft, farmstead, parent_parcel_id. A blank optional
cell means "not given" (0 for the areas, false for farmstead). An unknown column rejects
the file; each bad row is reported with its line (CSV: the header is line 1) or feature
index (GeoJSON: from 0), the field and the reason, and the other rows are kept.

Rows are checked one at a time as they stream in (:func:`check_row`). A first pass
(:func:`plan_extract`) keeps only each parcel's digest and first line, to drop exact repeats
of a parcel and reject every row of a parcel that appears with different values (it cannot
know which is right); a second pass (:func:`accepted_records`) streams the accepted records.
The geometry of a GeoJSON feature is kept with the record (it is not needed for the charge).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from common import fields
from common.fields import BadField
from common.values import AREA_SQFT, NotADecimal, to_decimal
from stormwater.domain.errors import InvalidParcel
from stormwater.domain.eru import PARCEL_USES, Parcel

REQUIRED = ("tenant", "parcel_id", "owner_name", "use", "area_sqft", "impervious_sqft")
OPTIONAL = ("woods_sqft", "excluded_sqft", "farmstead", "parent_parcel_id")
COLUMNS = frozenset(REQUIRED + OPTIONAL)
AREAS = ("area_sqft", "impervious_sqft", "woods_sqft", "excluded_sqft")

MAX_ID_CHARS = 200  # parcel ids go into DynamoDB keys (2 KB) and event business keys
MAX_TEXT_CHARS = 500
MAX_AREA_PLACES = 4
MAX_GEOMETRY_CHARS = 100_000  # kept beside the parcel; a larger one is kept by reference to the file


class ExtractRejected(ValueError):
    """The whole extract is refused (an unknown column, not a CSV/GeoJSON, no header)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class Rejection:
    line: int
    field: str
    reason: str


@dataclass(frozen=True)
class ParcelRecord:
    """One parcel as a GIS extract describes it (the GIS values; overrides live beside)."""

    tenant: str
    parcel_id: str
    owner_name: str
    use: str
    area_sqft: Decimal
    impervious_sqft: Decimal
    woods_sqft: Decimal = Decimal(0)
    excluded_sqft: Decimal = Decimal(0)
    farmstead: bool = False
    parent_parcel_id: str | None = None
    line: int = field(default=0, compare=False)
    geometry: str | None = field(default=None, compare=False)

    def values(self) -> dict[str, str]:
        """The values that define the record (not its line or geometry), as strings."""
        return {
            "owner_name": self.owner_name,
            "use": self.use,
            "area_sqft": format(self.area_sqft, "f"),
            "impervious_sqft": format(self.impervious_sqft, "f"),
            "woods_sqft": format(self.woods_sqft, "f"),
            "excluded_sqft": format(self.excluded_sqft, "f"),
            "farmstead": "true" if self.farmstead else "false",
            "parent_parcel_id": self.parent_parcel_id or "",
        }

    @property
    def digest(self) -> str:
        """Identifies the values: the same row in another extract has the same digest."""
        text = json.dumps(self.values(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def parcel(self) -> Parcel:
        return Parcel(
            use=self.use,  # type: ignore[arg-type]
            area_sqft=self.area_sqft,
            impervious_sqft=self.impervious_sqft,
            woods_sqft=self.woods_sqft,
            excluded_sqft=self.excluded_sqft,
        )


def check_columns(columns: Iterable[str], *, where: str = "header") -> None:
    names = [c.strip() for c in columns]
    unknown = [c for c in names if c not in COLUMNS]
    if unknown:
        raise ExtractRejected(
            where, f"unknown column(s) {', '.join(map(repr, unknown))}; the file is refused"
        )


def _text(raw: Mapping[str, Any], name: str, limit: int) -> str | None:
    value = raw.get(name)
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    if len(text) > limit:
        raise _RowError(name, f"longer than {limit} characters")
    _no_formula(name, text)
    try:  # printable, as every reader's text cells are (an owner's name reaches notices and exports)
        return fields.text(name, text, maximum=limit)
    except BadField as bad:
        raise _RowError(name, bad.reason) from None


def _no_formula(name: str, text: str, *, number: bool = False) -> None:
    """A cell a spreadsheet would run is refused, as metering and sampling refuse it."""
    try:
        fields.not_formula(name, text, number=number)
    except BadField as bad:
        raise _RowError(name, bad.reason) from None


def _id(raw: Mapping[str, Any], name: str) -> str | None:
    """A safe id (``common.fields.identifier``), or None when not given."""
    value = raw.get(name)
    if value is None or not str(value).strip():
        return None
    if not isinstance(value, str):
        raise _RowError(name, f"must be a text, got {str(value)[:40]}")
    try:
        return fields.identifier(name, fields.not_formula(name, value.strip()))
    except BadField as bad:
        raise _RowError(name, bad.reason) from None


class _RowError(Exception):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def _area(raw: Mapping[str, Any], name: str) -> Decimal:
    value = raw.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if name in REQUIRED:
            raise _RowError(name, "is required")
        return Decimal(0)
    if isinstance(value, float):
        value = repr(value)  # a JSON parser without Decimal support: keep the digits it printed
    if isinstance(value, str):
        value = value.strip()
        _no_formula(name, value, number=True)
    try:
        number = to_decimal(value, maximum=AREA_SQFT)  # 359 square miles: beyond any parcel
    except NotADecimal as exc:
        raise _RowError(name, str(exc)) from None
    if number < 0:
        raise _RowError(name, f"must not be negative, got {number:f}")
    exponent = number.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -MAX_AREA_PLACES:
        raise _RowError(name, f"at most {MAX_AREA_PLACES} decimal places, got {number:f}")
    # Whole numbers plainly: normalize() made 5000 into 5E+3, which reached the messages.
    return number.quantize(Decimal(1)) if number == number.to_integral_value() else number


def _bool(raw: Mapping[str, Any], name: str) -> bool:
    value = raw.get(name)
    if value is None or value == "":
        return False
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise _RowError(name, f"must be true or false, got {str(value)[:40]!r}")


def check_row(
    raw: Mapping[str, Any], line: int, *, tenants: Collection[str], geometry: str | None = None
) -> ParcelRecord | Rejection:
    """One row of an extract: a record, or the rejection naming the field and the reason."""
    try:
        tenant = _text(raw, "tenant", MAX_ID_CHARS)
        if tenant is None:
            raise _RowError("tenant", "is required")
        if tenant not in tenants:
            raise _RowError("tenant", f"{tenant!r} is not a stormwater tenant ({', '.join(sorted(tenants))})")
        parcel_id = _id(raw, "parcel_id")
        if parcel_id is None:
            raise _RowError("parcel_id", "is required")
        owner_name = _text(raw, "owner_name", MAX_TEXT_CHARS)
        if owner_name is None:
            raise _RowError("owner_name", "is required")
        use = _text(raw, "use", 40)
        if use is None:
            raise _RowError("use", "is required")
        if use not in PARCEL_USES:
            shown = use.encode("unicode_escape").decode("ascii")
            raise _RowError("use", f"{shown!r} is not a parcel use of the tariff ({', '.join(PARCEL_USES)})")
        areas = {name: _area(raw, name) for name in AREAS}
        if areas["area_sqft"] == 0:
            raise _RowError("area_sqft", "must be above 0")
        if areas["impervious_sqft"] > areas["area_sqft"]:
            raise _RowError(
                "impervious_sqft",
                f"impervious area ({areas['impervious_sqft']:f}) is larger than the lot ({areas['area_sqft']:f})",
            )
        farmstead = _bool(raw, "farmstead")
        if farmstead and use != "residential":
            raise _RowError(
                "farmstead",
                f"a farmstead is its own residential parcel and is charged (PP-CWU-EXEMPT), not {use!r}",
            )
        parent = _id(raw, "parent_parcel_id")
        if parent == parcel_id:
            raise _RowError("parent_parcel_id", "a parcel cannot be split from itself")
        record = ParcelRecord(
            tenant=tenant,
            parcel_id=parcel_id,
            owner_name=owner_name,
            use=use,
            farmstead=farmstead,
            parent_parcel_id=parent,
            line=line,
            geometry=geometry,
            **areas,
        )
        try:
            record.parcel()  # the domain's own checks: woods + excluded + impervious fit the area
        except InvalidParcel as exc:
            raise _RowError(exc.field.removeprefix("parcel."), exc.message) from None
        return record
    except _RowError as err:
        return Rejection(line=line, field=err.field, reason=err.reason)


@dataclass
class ExtractPlan:
    """What a first pass over an extract found, without keeping its records: each parcel's
    digest and first line, the parcels given with different values, and the rejections.
    Memory grows with the number of parcels (about 200 bytes each), never with the size of
    their rows or geometry; the records themselves are read again by :func:`accepted_records`."""

    first: dict[tuple[str, str], tuple[str, int]]
    conflicts: dict[tuple[str, str], list[int]]
    rejections: list[Rejection]
    repeats: int = 0
    lines: int = 0  # data rows (CSV lines, GeoJSON features) read
    refused: ExtractRejected | None = None  # the whole file refused (its rows read so far too)

    @property
    def accepted(self) -> int:
        return len(self.first) - len(self.conflicts)


def plan_extract(rows: Iterable[ParcelRecord | Rejection]) -> ExtractPlan:
    """First pass: an exact repeat of a parcel is dropped; a parcel given twice with
    different values is rejected on every line giving it."""
    first: dict[tuple[str, str], tuple[str, int]] = {}
    conflicts: dict[tuple[str, str], list[int]] = {}
    rejections: list[Rejection] = []
    repeats = lines = 0
    stream = iter(rows)
    while True:
        try:
            row = next(stream)
        except StopIteration:
            break
        except ExtractRejected as exc:
            return ExtractPlan(first={}, conflicts={}, rejections=[], lines=lines, refused=exc)
        lines += 1
        if isinstance(row, Rejection):
            rejections.append(row)
            continue
        key = (row.tenant, row.parcel_id)
        digest = row.digest
        seen = first.get(key)
        if seen is None:
            first[key] = (digest, row.line)
        elif key in conflicts:
            conflicts[key].append(row.line)
        elif seen[0] == digest:
            repeats += 1
        else:
            conflicts[key] = [seen[1], row.line]
    for (_tenant, parcel_id), where in conflicts.items():
        shown = ", ".join(map(str, where))
        reason = f"parcel {parcel_id} is given with different values at lines/features {shown}"
        rejections.extend(Rejection(line=line, field="parcel_id", reason=reason) for line in where)
    rejections.sort(key=lambda r: (r.line, r.field))
    return ExtractPlan(first=first, conflicts=conflicts, rejections=rejections, repeats=repeats, lines=lines)


def accepted_records(rows: Iterable[ParcelRecord | Rejection], plan: ExtractPlan) -> Iterator[ParcelRecord]:
    """Second pass: each accepted parcel once (its first row), as the rows stream by."""
    for row in rows:
        if isinstance(row, Rejection):
            continue
        key = (row.tenant, row.parcel_id)
        seen = plan.first.get(key)
        if seen is not None and seen[1] == row.line and key not in plan.conflicts:
            yield row


def geometry_text(geometry: Any) -> str | None:
    """A feature's geometry as compact JSON, or None when absent or too large to keep inline."""
    if geometry is None:
        return None
    text = json.dumps(geometry, separators=(",", ":"), default=str)
    return text if len(text) <= MAX_GEOMETRY_CHARS else None
