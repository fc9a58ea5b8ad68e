"""Streaming readers for GIS extracts: CSV and GeoJSON rows, one at a time.

A reader takes a binary stream (an S3 body, an open file) and yields checked rows
(:func:`stormwater.domain.gis.check_row`), so an extract is never held as text or as a
parsed document; only the reduced records are kept. GeoJSON is parsed incrementally with
``ijson`` (numbers as Decimals, never floats).
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Collection, Iterator
from typing import IO, Any

import ijson

from common.csvrows import records
from stormwater.domain.gis import (
    ExtractRejected,
    ParcelRecord,
    Rejection,
    check_columns,
    check_row,
    geometry_text,
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


def read_geojson(stream: IO[bytes], *, tenants: Collection[str]) -> Iterator[ParcelRecord | Rejection]:
    """Features of a GeoJSON FeatureCollection; ``line`` is the feature's index from 0."""
    index = -1
    try:
        for index, feature in enumerate(ijson.items(stream, "features.item", use_float=False)):
            yield _feature(feature, index, tenants)
    except ijson.JSONError as exc:
        raise ExtractRejected("(file)", f"not valid JSON after feature {index}: {exc}") from None
    if index < 0:
        raise ExtractRejected("features", "no features (expected a GeoJSON FeatureCollection)")


def _feature(feature: Any, index: int, tenants: Collection[str]) -> ParcelRecord | Rejection:
    if not isinstance(feature, dict):
        return Rejection(line=index, field="(feature)", reason="a feature must be an object")
    properties = feature.get("properties")
    if not isinstance(properties, dict):
        return Rejection(line=index, field="properties", reason="a feature needs a properties object")
    try:
        check_columns(properties, where=f"features[{index}].properties")
    except ExtractRejected:
        raise  # an unknown property refuses the file, as an unknown column does
    return check_row(properties, index, tenants=tenants, geometry=geometry_text(feature.get("geometry")))


def read_extract(
    stream: IO[bytes], key: str, *, tenants: Collection[str]
) -> Iterator[ParcelRecord | Rejection]:
    fmt = extract_format(key)
    return read_geojson(stream, tenants=tenants) if fmt == "geojson" else read_csv(stream, tenants=tenants)
