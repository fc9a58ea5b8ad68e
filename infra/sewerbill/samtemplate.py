"""Read template.yaml and translate it to plain CloudFormation with aws-sam-translator.

Shared by the template tests and the local runtime, so the template is read one way only.
No AWS calls are made: managed policy names resolve to their well-known ARNs offline.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_PATH = REPO_ROOT / "template.yaml"

DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT_ID = "123456789012"  # moto's default account


# libyaml's parser where PyYAML was built with it (its wheels are): the template's 2,800
# lines parse in a tenth of the pure-Python parser's time, a large part of a stack's start.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _CfnLoader(_SafeLoader):  # type: ignore[misc, valid-type]
    """A YAML loader that understands CloudFormation's short intrinsic tags (!Ref, !Sub...)."""


def _intrinsic(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = tag_suffix
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    if name == "Ref":
        return {"Ref": value}
    if name == "GetAtt" and isinstance(value, str):
        resource, _, attribute = value.partition(".")
        return {"Fn::GetAtt": [resource, attribute]}
    if name == "Condition":
        return {"Condition": value}
    return {f"Fn::{name}": value}


_CfnLoader.add_multi_constructor("!", _intrinsic)


def load_template(path: str | Path = TEMPLATE_PATH) -> dict[str, Any]:
    """The SAM template as a dict, intrinsic short forms expanded to their long forms."""
    with open(path, encoding="utf-8") as handle:
        data = yaml.load(handle, Loader=_CfnLoader)  # noqa: S506 - SafeLoader subclass
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a template")
    return data


class _OfflinePolicyLoader:
    """Stands in for the IAM-backed loader: every AWS managed policy name maps to its ARN."""

    class _Map(dict[str, str]):
        def __missing__(self, name: str) -> str:
            return f"arn:aws:iam::aws:policy/{name}"

        def get(self, name: str, default: Any = None) -> Any:
            return self[name]

        def __contains__(self, name: object) -> bool:
            return isinstance(name, str)

    def load(self) -> dict[str, str]:
        return self._Map()


def parameter_defaults(template: Mapping[str, Any]) -> dict[str, Any]:
    """Each template Parameter's Default (parameters without one are left out)."""
    return {
        name: spec["Default"]
        for name, spec in (template.get("Parameters") or {}).items()
        if isinstance(spec, Mapping) and "Default" in spec
    }


def parameter_values(
    template: Mapping[str, Any],
    overrides: Mapping[str, Any] | None = None,
    *,
    region: str = DEFAULT_REGION,
    account_id: str = DEFAULT_ACCOUNT_ID,
) -> dict[str, Any]:
    """Parameter defaults, then ``overrides``, then the pseudo parameters."""
    values = parameter_defaults(template)
    values.update(overrides or {})
    values.update(
        {
            "AWS::Region": region,
            "AWS::AccountId": account_id,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": f"sewerbill-{values.get('Stage', 'local')}",
        }
    )
    return values


def translate_template(
    path: str | Path = TEMPLATE_PATH,
    parameter_overrides: Mapping[str, Any] | None = None,
    *,
    region: str = DEFAULT_REGION,
    account_id: str = DEFAULT_ACCOUNT_ID,
) -> dict[str, Any]:
    """template.yaml translated to CloudFormation (AWS::Serverless::* expanded).

    Intrinsics other than those SAM itself resolves are left in place (``{"Ref": ...}``,
    ``{"Fn::Sub": ...}``); resolving them against created resources is the caller's job.
    """
    source = Path(path).read_bytes()
    cached = _cache_file(source, parameter_overrides, region, account_id)
    if cached is not None:
        with contextlib.suppress(OSError, ValueError):
            translated: dict[str, Any] = json.loads(cached.read_text(encoding="utf-8"))
            return translated
    # The translator (0.6 s of imports) only when there is something to translate.
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator

    template = _with_placeholder_code(load_template(path))
    values = parameter_values(template, parameter_overrides, region=region, account_id=account_id)
    # A session with an explicit region: translation must work with no AWS configuration.
    session = boto3.session.Session(region_name=region)
    translator = Translator(None, Parser(), boto_session=session)
    policies = _OfflinePolicyLoader().load()
    result: dict[str, Any] = translator.translate(
        copy.deepcopy(template), values, get_managed_policy_map=lambda: policies
    )
    if cached is not None:
        _store(cached, result)
    return result


CACHE_KEEP = 40  # translations kept in the cache folder


def _cache_file(
    source: bytes, overrides: Mapping[str, Any] | None, region: str, account_id: str
) -> Path | None:
    """Where the translation of this exact template (its bytes, the overrides, region and
    account, the translator's version and this module's own code) is kept between processes:
    `sewerbill local up` and every runtime test start the same template, and translating it
    is about a second of a start. SEWERBILL_CACHE_DIR chooses the folder (default
    ~/.cache/sewerbill); SEWERBILL_CACHE_DIR=off translates every time. None: no cache."""
    import hashlib
    import os
    from importlib.metadata import version

    folder = os.environ.get("SEWERBILL_CACHE_DIR") or str(Path.home() / ".cache" / "sewerbill")
    if folder == "off":
        return None
    digest = hashlib.sha256()
    for part in (
        source,
        json.dumps(dict(overrides or {}), sort_keys=True, default=str).encode(),
        region.encode(),
        account_id.encode(),
        version("aws-sam-translator").encode(),
        Path(__file__).read_bytes(),
    ):
        digest.update(len(part).to_bytes(8, "big") + part)
    return Path(folder) / f"sam-translation-{digest.hexdigest()[:32]}.json"


def _store(target: Path, translated: dict[str, Any]) -> None:
    """Write the translation atomically (a concurrent reader sees all of it or nothing);
    a folder that cannot be written only costs the next start its translation."""
    import os
    import tempfile

    with contextlib.suppress(OSError, TypeError, ValueError):
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".sam-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(translated, handle)
            os.replace(tmp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        # the newest translations only (tests translate variants of the template too)
        kept = sorted(target.parent.glob("sam-translation-*.json"), key=lambda p: p.stat().st_mtime)
        for old in kept[:-CACHE_KEEP]:
            with contextlib.suppress(OSError):
                old.unlink()


LOCAL_CODE_BUCKET = "sewerbill-local-code"


def _with_placeholder_code(template: dict[str, Any]) -> dict[str, Any]:
    """Point local ``CodeUri`` and layer ``ContentUri`` paths at a placeholder S3 location, as
    ``sam validate`` does.

    The translator accepts only S3 code locations; the translated function's
    ``Code.S3Bucket`` is then ``LOCAL_CODE_BUCKET`` and ``Code.S3Key`` the local path.
    """
    template = copy.deepcopy(template)

    def fix(props: dict[str, Any], key: str = "CodeUri") -> None:
        uri = props.get(key)
        if isinstance(uri, str) and not uri.startswith("s3://"):
            props[key] = f"s3://{LOCAL_CODE_BUCKET}/{uri}"

    fix(template.get("Globals", {}).get("Function", {}))
    for resource in template.get("Resources", {}).values():
        if resource.get("Type") == "AWS::Serverless::Function":
            fix(resource.setdefault("Properties", {}))
        elif resource.get("Type") == "AWS::Serverless::LayerVersion":
            fix(resource.setdefault("Properties", {}), "ContentUri")
    return template


def resources_of_type(cfn: Mapping[str, Any], resource_type: str) -> dict[str, dict[str, Any]]:
    return {
        logical_id: resource
        for logical_id, resource in cfn.get("Resources", {}).items()
        if resource.get("Type") == resource_type
    }
