"""services/requirements.txt is what sam build installs into the Lambda functions: every
third-party package the code under services/ imports must be in it, pinned exactly (a
function that imports a package the file lacks fails on its first call, in AWS only)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SERVICES = REPO / "services"


def _imported_top_levels() -> set[str]:
    names: set[str] = set()
    for path in SERVICES.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    first_party = {p.name for p in SERVICES.iterdir() if p.is_dir()}
    return {n for n in names if n not in sys.stdlib_module_names and n not in first_party}


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (SERVICES / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version, (
                f"services/requirements.txt: {line!r} is not pinned exactly (name==version)"
            )
            pins[_normalized(name.split("[")[0])] = version
    return pins


def test_every_third_party_import_under_services_is_pinned_for_the_functions() -> None:
    pins = _pins()
    providers = importlib.metadata.packages_distributions()
    missing: dict[str, list[str]] = {}
    for module in sorted(_imported_top_levels()):
        dists = providers.get(module, [module])
        if not any(_normalized(d) in pins for d in dists):
            missing[module] = dists
    assert not missing, f"imported under services/ but not in services/requirements.txt: {missing}"


def test_the_functions_get_the_versions_the_tests_ran_on() -> None:
    for name, version in _pins().items():
        assert importlib.metadata.version(name) == version, name
