"""Stormwater's GIS extracts under hostile files (issue 27), CSV and GeoJSON, through
``ingest_extract`` (both streamed passes) on an in-memory parcel repository.

The reader's one documented way out is the whole file refused (``ExtractRejected`` inside:
the result rejects every line); nothing raises. The counts add up; every parcel stored
keeps the README's GIS rules (safe ids, printable text with no formula start, a use the
tariff knows, plain non-negative areas within 10^10 with at most 4 places, impervious not
above the lot); a file of refused lines stores nothing; the same file read again takes
nothing new in.
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import IO, Any

import fuzz_cells as fc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from common.clock import FixedClock
from common.reports import Report
from common.tariff_files import default_tariffs_dir, load_tariff_book
from stormwater.domain.eru import PARCEL_USES
from stormwater.domain.extracts import IngestResult, UploadedExtract, ingest_extract
from stormwater.domain.parcels import ExtractChange, ParcelState
from stormwater.events import GisExtractTakenIn
from stormwater.tariffs import StormwaterTariffs

T = "pleasant-prairie-stormwater"
TARIFFS = StormwaterTariffs(load_tariff_book(default_tariffs_dir()))
CLOCK = FixedClock(datetime(2026, 10, 1, 15, 0, tzinfo=UTC))
HEADER = (
    "tenant",
    "parcel_id",
    "owner_name",
    "use",
    "area_sqft",
    "impervious_sqft",
    "woods_sqft",
    "excluded_sqft",
    "farmstead",
    "parent_parcel_id",
)
EXAMPLES = fc.examples(50)


class Files:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def open(self, bucket: str, key: str) -> IO[bytes]:
        return io.BytesIO(self.data)


class MemoryReports:
    def __init__(self) -> None:
        self.rows: list[Mapping[str, object]] = []

    def write(self, parts: Sequence[str], rows: Iterable[Mapping[str, object]]) -> Report:
        self.rows = list(rows)
        return Report(
            bucket="b",
            key="reports/stormwater/" + "/".join(parts),
            format="jsonl",
            rows=len(self.rows),
            bytes=0,
        )


class MemoryParcels:
    """``ParcelRepository`` on dicts, marking each state with the file that wrote it as the
    DynamoDB adapter does (``gis_file_id``, ``gis_taken_as``)."""

    def __init__(self) -> None:
        self.parcels: dict[tuple[str, str], ParcelState] = {}
        self.files: set[str] = set()

    def file_seen(self, file_id: str) -> bool:
        return file_id in self.files

    def states(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], ParcelState]:
        return {k: self.parcels[k] for k in keys if k in self.parcels}

    def record_extract_changes(
        self, changes: Sequence[ExtractChange], *, file_key: str, file_id: str, chunk: int
    ) -> list[tuple[str, str]]:
        for c in changes:
            taken = "accepted" if c.previous is None else "changed"
            extra = {**c.state.extra, "gis_file_id": file_id, "gis_taken_as": taken}
            self.parcels[(c.state.tenant, c.state.parcel_id)] = dataclasses.replace(c.state, extra=extra)
        return []

    def record_file(self, event: GisExtractTakenIn) -> None:
        self.files.add(event.file_id)

    def snapshot(self) -> dict[tuple[str, str], Any]:
        return {k: (s.owner_name, s.gis, s.gis_digest, s.parent_parcel_id) for k, s in self.parcels.items()}


def take_in(repo: MemoryParcels, data: bytes, key: str, kind: str) -> IngestResult:
    result = ingest_extract(
        UploadedExtract("b", key, "etag"),
        store=Files(data),
        reports=MemoryReports(),
        repo=repo,
        tariff_for=TARIFFS,
        tenants={T},
        clock=CLOCK,
    )
    fc.TAKEN[kind] += result.accepted + result.changed
    assert result.lines == result.accepted + result.changed + result.repeated + result.rejected, result
    return result


def same_again(repo: MemoryParcels, data: bytes, key: str, kind: str) -> None:
    """The same bytes again are the duplicate of the file; the same lines in other bytes
    (a blank line more: no line) are read and take nothing new in."""
    held = repo.snapshot()
    assert take_in(repo, data, key, kind).duplicate_file
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return
    again = take_in(repo, data + b"\n", key, kind)
    assert not again.duplicate_file and (again.accepted, again.changed) == (0, 0), again
    assert repo.snapshot() == held


def parcels_keep_the_rules(repo: MemoryParcels) -> None:
    for (tenant, parcel_id), s in repo.parcels.items():
        assert tenant == T and fc.safe_id(parcel_id), s
        assert fc.printable(s.owner_name, 500), s
        assert s.parent_parcel_id is None or fc.safe_id(s.parent_parcel_id), s
        g = s.gis
        assert g.use in PARCEL_USES, s
        areas = (g.area_sqft, g.impervious_sqft, g.woods_sqft, g.excluded_sqft)
        for a in areas:
            assert a.is_finite() and 0 <= a <= 10**10 and -a.as_tuple().exponent <= 4, s  # type: ignore[operator]
        assert 0 < g.area_sqft and g.impervious_sqft <= g.area_sqft, s


# --- CSV -----------------------------------------------------------------------------------
@st.composite
def parcel_row(draw: st.DrawFn) -> tuple[str, ...]:
    area = draw(st.integers(1_000, 100_000))
    impervious = draw(st.integers(0, area // 2))
    use = draw(st.sampled_from(PARCEL_USES))
    return (
        T,
        draw(fc.ids("P-", 5)),
        draw(st.sampled_from(("Ann Lee", "Smith, John", "Zoë"))),
        use,
        str(area),
        draw(st.sampled_from((str(impervious), f"{impervious}.25"))),
        draw(st.sampled_from(("", "0", "100"))),
        draw(st.sampled_from(("", "0"))),
        draw(st.sampled_from(("", "false", "true" if use == "residential" else "false"))),
        draw(st.sampled_from(("", "P-9"))),
    )


REFUSE_PARCEL = fc.refuse_with(
    {
        0: ("=" + T, "grafton-sewer", ""),
        1: fc.UNSAFE_IDS,
        2: ("=HYPERLINK(1)", "@x", "+x", "x" * 501, ""),
        3: ("commercial", "=residential", ""),
        4: ("0", "-1", "1e400", "NaN", "10000000001", "1.00001", "=1", ""),
        5: ("-1", "1e400", "NaN", "1.00001", "@1", "999999999"),
        8: ("yes", "=true"),
    }
)


@EXAMPLES
@given(fc.csv_file(HEADER, parcel_row(), max_rows=10))
def test_a_gis_csv_never_raises_and_keeps_the_rules(drawn: fc.Drawn) -> None:
    fc.TRIED["stormwater gis/ CSV"] += 1
    repo = MemoryParcels()
    first = take_in(repo, drawn.data, "gis/a.csv", "stormwater gis/ CSV")
    if drawn.plain:
        assert first.lines == len(drawn.rows), (first, drawn.rows)
    parcels_keep_the_rules(repo)
    same_again(repo, drawn.data, "gis/b.csv", "stormwater gis/ CSV")


@EXAMPLES
@given(fc.csv_file(HEADER, parcel_row(), all_mutated=True, refusing=REFUSE_PARCEL))
def test_a_gis_csv_of_refused_lines_stores_nothing(drawn: fc.Drawn) -> None:
    fc.TRIED["stormwater gis/ CSV refused"] += 1
    repo = MemoryParcels()
    take_in(
        repo, (",".join(HEADER) + f"\n{T},P-1,Ann,residential,15000,2000,,,,\n").encode(), "gis/0.csv", "-"
    )
    held = repo.snapshot()
    result = take_in(repo, drawn.data, "gis/a.csv", "stormwater gis/ CSV refused")
    assert result.rejected == len(drawn.rows) and result.accepted + result.changed == 0, result
    assert repo.snapshot() == held


# --- GeoJSON --------------------------------------------------------------------------------
RING = [[0, 0], [0, 10], [10, 10], [10, 0], [0, 0]]
json_value = st.one_of(
    st.sampled_from(fc.HOSTILE),
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(0, 3), max_size=3),
    st.dictionaries(st.sampled_from(("a", "type")), st.integers(0, 3), max_size=2),
)
geometry = st.one_of(
    st.just({"type": "Polygon", "coordinates": [RING]}),
    st.just(None),
    st.just({"type": "Point", "coordinates": [1.5, 42.5]}),
    st.just({"type": "Polygon", "coordinates": [RING[:-1]]}),
    st.just({"type": "Point", "coordinates": ["1", 2]}),
    st.just({"type": "Blob", "coordinates": [1, 2]}),
    st.just({"type": "MultiPolygon", "coordinates": [[RING]] * 3}),
    json_value,
)


@st.composite
def feature(draw: st.DrawFn) -> dict[str, Any]:
    cells = dict(zip(HEADER, draw(parcel_row()), strict=True))
    props: dict[str, Any] = {k: v for k, v in cells.items() if v != ""}
    for name in ("area_sqft", "impervious_sqft"):
        if draw(st.booleans()):  # numbers as JSON numbers
            props[name] = Decimal(props[name]) if "." in props[name] else int(props[name])
    mutated = draw(st.booleans())
    if mutated:
        for _ in range(draw(st.integers(1, 2))):
            name = draw(st.sampled_from(HEADER))
            if draw(st.integers(0, 4)) == 0:
                props.pop(name, None)
            else:
                props[name] = draw(json_value)
    out: dict[str, Any] = {"type": "Feature", "properties": props}
    out["geometry"] = draw(geometry) if mutated else {"type": "Polygon", "coordinates": [RING]}
    return out


def as_json(value: Any) -> str:
    return json.dumps(
        value, default=lambda d: float(d) if isinstance(d, Decimal) else str(d), ensure_ascii=False
    )


@st.composite
def geojson_file(draw: st.DrawFn) -> bytes:
    features = draw(st.lists(feature(), max_size=8))
    text = as_json({"type": "FeatureCollection", "features": features})
    how = draw(
        st.sampled_from(("plain", "plain", "plain", "bom", "utf-16", "latin-1", "cut", "crlf", "deep"))
    )
    if how == "deep":  # nested past the reader's 32 levels, in a feature or around the features
        depth = draw(st.sampled_from((33, 200, 5_000)))
        bomb = "[" * depth + "]" * depth
        if features and draw(st.booleans()):
            return text.replace('"properties"', f'"extra": {bomb}, "properties"', 1).encode()
        return ('{"type": "FeatureCollection", "features": ' + bomb + "}").encode()
    if how == "cut":
        return text.encode()[: draw(st.integers(0, len(text.encode())))]
    if how == "crlf":
        text = text.replace(", ", ",\r\n")
    encoding = {"bom": "utf-8-sig", "utf-16": "utf-16", "latin-1": "latin-1"}.get(how, "utf-8")
    try:
        return text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode()


@EXAMPLES
@given(geojson_file())
def test_a_gis_geojson_never_raises_and_keeps_the_rules(data: bytes) -> None:
    fc.TRIED["stormwater gis/ GeoJSON"] += 1
    repo = MemoryParcels()
    take_in(repo, data, "gis/a.geojson", "stormwater gis/ GeoJSON")
    parcels_keep_the_rules(repo)
    same_again(repo, data, "gis/b.geojson", "stormwater gis/ GeoJSON")


@pytest.mark.parametrize("column", range(len(HEADER)), ids=HEADER)
@fc.examples(6)
@given(data=st.data())
def test_no_gis_csv_column_keeps_a_control_character_or_a_formula(column: int, data: st.DataObject) -> None:
    fc.TRIED["stormwater gis/ CSV spoiled column"] += 1
    drawn = data.draw(fc.csv_file(HEADER, parcel_row(), all_mutated=True, refusing=fc.spoil(column)))
    repo = MemoryParcels()
    result = take_in(repo, drawn.data, "gis/a.csv", "stormwater gis/ CSV spoiled column")
    assert result.lines == len(drawn.rows), result
    parcels_keep_the_rules(repo)
