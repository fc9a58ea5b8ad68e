"""Lambda event filtering (FilterCriteria) with EventBridge-style patterns.

A record is passed to the function when any filter matches. For SQS the body is matched
as JSON when it parses (Lambda does the same); non-matching records are dropped: SQS
deletes them, streams move past them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Test = Callable[[Any], bool]


def compiled(
    pattern: dict[str, Any], leaf: Callable[[Any], Any] | None = None, *, plain: bool = True
) -> Test:
    """Whether an event matches ``pattern``, as a function of the event made once (each key's
    test made in advance, so an event is walked without reading the pattern again: a
    mapping's filters are asked of every record, 20,000 of a read file's stream): the event
    is walked only at the keys the pattern names, in its order, up to the first that fails.
    With ``leaf``, a value present where a list of rules reads it is first given to ``leaf``
    (a stream record's values made JSON only where a pattern reads them:
    `sources.StreamPoller.passes`). A list of rules that only names strings, or holds one ``prefix`` of a string, is
    tested directly (``plain``; what `_any_value` answers for them: a string equal to one of
    them, or a list holding one; a string with the prefix), where a string is not given to
    ``leaf`` (which must leave strings as they are, as `sources._jsonable` does); any other
    list is `_any_value`'s."""
    steps = [_step(key, rule, leaf, plain) for key, rule in pattern.items()]

    def test(event: Any) -> bool:
        if not isinstance(event, dict):
            return False
        for step in steps:
            if not step(event):
                return False
        return True

    return test


def _never(_: Any) -> bool:
    return False


_ABSENT = object()


def _read(event: dict[str, Any], key: str, leaf: Callable[[Any], Any] | None) -> Any:
    """The value at ``key`` as a plain test reads it: a string as it is, anything else
    through ``leaf``; `_ABSENT` when the event has no such key."""
    if key not in event:
        return _ABSENT
    value = event[key]
    if leaf is not None and type(value) is not str:  # a leaf leaves a string as it is
        value = leaf(value)
    return value


def _step(key: str, rule: Any, leaf: Callable[[Any], Any] | None, plain: bool) -> Test:
    """The test of one key of a pattern on an event (a dict)."""
    if isinstance(rule, dict):
        inner = compiled(rule, leaf, plain=plain)
        return lambda event: key in event and inner(event[key])
    if not isinstance(rule, list):
        return _never
    if plain and rule and all(type(r) is str for r in rule):
        names = frozenset(rule)

        def named(event: dict[str, Any]) -> bool:
            value = _read(event, key, leaf)
            if value is _ABSENT:
                return False
            if isinstance(value, list):
                return any(isinstance(v, str) and v in names for v in value)
            return isinstance(value, str) and value in names

        return named
    if plain and len(rule) == 1 and isinstance(rule[0], dict) and rule[0].keys() == {"prefix"}:
        prefix = rule[0]["prefix"]
        if type(prefix) is str:

            def prefixed(event: dict[str, Any]) -> bool:
                value = _read(event, key, leaf)
                return value is not _ABSENT and isinstance(value, str) and value.startswith(prefix)

            return prefixed

    def listed(event: dict[str, Any]) -> bool:
        present = key in event
        value = event.get(key)
        return _any_value(rule, leaf(value) if present and leaf is not None else value, present)

    return listed


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
    return passes([compiled(f) for f in filters], record)


def passes(tests: list[Test], record: dict[str, Any]) -> bool:
    """Whether a mapping's filters, made into tests once (`compiled`), keep ``record``: an SQS
    record's body is matched as JSON where it parses; no filters keep everything."""
    if not tests:
        return True
    subject = record
    if record.get("eventSource") == "aws:sqs":
        try:
            subject = {**record, "body": json.loads(record["body"])}
        except (TypeError, ValueError):
            pass
    return any(test(subject) for test in tests)
