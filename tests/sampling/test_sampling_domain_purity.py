"""STYLE 1 and X-MONEY: the sampling domain is pure and never uses float."""

from __future__ import annotations

import ast
from pathlib import Path

import sampling.domain

DOMAIN_DIR = Path(sampling.domain.__file__).parent
SOURCES = sorted(DOMAIN_DIR.glob("*.py"))
FORBIDDEN_MODULES = {
    "boto3",
    "botocore",
    "aws_lambda_powertools",
    "os",
    "time",
    "socket",
    "requests",
    "urllib",
}


def imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module.split(".")[0])
    return modules


def test_domain_sources_exist():
    assert {p.name for p in SOURCES} >= {"errors.py", "strength.py", "sullivan.py", "parsing.py"}


def test_domain_imports_no_io_or_aws_modules():
    for path in SOURCES:
        assert not imported_modules(path) & FORBIDDEN_MODULES, path.name


def test_domain_never_calls_float_or_reads_the_clock():
    for path in SOURCES:
        text = path.read_text()
        assert "float(" not in text, path.name
        for clock in ("date.today", "datetime.now", "datetime.utcnow", "time.time"):
            assert clock not in text, f"{path.name}: {clock}"
