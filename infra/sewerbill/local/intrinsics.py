"""Resolve CloudFormation intrinsic functions against the resources created locally.

Supports what the translated template uses: `Ref`, `Fn::GetAtt`, `Fn::Sub`, `Fn::Join`,
`Fn::If` with `Conditions` (`Fn::Equals`/`And`/`Or`/`Not`/`Condition`) and `AWS::NoValue`.
Any other `Fn::` function stops start-up (UnresolvableError) rather than pass through.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_NO_VALUE = object()
_SUB_VAR = re.compile(r"\$\{([^}]+)\}")


class UnresolvableError(ValueError):
    """An intrinsic function the local runtime cannot evaluate."""


class Resolver:
    """Evaluates intrinsics. `attrs[logical_id]` maps "Ref" and attribute names to values.

    `fallback(logical_id, attribute)` is asked for resources or attributes not recorded in
    `attrs` (IAM roles, log groups and the like that have a name but nothing local).
    """

    def __init__(
        self,
        template: dict[str, Any],
        parameters: dict[str, Any],
        pseudo: dict[str, Any],
        fallback: Callable[[str, str], Any] | None = None,
    ) -> None:
        self.template = template
        self.parameters = dict(parameters)
        self.pseudo = dict(pseudo)
        self.attrs: dict[str, dict[str, Any]] = {}
        self.fallback = fallback
        self._conditions: dict[str, bool] = {}

    # --- conditions -------------------------------------------------------------------
    def condition(self, name: str) -> bool:
        if name not in self._conditions:
            spec = (self.template.get("Conditions") or {}).get(name)
            if spec is None:
                raise UnresolvableError(f"unknown condition {name!r}")
            self._conditions[name] = bool(self._eval_condition(spec))
        return self._conditions[name]

    def _eval_condition(self, node: Any) -> Any:
        if isinstance(node, dict) and len(node) == 1:
            ((key, arg),) = node.items()
            if key == "Fn::Equals":
                a, b = (self.resolve(x) for x in arg)
                return str(a) == str(b)
            if key == "Fn::And":
                return all(self._eval_condition(x) for x in arg)
            if key == "Fn::Or":
                return any(self._eval_condition(x) for x in arg)
            if key == "Fn::Not":
                return not self._eval_condition(arg[0])
            if key == "Condition":
                return self.condition(arg)
        return self.resolve(node)

    def included(self, resource: dict[str, Any]) -> bool:
        cond = resource.get("Condition")
        return cond is None or self.condition(cond)

    # --- values -----------------------------------------------------------------------
    def resolve(self, node: Any) -> Any:
        value = self._resolve(node)
        return None if value is _NO_VALUE else value

    def _resolve(self, node: Any) -> Any:
        if isinstance(node, list):
            return [v for v in (self._resolve(x) for x in node) if v is not _NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((key, arg),) = node.items()
            handler = _FUNCTIONS.get(key)
            if handler is not None:
                return handler(self, arg)
            if key.startswith("Fn::"):
                raise UnresolvableError(f"{key} is not supported by the local runtime")
        return {k: v for k, v in ((k, self._resolve(v)) for k, v in node.items()) if v is not _NO_VALUE}

    def ref(self, name: str) -> Any:
        if name == "AWS::NoValue":
            return _NO_VALUE
        if name in self.pseudo:
            return self.pseudo[name]
        if name in self.parameters:
            value = self.parameters[name]
            ptype = ((self.template.get("Parameters") or {}).get(name) or {}).get("Type", "")
            if ptype.startswith("List<") or ptype == "CommaDelimitedList":
                return value if isinstance(value, list) else [v.strip() for v in str(value).split(",")]
            return value
        return self.get_att(name, "Ref")

    def get_att(self, logical_id: str, attribute: str) -> Any:
        known = self.attrs.get(logical_id, {})
        if attribute in known:
            return known[attribute]
        if self.fallback is not None:
            value = self.fallback(logical_id, attribute)
            if value is not None:
                return value
        raise UnresolvableError(f"cannot resolve {logical_id}.{attribute}")

    def sub(self, text: str, variables: dict[str, Any] | None = None) -> str:
        variables = variables or {}

        def replace(match: re.Match[str]) -> str:
            expr = match.group(1)
            if expr.startswith("!"):
                return "${" + expr[1:] + "}"
            if expr in variables:
                return str(self.resolve(variables[expr]))
            if "." in expr and not expr.startswith("AWS::"):
                logical_id, attribute = expr.split(".", 1)
                return str(self.get_att(logical_id, attribute))
            return str(self.ref(expr))

        return _SUB_VAR.sub(replace, text)


def _fn_ref(r: Resolver, arg: Any) -> Any:
    return r.ref(r.resolve(arg))


def _fn_get_att(r: Resolver, arg: Any) -> Any:
    if isinstance(arg, str):
        arg = arg.split(".", 1)
    logical_id, attribute = (r.resolve(x) for x in arg)
    return r.get_att(logical_id, attribute)


def _fn_sub(r: Resolver, arg: Any) -> Any:
    if isinstance(arg, list):
        return r.sub(arg[0], arg[1] if len(arg) > 1 else None)
    return r.sub(arg)


def _fn_join(r: Resolver, arg: Any) -> Any:
    sep, items = arg
    values = r.resolve(items)
    return str(sep).join(str(v) for v in values)


def _fn_if(r: Resolver, arg: Any) -> Any:
    name, when_true, when_false = arg
    return r._resolve(when_true if r.condition(name) else when_false)


def _fn_equals(r: Resolver, arg: Any) -> Any:
    a, b = (r.resolve(x) for x in arg)
    return str(a) == str(b)


def _fn_condition(r: Resolver, arg: Any) -> Any:
    return r.condition(arg)


_FUNCTIONS: dict[str, Callable[[Resolver, Any], Any]] = {
    "Ref": _fn_ref,
    "Fn::GetAtt": _fn_get_att,
    "Fn::Sub": _fn_sub,
    "Fn::Join": _fn_join,
    "Fn::If": _fn_if,
    "Fn::Equals": _fn_equals,
    "Condition": _fn_condition,
}
