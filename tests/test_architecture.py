"""STYLE.md 1 and 6: every service's domain is pure (no AWS, no environment, no clock, no float)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOMAIN_FILES = sorted(ROOT.glob("services/*/domain/**/*.py"))
FORBIDDEN_MODULES = {"boto3", "botocore", "aws_lambda_powertools", "os", "moto", "requests", "urllib"}
CLOCK_CALLS = {("datetime", "now"), ("datetime", "utcnow"), ("date", "today"), ("time", "time")}


def _imports(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_there_is_domain_code_to_check() -> None:
    assert len(DOMAIN_FILES) > 5


@pytest.mark.parametrize("path", DOMAIN_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_domain_module_is_pure(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert not (_imports(tree) & FORBIDDEN_MODULES), "domain code must not do I/O or read the environment"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            assert not (isinstance(f, ast.Name) and f.id == "float"), f"float() at line {node.lineno}"
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                assert (f.value.id, f.attr) not in CLOCK_CALLS, f"clock read at line {node.lineno}"
