"""Peak memory of the import readers on a 50 MB file of each kind, beside the MemorySize of the
function that runs them (issue 27). Not a test: pytest does not collect it; prints figures.

    .venv/bin/python tests/benchmarks/bench_import_memory.py [MEGABYTES] [lab|gis-csv|gis-geojson ...]

Each kind runs in a fresh child process (its peak RSS is its own, ``ru_maxrss``), which
imports the service, notes its RSS, then does the function's in-memory work on the file:

- lab file (``SamplingOnLabFileUploadedFunction``): the object's bytes read whole, as the
  use case reads them, and ``parse_lab_file`` on them (the rows it keeps, not DynamoDB);
- GIS CSV and GIS GeoJSON (``StormwaterOnGisExtractUploadedFunction``): the two streamed
  passes of ``ingest_extract`` (``plan_extract`` over ``read_extract``, then
  ``accepted_records``) over the file opened from disk, as the S3 body streams.

Printed per kind: file size, rows, seconds, RSS after imports, peak RSS and the function's
``MemorySize`` from template.yaml, and the peak as a share of it. DynamoDB writes are left
out (they are chunked: ``extracts.CHUNK`` parcels, 25 items per BatchWriteItem).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for extra in (ROOT / "services", ROOT / "infra"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

LAB_HEADER = (
    "tenant,sample_id,account_id,collected_on,parameter,value,units,analysed_on,lab,kind,resample_of,method\n"
)
GIS_HEADER = "tenant,parcel_id,owner_name,use,area_sqft,impervious_sqft,woods_sqft,excluded_sqft,farmstead\n"
PP = "pleasant-prairie-sewer"
PPW = "pleasant-prairie-stormwater"
PARAMETERS = (
    ("bod", "220", "mg/l"),
    ("tss", "150", "g/m³"),
    ("phosphorus", "4500", "µg/l"),
    ("tkn", "30", "mg/l"),
)


def write_lab(path: Path, size: int) -> int:
    rows = 0
    with path.open("w", encoding="utf-8") as out:
        out.write(LAB_HEADER)
        written = len(LAB_HEADER)
        while written < size:
            parameter, value, units = PARAMETERS[rows % 4]
            sample = rows // 4
            line = (
                f"{PP},LAB-{sample:08d},PP-{sample % 5000:05d},2025-01-15,{parameter},{value},{units},"
                f"2025-01-17,Acme Labs,routine,,SM 5210B\n"
            )
            out.write(line)
            written += len(line.encode())
            rows += 1
    return rows


def write_gis_csv(path: Path, size: int) -> int:
    rows = 0
    with path.open("w", encoding="utf-8") as out:
        out.write(GIS_HEADER)
        written = len(GIS_HEADER)
        while written < size:
            use = "residential" if rows % 4 else "nonresidential"
            line = f"{PPW},FP-{rows:08d},Owner {rows},{use},{15000 + rows % 9000},{2000 + rows % 7000},,,\n"
            out.write(line)
            written += len(line)
            rows += 1
    return rows


def write_geojson(path: Path, size: int) -> int:
    rows = 0
    with path.open("w", encoding="utf-8") as out:
        out.write('{"type":"FeatureCollection","features":[')
        written = 40
        while written < size:
            x, y = 2_500_000 + rows % 10_000, 200_000 + rows // 10_000
            ring = [[x, y], [x, y + 120.5], [x + 125.25, y + 120.5], [x + 125.25, y], [x, y]]
            feature = {
                "type": "Feature",
                "geometry": {"type": "Polygon", "coordinates": [ring]},
                "properties": {
                    "tenant": PPW,
                    "parcel_id": f"FP-{rows:08d}",
                    "owner_name": f"Owner {rows}",
                    "use": "residential" if rows % 4 else "nonresidential",
                    "area_sqft": 15000 + rows % 9000,
                    "impervious_sqft": 2000 + rows % 7000,
                },
            }
            text = ("," if rows else "") + json.dumps(feature, separators=(",", ":"))
            out.write(text)
            written += len(text)
            rows += 1
        out.write("]}")
    return rows


CHILD = r"""
import resource, sys, time
from datetime import date
sys.path[:0] = [{services!r}, {infra!r}]
kind, path = sys.argv[1], sys.argv[2]
if kind == "lab":
    from sampling.domain.lab_files import parse_lab_file
    from sampling.domain.strength import CLASSIFIED_TENANTS
else:
    from stormwater.domain.gis import accepted_records, plan_extract
    from stormwater.domain.gis_files import read_extract
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
if kind == "lab":
    with open(path, "rb") as f:
        data = f.read()
    parsed = parse_lab_file(data, today=date(2025, 2, 3), tenants=CLASSIFIED_TENANTS)
    kept, rejected = len(parsed.rows), len(parsed.rejected)
else:
    tenants = {{"pleasant-prairie-stormwater"}}
    with open(path, "rb") as f:
        plan = plan_extract(read_extract(f, path, tenants=tenants))
    with open(path, "rb") as f:
        kept = sum(1 for _ in accepted_records(read_extract(f, path, tenants=tenants), plan))
    rejected = len(plan.rejections)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(kept, rejected, round(seconds, 1), before // 1024, peak // 1024)
"""


def memory_sizes() -> dict[str, int]:
    from sewerbill.samtemplate import load_template

    template = load_template(ROOT / "template.yaml")
    default = int(template["Globals"]["Function"]["MemorySize"])
    return {
        name: int(template["Resources"][name]["Properties"].get("MemorySize", default))
        for name in ("SamplingOnLabFileUploadedFunction", "StormwaterOnGisExtractUploadedFunction")
    }


def main() -> None:
    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    size = megabytes * 1024 * 1024
    limits = memory_sizes()
    child = CHILD.format(services=str(ROOT / "services"), infra=str(ROOT / "infra"))
    every = {
        "lab": ("lab file", "lab", "lab.csv", write_lab, "SamplingOnLabFileUploadedFunction"),
        "gis-csv": ("GIS CSV", "gis", "gis.csv", write_gis_csv, "StormwaterOnGisExtractUploadedFunction"),
        "gis-geojson": (
            "GIS GeoJSON",
            "gis",
            "gis.geojson",
            write_geojson,
            "StormwaterOnGisExtractUploadedFunction",
        ),
    }
    kinds = [every[name] for name in (sys.argv[2:] or every)]
    print(
        "| kind | file MB | rows | kept | rejected | s | RSS after imports MB | peak RSS MB | MemorySize MB | peak / MemorySize |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for label, kind, name, write, function in kinds:
            path = Path(scratch) / name
            rows = write(path, size)
            out = subprocess.run(
                [sys.executable, "-c", child, kind, str(path)], capture_output=True, text=True, check=True
            ).stdout.split()
            kept, rejected, seconds, before, peak = out
            limit = limits[function]
            share = int(peak) / limit
            print(
                f"| {label} | {path.stat().st_size / 1048576:.1f} | {rows:,} | {int(kept):,} | {rejected} | {seconds} "
                f"| {before} | {peak} | {limit} ({function}) | {share:.0%} |"
            )
            path.unlink()


if __name__ == "__main__":
    main()
