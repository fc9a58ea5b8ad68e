"""`sewerbill local demo` and `sewerbill local up --demo`: a year of the generated demo utility
on the local stack (issue 32), left in an output folder a person opens in a browser.

Kept apart from ``local.py`` (the stack commands): this module owns the output folder, the
services' log (a file there; ``--verbose`` keeps it on the screen) and the run's last lines.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def services_log(path: Path, verbose: bool) -> Iterator[Callable[[str], None]]:
    """Everything written to the process's stdout and stderr (the services' JSON logs, the
    runtime's own log, the functions' worker processes, which inherit the descriptors) goes
    to ``path``; the ``say`` yielded writes to the screen. ``verbose``: both on the screen."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if verbose:

        def say_verbose(text: str) -> None:
            print(text, flush=True)

        yield say_verbose
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    screen: IO[str] = os.fdopen(os.dup(1), "w", buffering=1)
    with path.open("a", encoding="utf-8") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)

        def say(text: str) -> None:
            screen.write(text + "\n")
            screen.flush()

        try:
            yield say
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            screen.close()


def run_year(
    rt: Any,
    say: Callable[[str], None],
    out: Path,
    *,
    size: int,
    seed: int,
    start: date,
    months: int,
    save_state: bool,
) -> dict[str, Any]:
    """Generate the demo, run its year on ``rt``, write the output folder; the summary."""
    from common.tariff_files import default_tariffs_dir, load_tariff_book
    from sewerbill.demo import output
    from sewerbill.demo.generator import generate
    from sewerbill.demo.year import YearRunner, collect, render

    began = time.perf_counter()
    demo = generate(size, seed, start, months, load_tariff_book(default_tariffs_dir()))
    (out / "expected.json").write_text(
        json.dumps(demo.expected, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    say(
        f"running {months} months of the demo utility ({size} accounts, seed {seed}) from {start.isoformat()}: "
        f"{len(demo.files)} files, {len(demo.api_calls)} staff calls"
    )
    runner = YearRunner(rt, demo, say)
    runner.run()
    say("reading back what happened ...")
    summary = collect(rt, runner)
    kept = output.copy_objects(rt, out)
    text = render(summary)
    index = output.write_index(out, summary, text, kept)
    if save_state:
        saved = rt.save_state(out / "state")
        summary["state"] = {
            "dir": str(out / "state"),
            **{k: saved[k] for k in ("items", "objects", "messages")},
        }
    summary["index"] = str(index)
    summary["seconds"] = round(time.perf_counter() - began, 1)
    return summary


def start_time(day: date) -> datetime:
    """The stack's clock at the demo's first day: midnight in the utilities' zone."""
    from sewerbill.demo.year import local_instant

    return local_instant(day, 0, 0).astimezone(UTC)
