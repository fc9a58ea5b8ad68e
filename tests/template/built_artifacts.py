"""Build the stack with `sam build` and import each function from what it built (issue 30).

Shared by tests/template/test_built_artifacts.py (the check) and
tests/benchmarks/bench_artifacts.py (package sizes and cold-start import times).

`build` runs the real `sam build` (arm64, as deployed; pip fetches the wheels from PyPI) into
a folder of the caller's. `import_function` then starts a Python with no site-packages and no
access to the repository (`-I -S`, run in an empty folder) whose path is what Lambda puts on
it: the function's folder (/var/task), then each layer's python/ (/opt/python), then the
standard library. It imports the handler's module and loads the tariff book from the
TariffsLayer's folder (TARIFFS_DIR, as the template's TariffsDir points at /opt/tariffs).

The build is for arm64 and this machine may not be: a compiled extension module the artifact
ships (e.g. pydantic_core/_pydantic_core.cpython-311-aarch64-linux-gnu.so) cannot load here,
so when the artifact holds one, this machine's build of the same module at the same place
of the same (pinned, tests/test_requirements.py) version is loaded instead. A module the
artifact does not hold, pure Python or compiled, is not found: the import fails as it would
in AWS.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
SAM = REPO / ".venv-sam" / "bin" / "sam"


class _Loader(yaml.SafeLoader):
    """The built template (sam build writes intrinsics in their long form; any short tag is
    read as nothing: only paths, handlers and plain variables are read here)."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def build(build_dir: Path) -> tuple[dict[str, Any], float]:
    """`sam build` of template.yaml into `build_dir`: the built template and the seconds it took."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            str(SAM),
            "build",
            "--parallel",
            "--template",
            str(REPO / "template.yaml"),
            "--build-dir",
            str(build_dir),
        ],
        cwd=REPO,
        env={**os.environ, "SAM_CLI_TELEMETRY": "0"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(
            f"sam build failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    return load_built(build_dir), seconds


def load_built(build_dir: Path) -> dict[str, Any]:
    """The template sam build wrote into `build_dir`."""
    built: dict[str, Any] = yaml.load((build_dir / "template.yaml").read_text(), Loader=_Loader)  # noqa: S506
    return built


def functions(built: dict[str, Any], build_dir: Path) -> dict[str, dict[str, Any]]:
    """Each function of the built template: its handler, its folder, its layers' folders and
    its environment variables (an intrinsic's value, unresolved here, as a placeholder)."""
    resources = built["Resources"]
    glob = (built.get("Globals") or {}).get("Function", {})
    out: dict[str, dict[str, Any]] = {}
    for logical_id, res in resources.items():
        if res["Type"] != "AWS::Serverless::Function":
            continue
        props = res["Properties"]
        layer_ids = [_layer_id(ref) for ref in [*(glob.get("Layers") or []), *(props.get("Layers") or [])]]
        variables = {
            **((glob.get("Environment") or {}).get("Variables") or {}),
            **((props.get("Environment") or {}).get("Variables") or {}),
        }
        out[logical_id] = {
            "handler": props["Handler"],
            "code": build_dir / props["CodeUri"],
            "layers": {lid: build_dir / resources[lid]["Properties"]["ContentUri"] for lid in layer_ids},
            "env": {k: v if isinstance(v, str) else f"placeholder-{k.lower()}" for k, v in variables.items()},
        }
    return out


def _layer_id(ref: Any) -> str:
    """A layer named in the built template (sam build writes intrinsics in their long form)."""
    if isinstance(ref, dict) and isinstance(ref.get("Ref"), str):
        return str(ref["Ref"])
    raise ValueError(f"a layer reference the harness cannot read: {ref!r}")


_IMPORT = r"""
import importlib, importlib.abc, importlib.machinery, importlib.util, json, os, sys, time
code, layers, host_site, handlers = json.loads(sys.argv[1])
roots = [code] + [os.path.join(layer, "python") for layer in layers if os.path.isdir(os.path.join(layer, "python"))]
sys.path[:] = roots + [p for p in sys.path if p and p.startswith(sys.base_prefix)]

def root_of(folder):
    return next((r for r in roots if folder == r or folder.startswith(r + os.sep)), None)

class HostBuildOfShippedExtension(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        name = fullname.rpartition(".")[2]
        for folder in (list(path) if path is not None else roots):
            root = root_of(folder)
            if root is None or not os.path.isdir(folder):
                continue
            shipped = [f for f in os.listdir(folder) if f.startswith(name + ".") and f.endswith(".so")]
            if not shipped:
                continue
            here = os.path.join(host_site, os.path.relpath(folder, root))
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                candidate = os.path.join(here, name + suffix)
                if os.path.exists(candidate):
                    return importlib.util.spec_from_file_location(fullname, candidate)
            raise ImportError(f"{fullname}: the artifact ships {shipped}, this machine has no build of it in {here}")
        return None

sys.meta_path.append(HostBuildOfShippedExtension())
import_ms = {}
for handler in handlers:
    started = time.perf_counter()
    module = importlib.import_module(handler.rpartition(".")[0])
    import_ms[handler] = (time.perf_counter() - started) * 1000
    assert callable(getattr(module, handler.rpartition(".")[2])), handler
from common.tariff_files import load_tariff_book
book = load_tariff_book(os.environ["TARIFFS_DIR"])
outside = sorted(
    name for name, m in list(sys.modules.items())
    if getattr(m, "__file__", None) and not m.__file__.startswith(sys.base_prefix)
    and root_of(os.path.dirname(m.__file__)) is None
    and not (m.__file__.startswith(host_site) and m.__file__.endswith(".so"))
)
print(json.dumps({"import_ms": import_ms, "tenants": sorted(book.tenants), "outside": outside}))
"""


def import_handlers(fn: dict[str, Any], handlers: list[str], tariffs_dir: Path) -> dict[str, Any]:
    """Import `handlers` (the function's, or those of functions whose folders hold the same
    files) from the function's artifact alone (see the module's docstring), in one fresh
    process, in order: each import's milliseconds (the first is the cold start's), the tenants
    of the tariff book loaded from `tariffs_dir`, and any module that came from somewhere else
    (there should be none). Raises with the child's traceback if an import fails."""
    host_site = sysconfig.get_paths()["purelib"]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "artifact-test",
        "AWS_SECRET_ACCESS_KEY": "artifact-test",
        "AWS_LAMBDA_FUNCTION_NAME": "artifact-test",
        "POWERTOOLS_TRACE_DISABLED": "true",
        **fn["env"],
        "TARIFFS_DIR": str(tariffs_dir),
    }
    args = json.dumps([str(fn["code"]), [str(p) for p in fn["layers"].values()], host_site, handlers])
    empty = fn["code"].parent / ".empty-cwd"
    empty.mkdir(exist_ok=True)
    done = subprocess.run(
        [_base_python(), "-I", "-S", "-c", _IMPORT, args],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise ImportError(f"{handlers} did not import from {fn['code']}:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def digest(folder: Path) -> str:
    """What a folder holds (each file's path and bytes), as one hash: sam build copies one
    build to every function of the same CodeUri, and this proves the copies are the same."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _base_python() -> str:
    """The interpreter under this virtual environment (no site-packages of its own)."""
    found = shutil.which(
        f"python{sys.version_info.major}.{sys.version_info.minor}", path=os.path.dirname(sys._base_executable)
    )
    return found or sys._base_executable


def size_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
