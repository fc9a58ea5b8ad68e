"""`sam build` alone makes functions that run (issue 30): each function's handler imports from
what its artifact holds, with no access to the repository, and its tariffs load from the
TariffsLayer; and each artifact holds what the local runtime lets the function import.

Slow (the real build: about 2-4 minutes here, pip fetching the arm64 wheels from PyPI, then a
fresh interpreter per service), so it is in the integration tier. It needs aws-sam-cli in
.venv-sam/ (`make validate` installs it) and reaches PyPI.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from built_artifacts import SAM, build, digest, functions, import_handlers, load_built

from sewerbill.local.template import artifacts
from sewerbill.samtemplate import load_template

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not SAM.exists(), reason="aws-sam-cli is not installed in .venv-sam/ (make validate)"),
]

REPO = Path(__file__).resolve().parents[2]
TENANTS = sorted(p.name for p in (REPO / "infra" / "tariffs").iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, dict[str, Any]]]]:
    """The build, or SEWERBILL_SAM_BUILD_DIR's (a `sam build --build-dir` output of this tree)."""
    given = os.environ.get("SEWERBILL_SAM_BUILD_DIR")
    if given:
        build_dir = Path(given)
        template = load_built(build_dir)
    else:
        build_dir = tmp_path_factory.mktemp("sam-build") / "build"
        template, seconds = build(build_dir)
        print(f"sam build took {seconds:.0f} s")
    yield build_dir, functions(template, build_dir)


def test_every_function_is_built_with_its_service_and_the_two_layers(
    built: tuple[Path, dict[str, dict[str, Any]]],
) -> None:
    _, fns = built
    source = load_template(REPO / "template.yaml")
    assert set(fns) == {k for k, v in source["Resources"].items() if v["Type"] == "AWS::Serverless::Function"}
    first_party = {p.name for p in (REPO / "services").iterdir() if (p / "__init__.py").exists()}
    for logical_id, fn in fns.items():
        service = fn["handler"].split(".")[0]
        assert sorted(p.name for p in fn["code"].iterdir() if p.name in first_party) == [service], logical_id
        assert set(fn["layers"]) == {"CommonLayer", "TariffsLayer"}, logical_id


def test_the_tariffs_are_in_the_built_stack_without_any_step_after_sam_build(
    built: tuple[Path, dict[str, dict[str, Any]]],
) -> None:
    _, fns = built
    tariffs = next(iter(fns.values()))["layers"]["TariffsLayer"] / "tariffs"
    assert sorted(p.name for p in tariffs.iterdir()) == TENANTS
    for tenant in TENANTS:
        assert sorted(p.name for p in (tariffs / tenant).glob("*.yaml")) == sorted(
            p.name for p in (REPO / "infra" / "tariffs" / tenant).glob("*.yaml")
        )


def test_every_handler_imports_from_its_artifact_alone_and_loads_each_tenants_tariffs(
    built: tuple[Path, dict[str, dict[str, Any]]],
) -> None:
    """One fresh interpreter per distinct artifact: the functions of one service are copies
    of one build (their folders' files are compared), so each service's handlers are
    imported, one after another, from one of its functions' folders."""
    _, fns = built
    groups: dict[tuple[str, tuple[Path, ...]], list[str]] = {}
    for logical_id, fn in sorted(fns.items()):
        groups.setdefault((digest(fn["code"]), tuple(fn["layers"].values())), []).append(logical_id)
    assert len(groups) == len({fn["handler"].split(".")[0] for fn in fns.values()})  # one build per service
    for members in groups.values():
        fn = fns[members[0]]
        result = import_handlers(
            fn, [fns[m]["handler"] for m in members], fn["layers"]["TariffsLayer"] / "tariffs"
        )
        assert set(result["import_ms"]) == {fns[m]["handler"] for m in members}
        assert result["tenants"] == TENANTS, members
        assert result["outside"] == [], members


def test_a_function_missing_a_module_fails_the_import(built: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    """The check can fail: a stormwater function whose artifact lost ijson (its own library)
    does not import."""
    build_dir, fns = built
    fn = dict(fns["StormwaterOnGisExtractUploadedFunction"])
    broken = build_dir.parent / f"{build_dir.name}-broken-stormwater"
    if not broken.exists():
        shutil.copytree(fn["code"], broken)
        for path in broken.glob("ijson*"):
            shutil.rmtree(path)
    fn["code"] = broken
    with pytest.raises(ImportError, match="ijson"):
        import_handlers(fn, [fn["handler"]], fn["layers"]["TariffsLayer"] / "tariffs")


def test_each_artifact_holds_what_the_local_runtime_lets_its_function_import(
    built: tuple[Path, dict[str, dict[str, Any]]],
) -> None:
    """sewerbill.local.template.artifacts (what the local workers allow) against the build:
    the same first-party modules and the same libraries (their .dist-info folders)."""
    _, fns = built
    local = artifacts(load_template(REPO / "template.yaml"), REPO)
    first_party = {p.name for p in (REPO / "services").iterdir() if (p / "__init__.py").exists()}
    for logical_id, fn in fns.items():
        roots = [fn["code"], *(p / "python" for p in fn["layers"].values() if (p / "python").is_dir())]
        shipped: set[str] = set()
        libraries: set[str] = set()
        for root in roots:
            for path in root.rglob("*.py"):
                parts = path.relative_to(root).with_suffix("").parts
                if parts[0] in first_party:
                    shipped.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
            for info in root.glob("*.dist-info"):
                libraries.add(
                    re.sub(r"[-_.]+", "-", info.name.removesuffix(".dist-info").rsplit("-", 1)[0]).lower()
                )
        allowed = local[logical_id].modules
        for module in shipped:
            assert any(
                module == a or module.startswith(a + ".") or a.startswith(module + ".") for a in allowed
            ), (
                logical_id,
                module,
            )
        for module in allowed:
            assert module in shipped, (logical_id, module)
        assert libraries == set(local[logical_id].distributions), logical_id
