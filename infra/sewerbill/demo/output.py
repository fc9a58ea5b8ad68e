"""The demo year's output folder (issue 32): what a person opens after ``make demo``.

``DIR/index.html`` links everything kept: the bill PDFs and letters copied out of the mail
bucket, the print batches and their manifests, the services' reports (rejection reports
among them), the summary (``summary.txt`` for reading, ``summary.json`` for tools) and the
services' log. ``DIR/state/`` is the stack's saved state: ``sewerbill local up --state
DIR/state`` opens the portal on the demo year.
"""

from __future__ import annotations

import html
import json
import shutil
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from sewerbill.demo.year import objects

MAIL = "MailBucket"
SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def prepare(out: Path) -> None:
    """An empty output folder (a previous demo's files are removed, never another folder's:
    only a folder holding an ``index.html`` of ours, or an empty one, is reused)."""
    if out.exists():
        marker = out / "index.html"
        if any(out.iterdir()) and not (
            marker.exists() and "sewerbill demo" in marker.read_text(errors="replace")
        ):
            raise FileExistsError(f"{out} is not empty and is not a demo output folder; choose another --out")
        shutil.rmtree(out)
    out.mkdir(parents=True)


def _local_path(key: str) -> PurePosixPath:
    """An object key as a relative path inside the folder (no '..', no odd characters)."""
    parts = [
        ("".join(c if c in SAFE else "_" for c in p) or "_")
        for p in key.split("/")
        if p not in ("", ".", "..")
    ]
    return PurePosixPath(*parts)


def copy_objects(rt: Any, out: Path) -> dict[str, list[str]]:
    """The mail bucket's documents and every bucket's ``reports/`` into ``out``, by kind."""
    s3 = rt.client("s3")
    kept: dict[str, list[str]] = {"bills": [], "letters": [], "batches": [], "reports": [], "other": []}
    buckets = {lid: rt.resource(lid) for lid, kind in rt.stack.types.items() if kind == "AWS::S3::Bucket"}
    wanted: list[tuple[str, str, str]] = []
    if MAIL in buckets:
        wanted += [(MAIL, buckets[MAIL], k) for k in objects(rt, buckets[MAIL])]
    for lid, name in sorted(buckets.items()):
        if lid != MAIL:
            wanted += [(lid, name, k) for k in objects(rt, name, "reports/")]
    for lid, name, key in wanted:
        rel = PurePosixPath("mail" if lid == MAIL else "files") / _local_path(key)
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(s3.get_object(Bucket=name, Key=key)["Body"].read())
        kind = (
            "reports" if key.startswith("reports/") else
            "bills" if key.startswith("bills/") else
            "letters" if key.startswith("notices/") else
            "batches" if key.startswith("batches/") else "other"
        )  # fmt: skip
        kept[kind].append(str(rel))
    return {k: sorted(v) for k, v in kept.items()}


def _links(paths: Iterable[str]) -> str:
    items = "".join(f'<li><a href="{html.escape(p)}">{html.escape(p)}</a></li>\n' for p in paths)
    return f"<ul>\n{items}</ul>\n" if items else "<p>none</p>\n"


def write_index(out: Path, summary: dict[str, Any], text: str, kept: dict[str, list[str]]) -> Path:
    """``summary.json``, ``summary.txt`` and ``index.html`` linking every file kept."""
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (out / "summary.txt").write_text(text, encoding="utf-8")
    g = summary["generator"]
    bills_by_tenant: dict[str, list[str]] = {}
    for p in kept["bills"]:
        parts = PurePosixPath(p).parts  # mail/bills/<tenant>/<account>/<bill>.pdf
        bills_by_tenant.setdefault(parts[2] if len(parts) > 3 else "other", []).append(p)
    sections = [
        "<h2>Summary</h2>\n",
        _links(
            ["summary.txt", "summary.json", "services.log"]
            + (["expected.json"] if (out / "expected.json").exists() else [])
        ),
        f"<pre>{html.escape(text)}</pre>\n",
    ]
    for tenant, paths in sorted(bills_by_tenant.items()):
        sections += [f"<h2>Bills: {html.escape(tenant)} ({len(paths)})</h2>\n", _links(paths)]
    sections += [
        f"<h2>Letters and notices ({len(kept['letters'])})</h2>\n",
        _links(kept["letters"]),
        f"<h2>Print batches and manifests ({len(kept['batches'])})</h2>\n",
        _links(kept["batches"]),
        f"<h2>Reports and rejection reports ({len(kept['reports'])})</h2>\n",
        _links(kept["reports"]),
    ]
    if kept["other"]:
        sections += [f"<h2>Other documents ({len(kept['other'])})</h2>\n", _links(kept["other"])]
    page = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>sewerbill demo: {html.escape(g['start'])} + {g['months']} months</title>\n"
        "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}pre{background:#f4f4f4;"
        "padding:1em;overflow:auto}li{font-family:monospace}</style></head><body>\n"
        f"<h1>sewerbill demo: {g['size']} accounts, seed {g['seed']}, {html.escape(g['start'])} to "
        f"{html.escape(g['end'])}</h1>\n"
        "<p>The portal on this year: <code>sewerbill local up --state state</code> "
        "(run from this folder), then open the portal URL it prints.</p>\n"
        + "".join(sections)
        + "</body></html>\n"
    )
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
