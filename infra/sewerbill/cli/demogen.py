"""`sewerbill demo generate`: the demo utility's files written to a folder (issue 32).

The layout is by simulated day: ``DIR/<YYYY-MM-DD>/<bucket key>`` for each upload (the key
under the uploads bucket, e.g. ``2027-01-01/reads/demo-grafton-sewer-2027-01-01.csv``),
``DIR/index.csv`` listing them in the order to upload (day, key, path, kind, bytes),
``DIR/api-calls.jsonl`` for the staff calls files cannot carry (sampling points, septage
permits and disposals), ``DIR/payment-intents.csv`` (how each expected bill is paid) and
``DIR/expected.json`` (the figures the year must arrive at).
"""

from __future__ import annotations

import csv
import json
import time
from datetime import date
from pathlib import Path
from typing import Annotated

import typer

demo_app = typer.Typer(no_args_is_help=True, help="The demo utility: generated import files of four tenants.")


def register(app: typer.Typer) -> None:
    app.add_typer(demo_app, name="demo")


def _start(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(f"--start: not a date (YYYY-MM-DD): {text!r}") from None


@demo_app.command("generate")
def generate_command(
    out: Annotated[Path, typer.Option("--out", help="Folder to write (created; files are overwritten).")],
    size: Annotated[int, typer.Option("--size", help="Accounts in all (benchmarks: 10000, 100000).")] = 300,
    seed: Annotated[int, typer.Option("--seed", help="The seed: the same seed gives the same bytes.")] = 1,
    start: Annotated[
        str | None, typer.Option("--start", help="First simulated day, YYYY-MM-DD (default: today).")
    ] = None,
    months: Annotated[int, typer.Option("--months", help="Simulated months from --start.")] = 12,
) -> None:
    """Write the demo utility's import files, staff calls, payment intents and expected.json."""
    from common.tariff_files import default_tariffs_dir, load_tariff_book
    from sewerbill.demo.generator import INTENT_COLUMNS, generate

    first = _start(start) if start else date.today()
    began = time.perf_counter()
    try:
        demo = generate(size, seed, first, months, load_tariff_book(default_tariffs_dir()))
    except ValueError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None
    out.mkdir(parents=True, exist_ok=True)
    rows_index = []
    total = 0
    for f in demo.files:
        path = out / f.on.isoformat() / f.key
        path.parent.mkdir(parents=True, exist_ok=True)
        written = 0
        with path.open("wb") as handle:
            for chunk in f.chunks():
                handle.write(chunk)
                written += len(chunk)
        total += written
        rows_index.append((f.on.isoformat(), f.key, str(path.relative_to(out)), f.kind, str(written)))
    with (out / "index.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(("on", "key", "path", "kind", "bytes"))
        writer.writerows(rows_index)
    with (out / "api-calls.jsonl").open("w", encoding="utf-8") as handle:
        for call in demo.api_calls:
            handle.write(json.dumps(call.to_json(), sort_keys=True) + "\n")
    with (out / "payment-intents.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(INTENT_COLUMNS)
        writer.writerows(intent.row() for intent in demo.payment_intents())
    (out / "expected.json").write_text(
        json.dumps(demo.expected, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    typer.echo(
        f"demo utility: {size} accounts, seed {seed}, {first.isoformat()} + {months} months: "
        f"{len(demo.files)} files ({total:,} bytes), {len(demo.api_calls)} staff calls, "
        f"in {time.perf_counter() - began:.1f} s -> {out}"
    )
