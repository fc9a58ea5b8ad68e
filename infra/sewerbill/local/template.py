"""What the local runtime needs from a SAM template beyond its CloudFormation translation.

Reading and translating the template is `sewerbill.samtemplate`'s job (shared with the
template tests, so the template is read one way only); this module adds the local code
folders of the functions, which the translation replaces with a placeholder S3 location.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sewerbill import samtemplate


def load(path: Path) -> dict[str, Any]:
    return samtemplate.load_template(path)


def translate(path: Path, parameters: dict[str, Any], region: str, account: str) -> dict[str, Any]:
    return samtemplate.translate_template(path, parameters, region=region, account_id=account)


def parameter_defaults(template: dict[str, Any]) -> dict[str, Any]:
    return {
        name: spec["Default"]
        for name, spec in (template.get("Parameters") or {}).items()
        if isinstance(spec, dict) and "Default" in spec
    }


def code_dirs(sam_template: dict[str, Any], base: Path) -> dict[str, Path]:
    """Each serverless function's local code folder (its CodeUri, or the Globals one)."""
    global_uri = (sam_template.get("Globals") or {}).get("Function", {}).get("CodeUri")
    out: dict[str, Path] = {}
    for logical_id, res in (sam_template.get("Resources") or {}).items():
        if res.get("Type") != "AWS::Serverless::Function":
            continue
        uri = (res.get("Properties") or {}).get("CodeUri", global_uri)
        if isinstance(uri, str) and not uri.startswith("s3://"):
            out[logical_id] = (base / uri).resolve()
    return out
