"""Streaming readers for GIS extracts: CSV and GeoJSON rows, one at a time.

A reader takes a binary stream (an S3 body, an open file) and yields checked rows
(:func:`stormwater.domain.gis.check_row`), so an extract is never held as text or as a
parsed document; only the reduced records are kept. GeoJSON is parsed incrementally with
``ijson`` (numbers as Decimals, never floats).
"""

from __future__ import annotations

import codecs
import csv
import json
import re
from collections.abc import Collection, Iterator
from decimal import Decimal
from typing import IO, Any

import ijson

from common.csvrows import records
from stormwater.domain.gis import (
    MAX_GEOMETRY_CHARS,
    ExtractRejected,
    ParcelRecord,
    Rejection,
    check_columns,
    check_row,
)


def extract_format(key: str) -> str:
    lowered = key.lower()
    if lowered.endswith((".geojson", ".json")):
        return "geojson"
    if lowered.endswith((".csv", ".txt")):
        return "csv"
    raise ExtractRejected("(file)", f"{key!r} is neither a .csv nor a .geojson extract")


# A line as CSV has it: ended by \r\n, \r or \n only. str.splitlines also splits at Unicode's
# other line boundaries (U+2028, U+0085, form feed, ...), which turned an owner name holding one
# into two rejected lines and shifted every line number after it.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _text_lines(stream: IO[bytes]) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    pending = ""
    while True:
        chunk = stream.read(1 << 16)
        final = not chunk
        try:
            pending += decoder.decode(chunk, final=final)
        except UnicodeDecodeError as exc:
            raise ExtractRejected("(file)", f"not UTF-8 text: {exc.reason}") from None
        lines = _LINE.findall(pending)
        if lines and not final and not lines[-1].endswith(("\n", "\r")):
            pending = lines.pop()
        else:
            pending = ""
        yield from lines
        if final:
            if pending:
                yield pending
            return


def read_csv(stream: IO[bytes], *, tenants: Collection[str]) -> Iterator[ParcelRecord | Rejection]:
    """Rows of a CSV extract; line numbers count the header as line 1."""
    reader = csv.reader(_text_lines(stream))
    try:
        header = next(reader)
    except StopIteration:
        raise ExtractRejected("(file)", "the file is empty (no header row)") from None
    except csv.Error as exc:
        raise ExtractRejected("header", f"not a CSV header: {exc}") from None
    columns = [c.strip() for c in header]
    check_columns(columns)
    missing = [c for c in ("tenant", "parcel_id") if c not in columns]
    if missing:
        raise ExtractRejected("header", f"missing required column(s) {', '.join(missing)}")
    for line, cells in records(reader):
        if isinstance(cells, csv.Error):
            yield Rejection(line=line, field="(line)", reason=f"not valid CSV: {cells}")
            continue
        if not any(c.strip() for c in cells):
            continue  # a blank line
        if len(cells) != len(columns):
            yield Rejection(
                line=line,
                field="(line)",
                reason=f"{len(cells)} cells where the header has {len(columns)} columns",
            )
            continue
        yield check_row(dict(zip(columns, cells, strict=True)), line, tenants=tenants)


MAX_DEPTH = 32
"""Deepest nesting a GeoJSON extract may have: a MultiPolygon feature of a FeatureCollection
reaches 8 (collection, features, feature, geometry, coordinates x 4). A 200 KB file of
100,000 ``[`` killed the worker before this bound (issue 27)."""
MAX_MEMBER_VALUES = 10_000
"""Values a feature may hold outside its geometry (its properties: ten columns): more is
refused for that feature and read past without being kept. The geometry is never built:
it is checked as it streams and kept as text while short, so memory never grows with it."""
MAX_COORDINATE = Decimal(10) ** 9
"""A coordinate's magnitude: degrees are within 180 and state-plane feet within 10^8;
1e400 is refused, never turned into a float or an infinity."""
GEOMETRY_DEPTHS = {
    "Point": 1,
    "MultiPoint": 2,
    "LineString": 2,
    "MultiLineString": 3,
    "Polygon": 3,
    "MultiPolygon": 4,
}
"""Depth of each geometry type's ``coordinates`` (a position is an array of numbers)."""


class _GeometryCheck:
    """A geometry checked as its events stream by, and kept as compact JSON while short.

    Checks (RFC 7946): an object with a known ``type`` and ``coordinates`` nested as deep
    as the type says; positions of 2 or 3 finite numbers within :data:`MAX_COORDINATE`;
    a line of at least 2 positions; a polygon's rings of at least 4 positions, closed
    (first position = last). The first problem found is the feature's rejection."""

    def __init__(self) -> None:
        self.text: list[str] | None = []
        self.size = 0
        self.type: object = None
        self.problem: str | None = None
        self.has_coordinates = False
        self.coordinate_depth: int | None = None  # arrays above a number
        # Per open array inside ``coordinates``: how many children, of which kind (numbers
        # or arrays), a position's numbers, a line's or ring's first and last position.
        self._arrays: list[dict[str, Any]] = []
        self._key: str | None = None
        self._depth = 0  # inside the geometry object (1 = its own members)
        self._in_coordinates = False
        self._short_lines = False
        self._open_rings = False
        self._short_rings = False

    def _emit(self, text: str) -> None:
        if self.text is None:
            return
        self.size += len(text)
        if self.size > MAX_GEOMETRY_CHARS:
            self.text = None  # too large to keep inline; still checked
        else:
            self.text.append(text)

    def _fail(self, reason: str) -> None:
        if self.problem is None:
            self.problem = reason

    def event(self, event: str, value: Any, comma: bool) -> None:
        if comma:
            self._emit(",")
        if event == "map_key":
            self._emit(json.dumps(value) + ":")
            if self._depth == 1:
                self._key = value
            return
        if event in ("start_map", "start_array"):
            self._emit("{" if event == "start_map" else "[")
            self._depth += 1
            if self._depth == 2 and self._key == "coordinates":
                self._in_coordinates = True
                self.has_coordinates = True
                if event == "start_map":
                    self._fail("coordinates must be an array")
            if self._in_coordinates:
                if event == "start_map":
                    self._fail("coordinates hold an object")
                elif self._arrays:
                    self._child(self._arrays[-1], "array", None)
                self._arrays.append({"count": 0, "kind": None, "numbers": [], "first": None, "last": None})
            return
        if event in ("end_map", "end_array"):
            self._emit("}" if event == "end_map" else "]")
            if self._in_coordinates and event == "end_array":
                self._close_array()
            self._depth -= 1
            if self._depth == 1:
                self._in_coordinates = False
            return
        # a scalar
        self._emit(str(value) if isinstance(value, Decimal) else json.dumps(value))  # a JSON number as read
        if self._depth == 1 and self._key == "type":
            self.type = value
        elif self._depth == 1 and self._key == "coordinates":
            self.has_coordinates = True
            self._fail(f"coordinates must be an array, not {str(value)[:40]!r}")
        elif self._in_coordinates:
            if not self._arrays:
                self._fail("coordinates must be an array")
            elif isinstance(value, Decimal | int) and not isinstance(value, bool):
                number = Decimal(value)
                if not number.is_finite() or number.copy_abs() > MAX_COORDINATE:
                    self._fail(f"coordinate {_plain(number)} is beyond {_plain(MAX_COORDINATE)} in magnitude")
                self._child(self._arrays[-1], "number", number)
            else:
                self._fail(f"coordinate {str(value)[:40]!r} is not a number")

    def _child(self, array: dict[str, Any], kind: str, value: Any) -> None:
        if array["kind"] is not None and array["kind"] != kind:
            self._fail("coordinates mix numbers and arrays")
        array["count"] += 1
        array["kind"] = kind
        if kind == "number" and array["count"] <= 3:
            array["numbers"].append(value)

    def _close_array(self) -> None:
        array = self._arrays.pop()
        depth = len(self._arrays) + 1  # arrays from ``coordinates`` down to this one
        count = array["count"]
        if count == 0:
            self._fail("coordinates hold an empty array")
            return
        if array["kind"] == "number":  # a position
            if not 2 <= count <= 3:
                self._fail(f"a position has {count} numbers (2 or 3)")
            if self.coordinate_depth is None:
                self.coordinate_depth = depth
            elif self.coordinate_depth != depth:
                self._fail("positions are nested at different depths")
            if self._arrays:  # the line or ring holding it
                parent = self._arrays[-1]
                position = tuple(array["numbers"])
                if parent["first"] is None:
                    parent["first"] = position
                parent["last"] = position
        elif array["first"] is not None:  # an array of positions: a line or a ring
            self._short_lines |= count < 2
            self._short_rings |= count < 4
            self._open_rings |= array["first"] != array["last"]

    def finish(self) -> tuple[str | None, str | None]:
        """(problem, compact text or None)."""
        if self.problem is None:
            if self.type == "GeometryCollection":
                self._fail("GeometryCollection is not a parcel geometry")
            elif not isinstance(self.type, str) or self.type not in GEOMETRY_DEPTHS:
                self._fail(
                    f"type {str(self.type)[:40]!r} is not a GeoJSON geometry ({', '.join(GEOMETRY_DEPTHS)})"
                )
            elif not self.has_coordinates:
                self._fail(f"a {self.type} needs coordinates")
            elif self.coordinate_depth != GEOMETRY_DEPTHS[self.type]:
                self._fail(f"coordinates are not nested as a {self.type}'s are")
            elif self.type in ("LineString", "MultiLineString") and self._short_lines:
                self._fail("a line has fewer than 2 positions")
            elif self.type in ("Polygon", "MultiPolygon") and self._short_rings:
                self._fail("a ring has fewer than 4 positions")
            elif self.type in ("Polygon", "MultiPolygon") and self._open_rings:
                self._fail("a ring is not closed (its last position is not its first)")
        text = None if self.text is None else "".join(self.text)
        return self.problem, text


def _plain(number: Decimal) -> str:
    if not number.is_finite():
        return str(number)
    if number.adjusted() > 40:
        return f"about 10^{number.adjusted()}"
    return format(number, "f")


class _Builder:
    """A JSON value built from events (a feature's properties and other members)."""

    def __init__(self) -> None:
        self.stack: list[Any] = []
        self.keys: list[str | None] = []
        self.value: Any = None
        self.values = 0

    def event(self, event: str, value: Any) -> None:
        self.values += 1
        if event == "map_key":
            self.keys[-1] = value
            return
        if event in ("start_map", "start_array"):
            self.stack.append({} if event == "start_map" else [])
            self.keys.append(None)
            return
        if event in ("end_map", "end_array"):
            done = self.stack.pop()
            self.keys.pop()
            self._add(done)
            return
        self._add(value)

    def _add(self, value: Any) -> None:
        if not self.stack:
            self.value = value
        elif isinstance(self.stack[-1], list):
            self.stack[-1].append(value)
        else:
            self.stack[-1][self.keys[-1]] = value


class _Feature:
    """One feature as it streams: its members built (bounded), its geometry checked."""

    def __init__(self) -> None:
        self.members: dict[str, Any] = {}
        self.geometry: _GeometryCheck | None = None
        self.geometry_null = False
        self.is_object = True
        self.too_large = False
        self._key: str | None = None
        self._member: _Builder | None = None
        self._depth = 0
        self._values = 0
        self._comma = False

    def event(self, event: str, value: Any) -> None:
        """An event inside the feature (``_depth`` 0 is the feature value itself)."""
        opening = event in ("start_map", "start_array")
        closing = event in ("end_map", "end_array")
        if self._depth == 0:
            if event != "start_map":
                self.is_object = False
            if opening:
                self._depth = 1
            return
        if self._depth == 1 and event == "map_key":
            self._key = value
            self._member = None
            if value == "geometry":
                self.geometry = None
            return
        if self._depth == 1 and closing:
            self._depth = 0
            return
        if self.too_large:  # read past, keep nothing more
            self._depth += opening - closing
            return
        if self._key == "geometry":
            if self._depth == 1 and event == "null":
                self.geometry_null = True
                return
            if self.geometry is None:
                self.geometry = _GeometryCheck()
                if event != "start_map":
                    self.geometry._fail(f"a geometry must be an object, not {_kind(event)}")
                self._comma = False
            self.geometry.event(event, value, self._comma and event not in ("end_map", "end_array"))
            self._comma = not opening and event != "map_key"
        else:
            self._values += 1
            if self._values > MAX_MEMBER_VALUES:
                self.too_large = True
                self.members.clear()
                self._member = None
                self._depth += opening - closing
                return
            if self._member is None:
                self._member = _Builder()
            self._member.event(event, value)
            self.members[self._key or ""] = self._member.value if not self._member.stack else None
        self._depth += opening - closing
        if self._key != "geometry" and self._depth == 1 and self._member is not None:
            self.members[self._key or ""] = self._member.value


def _kind(event: str) -> str:
    return {
        "start_array": "an array",
        "string": "a string",
        "number": "a number",
        "boolean": "a boolean",
    }.get(event, event)


def read_geojson(stream: IO[bytes], *, tenants: Collection[str]) -> Iterator[ParcelRecord | Rejection]:
    """Features of a GeoJSON FeatureCollection; ``line`` is the feature's index from 0.

    Streamed from ``ijson.basic_parse`` (events without paths: a path per event made a
    deeply nested file cost memory quadratic in its depth), nesting bounded by
    :data:`MAX_DEPTH` (deeper refuses the file), each feature's size by
    :data:`MAX_FEATURE_VALUES` (larger refuses the feature); a feature is held only while
    it is read, its geometry as compact text of at most ``MAX_GEOMETRY_CHARS``."""
    index = -1
    depth = 0
    top_key: str | None = None
    feature: _Feature | None = None
    in_features = False
    try:
        for event, value in ijson.basic_parse(stream, use_float=False, buf_size=1 << 14):
            opening = event in ("start_map", "start_array")
            closing = event in ("end_map", "end_array")
            if opening:
                depth += 1
                if depth > MAX_DEPTH:
                    where = f"in feature {index}" if feature is not None else f"after feature {index}"
                    raise ExtractRejected(
                        "(file)", f"JSON nested deeper than {MAX_DEPTH} levels {where}; the file is refused"
                    )
            if depth == 1 and opening and event != "start_map":
                raise ExtractRejected("(file)", "not a GeoJSON FeatureCollection (an object)")
            if depth == 1 and event == "map_key":
                top_key = value
                continue
            if feature is not None:
                feature.event(event, value)
                if closing:
                    depth -= 1
                if depth == 2:  # the feature ended
                    yield _feature(feature, index, tenants)
                    feature = None
                continue
            if depth == 2 and top_key == "features" and event == "start_array" and not in_features:
                in_features = True
            elif in_features and depth == 2 and event == "end_array":
                in_features = False
            elif in_features and (depth == 3 or (depth == 2 and not closing)):
                index += 1
                feature = _Feature()
                feature.event(event, value)
                if not opening:  # a scalar feature
                    yield _feature(feature, index, tenants)
                    feature = None
            if closing:
                depth -= 1
    except ijson.JSONError as exc:
        raise ExtractRejected("(file)", f"not valid JSON after feature {index}: {str(exc)[:200]}") from None
    if index < 0:
        raise ExtractRejected("features", "no features (expected a GeoJSON FeatureCollection)")


def _feature(feature: _Feature, index: int, tenants: Collection[str]) -> ParcelRecord | Rejection:
    if not feature.is_object:
        return Rejection(line=index, field="(feature)", reason="a feature must be an object")
    if feature.too_large:
        return Rejection(
            line=index, field="(feature)", reason=f"the feature holds more than {MAX_MEMBER_VALUES:,} values"
        )
    properties = feature.members.get("properties")
    if not isinstance(properties, dict):
        return Rejection(line=index, field="properties", reason="a feature needs a properties object")
    check_columns(properties, where=f"features[{index}].properties")  # unknown: the file is refused
    nested = next((k for k, v in properties.items() if isinstance(v, dict | list)), None)
    if nested is not None:
        return Rejection(
            line=index, field=nested, reason="must be a text or a number, not an object or array"
        )
    geometry_text: str | None = None
    if feature.geometry is not None:
        problem, geometry_text = feature.geometry.finish()
        if problem is not None:
            return Rejection(line=index, field="geometry", reason=problem)
    return check_row(properties, index, tenants=tenants, geometry=geometry_text)


def read_extract(
    stream: IO[bytes], key: str, *, tenants: Collection[str]
) -> Iterator[ParcelRecord | Rejection]:
    fmt = extract_format(key)
    return read_geojson(stream, tenants=tenants) if fmt == "geojson" else read_csv(stream, tenants=tenants)
