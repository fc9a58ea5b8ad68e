"""What the local runtime needs from a SAM template beyond its CloudFormation translation.

Reading and translating the template is `sewerbill.samtemplate`'s job (shared with the
template tests, so the template is read one way only); this module adds the local code
folders of the functions, which the translation replaces with a placeholder S3 location, and
what each function's deployment package and layers hold (`artifacts`), so that a function run
here can import only what `sam build` would give it in AWS (`import_rules`, enforced by the
function's worker process: `sewerbill.local.worker`).
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def _functions(sam_template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        logical_id: res
        for logical_id, res in (sam_template.get("Resources") or {}).items()
        if res.get("Type") == "AWS::Serverless::Function"
    }


def _parent_packages(res: dict[str, Any], handler: Any, code: Path) -> list[str]:
    """The packages sam build nests the CodeUri's contents in (Metadata BuildProperties
    ParentPackageMode: explicit names them in ParentPackages; auto takes them from the handler,
    as SAM does, when the CodeUri folder is named after the handler's first package)."""
    props = ((res.get("Metadata") or {}).get("BuildProperties")) or {}
    mode = props.get("ParentPackageMode")
    if mode == "explicit" and isinstance(props.get("ParentPackages"), str):
        return str(props["ParentPackages"]).split(".")
    if mode == "auto" and isinstance(handler, str) and handler.split(".")[0] == code.name:
        return [code.name]
    return []


def code_dirs(sam_template: dict[str, Any], base: Path) -> dict[str, Path]:
    """Each serverless function's local code folder: the folder that plays /var/task, i.e.
    its CodeUri (or the Globals one), or the CodeUri's parent when sam build nests the
    CodeUri in its parent packages (CodeUri services/billing/, ParentPackages billing: the
    folder is services/, whose billing package is then importable as in the artifact)."""
    glob = (sam_template.get("Globals") or {}).get("Function", {})
    out: dict[str, Path] = {}
    for logical_id, res in _functions(sam_template).items():
        props = res.get("Properties") or {}
        uri = props.get("CodeUri", glob.get("CodeUri"))
        if isinstance(uri, str) and not uri.startswith("s3://"):
            code = (base / uri).resolve()
            for _ in _parent_packages(res, props.get("Handler", glob.get("Handler")), code):
                code = code.parent
            out[logical_id] = code
    return out


# What each layer built by infra/layers/Makefile puts on a function's import path, by the
# layer's logical id: a function of its ContentUri folder answering first-party module names
# (a package name: the whole package; "billing.events": that module and its package's
# __init__). tests/template/test_built_artifacts.py checks a real `sam build` against it.
LAYER_MODULES: dict[str, Callable[[Path], set[str]]] = {
    "CommonLayer": lambda content: (
        {"common"} | {f"{p.parent.name}.events" for p in content.glob("*/events.py")}
    ),
    "TariffsLayer": lambda content: set(),  # data only: /opt/tariffs
}


@dataclass(frozen=True)
class Artifact:
    """What a function runs with in AWS: its package and its layers' contents, as the
    first-party module names they hold (see LAYER_MODULES) and the third-party distributions
    their requirements.txt files install."""

    modules: frozenset[str]
    distributions: frozenset[str]


def _requirements(folder: Path) -> set[str]:
    """The distributions a requirements.txt (pinned: name==version) in `folder` names."""
    path = folder / "requirements.txt"
    if not path.is_file():
        return set()
    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        found = re.match(r"([A-Za-z0-9_.-]+)(\[[^]]*\])?==", line.strip())
        if found:
            names.add(_normalized(found.group(1)))
    return names


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def artifacts(sam_template: dict[str, Any], base: Path) -> dict[str, Artifact]:
    """What each serverless function's artifact holds (its CodeUri with its requirements.txt,
    and each of its layers: the Globals' and its own, as SAM merges them)."""
    resources = sam_template.get("Resources") or {}
    glob = (sam_template.get("Globals") or {}).get("Function", {})
    out: dict[str, Artifact] = {}
    for logical_id, res in _functions(sam_template).items():
        props = res.get("Properties") or {}
        uri = props.get("CodeUri", glob.get("CodeUri"))
        if not isinstance(uri, str) or uri.startswith("s3://"):
            continue
        code = (base / uri).resolve()
        parents = _parent_packages(res, props.get("Handler", glob.get("Handler")), code)
        if parents:
            modules = {".".join(parents)}
        else:
            modules = {p.stem for p in code.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
        distributions = _requirements(code)
        for layer in [*(glob.get("Layers") or []), *(props.get("Layers") or [])]:
            layer_id = layer.get("Ref") if isinstance(layer, dict) else None
            layer_res = resources.get(layer_id) if isinstance(layer_id, str) else None
            if layer_res is None or layer_res.get("Type") != "AWS::Serverless::LayerVersion":
                raise ValueError(f"{logical_id}: layer {layer!r} is not a layer of this template")
            if layer_id not in LAYER_MODULES:
                raise ValueError(
                    f"{layer_id}: the local runtime does not know what this layer holds "
                    "(add its layout to sewerbill.local.template.LAYER_MODULES)"
                )
            content = (base / str((layer_res.get("Properties") or {}).get("ContentUri", "."))).resolve()
            modules |= LAYER_MODULES[layer_id](content)
            distributions |= _requirements(content)
        out[logical_id] = Artifact(frozenset(modules), frozenset(distributions))
    return out


def import_rules(
    sam_template: dict[str, Any], base: Path, providers: Mapping[str, list[str]] | None = None
) -> dict[str, dict[str, list[str]]]:
    """For each function, what its worker may import (`sewerbill.local.worker.confine_imports`):
    "guarded", the top-level names only some artifacts hold (the code folders' first-party
    packages, and the modules of every distribution some artifact installs), and "allowed",
    what of those this function's artifact holds. Anything else (the standard library, the
    runtime's own modules) is not guarded. `providers`: top-level module -> distributions
    (importlib.metadata.packages_distributions(), this environment's)."""
    found = artifacts(sam_template, base)
    folders = code_dirs(sam_template, base)
    providers = importlib.metadata.packages_distributions() if providers is None else providers
    shipped = {d for a in found.values() for d in a.distributions}
    third_party = {
        top: {_normalized(d) for d in dists} & shipped
        for top, dists in providers.items()
        if {_normalized(d) for d in dists} & shipped
    }
    first_party = {
        p.stem
        for folder in {folders[lid] for lid in found if lid in folders}
        for p in folder.iterdir()
        if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    guarded = sorted(first_party | set(third_party))
    rules: dict[str, dict[str, list[str]]] = {}
    for logical_id, artifact in found.items():
        allowed = set(artifact.modules) | {
            top for top, dists in third_party.items() if dists & artifact.distributions
        }
        rules[logical_id] = {"guarded": guarded, "allowed": sorted(allowed)}
    return rules
