from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from sewerbill.cli import whatif

ROOT = Path(__file__).resolve().parents[2]
SEWERBILL = Path(sys.executable).parent / "sewerbill"


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)

    def one_error_line(self) -> str:
        """The single stderr line of a bad-input run (never a traceback)."""
        assert self.code == 2, (self.code, self.stdout, self.stderr)
        assert "Traceback" not in self.stderr
        lines = self.stderr.splitlines()
        assert len(lines) == 1, self.stderr
        assert self.stdout == ""
        return lines[0]


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False)
    whatif.register(app)
    return app


APP = _app()


@pytest.fixture
def cli():
    """Run a command in-process (typer's CliRunner), the document on stdin."""
    runner = CliRunner()

    def _run(command: str, document: Any | str) -> Run:
        text = document if isinstance(document, str) else json.dumps(document)
        result = runner.invoke(APP, [command, "-"], input=text)
        return Run(result.exit_code, result.stdout, result.stderr)

    return _run


@pytest.fixture
def sewerbill(tmp_path):
    """Run the installed console script in a real subprocess, the document in a file."""

    def _run(command: str, document: Any | str | None, *, path: str | None = None) -> Run:
        if path is None:
            path = str(tmp_path / "input.json")
            text = document if isinstance(document, str) else json.dumps(document)
            Path(path).write_text(text, encoding="utf-8")
        proc = subprocess.run(
            [str(SEWERBILL), command, path], capture_output=True, text=True, timeout=60, cwd=ROOT
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    return _run
