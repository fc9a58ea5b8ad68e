"""Boundaries (STYLE 1, 4, 6).

Imports are checked by import-linter (the contracts in pyproject.toml, run by `make lint`):
domains import no adapters, handlers, AWS SDKs, Powertools, YAML or os; a service reaches
another only through its ``events`` module. The tests here prove the tool fails on a real
violation, and check what it cannot see: float() and clock reads in domain code.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOMAIN_FILES = sorted(ROOT.glob("services/*/domain/**/*.py"))
CLOCK_CALLS = {("datetime", "now"), ("datetime", "utcnow"), ("date", "today"), ("time", "time")}
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def test_there_is_domain_code_to_check() -> None:
    assert len(DOMAIN_FILES) > 5


@pytest.mark.parametrize("path", DOMAIN_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_domain_code_uses_no_float_and_reads_no_clock(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            assert not (isinstance(f, ast.Name) and f.id == "float"), f"float() at line {node.lineno}"
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                assert (f.value.id, f.attr) not in CLOCK_CALLS, f"clock read at line {node.lineno}"


def _lint_imports_on_a_copy(tmp_path: Path, module: str, source: str) -> subprocess.CompletedProcess[str]:
    """Run lint-imports with the repository's contracts on a copy of the code plus ``module``."""
    shutil.copytree(ROOT / "services", tmp_path / "services", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(
        ROOT / "infra" / "sewerbill",
        tmp_path / "infra" / "sewerbill",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "services" / Path(*module.split("."))).with_suffix(".py").write_text(source)
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tmp_path,
        env={"PYTHONPATH": f"{tmp_path / 'services'}:{tmp_path / 'infra'}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_repository_keeps_its_import_contracts(tmp_path: Path) -> None:
    result = _lint_imports_on_a_copy(tmp_path, "common.harmless", "from decimal import Decimal\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "source", "reported"),
    [
        ("billing.domain.leaky", "import os\n", "billing.domain.leaky -> os"),
        ("billing.domain.leaky", "import boto3\n", "billing.domain.leaky -> boto3"),
        ("metering.domain.leaky", "import yaml\n", "metering.domain.leaky -> yaml"),
        # Reading tariff files stays outside the domains: not even through common's loader.
        (
            "billing.domain.leaky",
            "from common.tariff_files import load_tariff_book\n",
            "billing.domain.leaky -> common.tariff_files",
        ),
        # The tariff models stay pure: a YAML import there would reach every domain that rates.
        ("common.tariffs", "import yaml\n", "common.tariffs -> yaml (l.1)"),
        (
            "billing.domain.leaky",
            "from billing.adapters import dynamodb\n",
            "billing.domain.leaky -> billing.adapters",
        ),
        (
            "billing.domain.leaky",
            "from aws_lambda_powertools import Logger\n",
            "billing.domain.leaky -> aws_lambda_powertools",
        ),
        # A domain leaning on the use cases above it.
        ("billing.domain.leaky", "from billing.app import cycles\n", "billing.domain.leaky -> billing.app"),
        # The use cases reach AWS through adapters, and never call back into the handlers.
        ("billing.app.leaky", "import boto3\n", "billing.app.leaky -> boto3"),
        (
            "stormwater.app.leaky",
            "from stormwater import composition\n",
            "stormwater.app.leaky -> stormwater.composition",
        ),
        ("notices.app.leaky", "from notices.handlers import api\n", "notices.app.leaky -> notices.handlers"),
        # A service reaching into another's domain instead of its events module.
        ("billing.peek", "from metering.domain import read_files\n", "billing.peek -> metering.domain"),
    ],
)
def test_lint_imports_fails_on_a_deliberate_violation(
    tmp_path: Path, module: str, source: str, reported: str
) -> None:
    result = _lint_imports_on_a_copy(tmp_path, module, source)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 broken" in result.stdout
    assert reported in result.stdout
