"""What sam build installs for the Lambda functions (issue 30): every function gets the
CommonLayer's libraries (services/requirements.txt) and its own service's
(services/<service>/requirements.txt, when the service has one). Every third-party package
the code of a service imports must be pinned exactly in one of the two, and `common` (which is
in the layer, imported by every function) in the layer's: a function that imports a package
its artifact lacks fails on its first call, in AWS only."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SERVICES = REPO / "services"
PACKAGES = sorted(p.name for p in SERVICES.iterdir() if (p / "__init__.py").exists())


def _imported_top_levels(package: str) -> set[str]:
    names: set[str] = set()
    for path in (SERVICES / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in PACKAGES}


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(path: Path) -> dict[str, str]:
    pins: dict[str, str] = {}
    if not path.exists():
        return pins
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version, (
                f"{path.relative_to(REPO)}: {line!r} is not pinned exactly (name==version)"
            )
            pins[_normalized(name.split("[")[0])] = version
    return pins


LAYER = SERVICES / "requirements.txt"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_third_party_import_is_pinned_in_the_artifact_that_runs_it(package: str) -> None:
    own = SERVICES / package / "requirements.txt"
    pins = _pins(LAYER) | ({} if package == "common" else _pins(own))
    providers = importlib.metadata.packages_distributions()
    missing: dict[str, list[str]] = {}
    for module in sorted(_imported_top_levels(package)):
        dists = providers.get(module, [module])
        if not any(_normalized(d) in pins for d in dists):
            missing[module] = dists
    where = (
        "services/requirements.txt"
        if package == "common"
        else f"services/requirements.txt or {own.relative_to(REPO)}"
    )
    assert not missing, f"imported under services/{package}/ but not in {where}: {missing}"


def test_a_service_lock_leaves_out_what_the_layer_already_has() -> None:
    layer = _pins(LAYER)
    for lock in SERVICES.glob("*/requirements.txt"):
        assert not set(_pins(lock)) & set(layer), lock.relative_to(REPO)


def test_the_functions_get_the_versions_the_tests_ran_on() -> None:
    for lock in [LAYER, *sorted(SERVICES.glob("*/requirements.txt"))]:
        for name, version in _pins(lock).items():
            assert importlib.metadata.version(name) == version, (lock.relative_to(REPO), name)
