"""The `sewerbill` staff command line (CONTRACTS.md).

Sub-command groups live in their own modules and are mounted here:
- whatif.py: `preview`, `eru`, `classify` (the staff what-if commands)
- local.py: `local up`, `local clock ...`, `local upload ...` (the embedded local stack)
- demogen.py: `demo generate` (the demo utility's import files, issue 32)
- tables.py: `table compare` (repair a table in place from a restored copy, DEPLOY.md 7)
"""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, help="sewerbill: sewer and stormwater billing")


def _mount() -> None:
    # Imported lazily so a broken optional group never hides the others.
    from sewerbill.cli import demogen, local, tables, whatif

    whatif.register(app)
    local.register(app)
    demogen.register(app)
    tables.register(app)


def main() -> None:
    _mount()
    __import__("sewerbill.cli.rates", fromlist=["register"]).register(app)  # `rates study` (issue 35)
    app()
