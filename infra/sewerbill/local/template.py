"""What the local runtime needs from a SAM template beyond its CloudFormation translation.

Reading and translating the template is `sewerbill.samtemplate`'s job (shared with the
template tests, so the template is read one way only); this module adds the local code
folders of the functions, which the translation replaces with a placeholder S3 location.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


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
