"""Read template.yaml and translate it to plain CloudFormation with aws-sam-translator.

Shared by the template tests and the local runtime, so the template is read one way only.
No AWS calls are made: managed policy names resolve to their well-known ARNs offline.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import boto3
import yaml
from samtranslator.parser.parser import Parser
from samtranslator.translator.translator import Translator

REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_PATH = REPO_ROOT / "template.yaml"

DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT_ID = "123456789012"  # moto's default account


class _CfnLoader(yaml.SafeLoader):
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
    template = _with_placeholder_code(load_template(path))
    values = parameter_values(template, parameter_overrides, region=region, account_id=account_id)
    # A session with an explicit region: translation must work with no AWS configuration.
    session = boto3.session.Session(region_name=region)
    translator = Translator(None, Parser(), boto_session=session)
    policies = _OfflinePolicyLoader().load()
    return translator.translate(copy.deepcopy(template), values, get_managed_policy_map=lambda: policies)


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
