"""Lambda event filtering (FilterCriteria) with EventBridge-style patterns.

A record is passed to the function when any filter matches. For SQS the body is matched
as JSON when it parses (Lambda does the same); non-matching records are dropped: SQS
deletes them, streams move past them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def matches(pattern: dict[str, Any], event: Any, leaf: Callable[[Any], Any] | None = None) -> bool:
    """Whether ``event`` matches ``pattern``, walking only the keys the pattern names, in its
    order, up to the first that fails. With ``leaf``, a value present where a list of rules
    reads it is first given to ``leaf`` (a stream record's values made JSON only where a
    pattern reads them: `sources.StreamPoller.passes`)."""
    if not isinstance(event, dict):
        return False
    for key, rule in pattern.items():
        present = key in event
        value = event.get(key)
        if isinstance(rule, dict):
            if not present or not matches(rule, value, leaf):
                return False
        elif isinstance(rule, list):
            if not _any_value(rule, leaf(value) if present and leaf is not None else value, present):
                return False
        else:
            return False
    return True


def _any_value(rules: list[Any], value: Any, present: bool) -> bool:
    values = value if isinstance(value, list) else [value]
    for rule in rules:
        if isinstance(rule, dict):
            if _special(rule, value, present):
                return True
        elif present and rule in values:
            return True
    return False


def _special(rule: dict[str, Any], value: Any, present: bool) -> bool:
    ((op, arg),) = rule.items()
    if op == "exists":
        return present == bool(arg)
    if not present:
        return False
    if op == "prefix":
        return isinstance(value, str) and value.startswith(arg)
    if op == "suffix":
        return isinstance(value, str) and value.endswith(arg)
    if op == "equals-ignore-case":
        return isinstance(value, str) and value.lower() == str(arg).lower()
    if op == "anything-but":
        if isinstance(arg, dict):
            return not _special(arg, value, present)
        excluded = arg if isinstance(arg, list) else [arg]
        return value not in excluded
    if op == "numeric":
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        ops = {
            "<": value.__lt__,
            "<=": value.__le__,
            ">": value.__gt__,
            ">=": value.__ge__,
            "=": value.__eq__,
        }
        return all(ops[arg[i]](arg[i + 1]) for i in range(0, len(arg), 2))
    return False


def parse_filters(criteria: dict[str, Any] | None) -> list[dict[str, Any]]:
    filters = (criteria or {}).get("Filters") or []
    return [json.loads(f["Pattern"]) if isinstance(f["Pattern"], str) else f["Pattern"] for f in filters]


def record_passes(filters: list[dict[str, Any]], record: dict[str, Any]) -> bool:
    if not filters:
        return True
    subject = record
    if record.get("eventSource") == "aws:sqs":
        try:
            subject = {**record, "body": json.loads(record["body"])}
        except (TypeError, ValueError):
            pass
    return any(matches(f, subject) for f in filters)
