"""Request bodies are bounded before they are parsed, on every portal route that takes one.

A body nested 1,000 deep (2 KB) once answered 500 with a ``RecursionError`` from the JSON
parser; one over Lambda's 6 MB was parsed whole. Both are the caller's fault: 400 and 413
in the error shape (CONTRACTS.md "HTTP API"), decided before any parsing.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from hypothesis import given
from hypothesis import strategies as st

from common.http import MAX_BODY_BYTES, MAX_JSON_DEPTH, bounded_json_body, json_depth_over
from common.openapi import PORTAL_API_MODULES, portal_resolvers

_RESOLVERS = dict(zip(PORTAL_API_MODULES, portal_resolvers(), strict=True))


def _body_routes() -> list[tuple[str, str, str]]:
    """(module, METHOD, path template) of every portal route whose document takes a body."""
    routes = []
    for module, app in _RESOLVERS.items():
        for path, item in app.get_openapi_schema().paths.items():
            for method in ("post", "put", "patch", "delete"):
                operation = getattr(item, method, None)
                if operation is not None and operation.requestBody is not None:
                    routes.append((module, method.upper(), path))
    return routes


BODY_ROUTES = _body_routes()


def _event(method: str, template: str, body: str) -> dict[str, Any]:
    params = {name: f"{name}-1" for name in re.findall(r"\{(\w+)\}", template)}
    path = re.sub(r"\{(\w+)\}", lambda m: params[m.group(1)], template)
    route_key = f"{method} {template}"
    claims = {"sub": "staff-1", "role": "staff", "tenants": '["tenant-1"]', "accounts": "[]"}
    return {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"content-type": "application/json"},
        "requestContext": {
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": "t",
            },
            "requestId": "r",
            "routeKey": route_key,
            "stage": "$default",
            "authorizer": {"jwt": {"claims": claims, "scopes": None}},
        },
        "pathParameters": params,
        "body": body,
        "isBase64Encoded": False,
    }


def _error(answer: dict[str, Any]) -> dict[str, Any]:
    body = json.loads(answer["body"])
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    assert "Traceback" not in body["error"]["message"] and "Error" not in body["error"]["message"]
    return dict(body["error"])


def test_the_portal_routes_that_take_a_body_are_all_found() -> None:
    # The parametrised tests below run once for each; every service with body routes is there.
    assert len(BODY_ROUTES) >= 25
    assert {m for m, _, _ in BODY_ROUTES} >= {
        "billing.handlers.api",
        "metering.handlers.api",
        "sampling.handlers.api",
        "stormwater.handlers.api",
    }


@pytest.mark.parametrize("module", PORTAL_API_MODULES)
def test_every_portal_resolver_parses_bodies_with_the_bounded_parser(module: str) -> None:
    # notices has no body route today; a new one would be bounded all the same.
    assert _RESOLVERS[module]._json_body_deserializer is bounded_json_body


@pytest.mark.parametrize(("module", "method", "path"), BODY_ROUTES)
def test_a_body_nested_1000_deep_is_400_naming_the_depth_not_500(module: str, method: str, path: str) -> None:
    answer = _RESOLVERS[module].resolve(_event(method, path, "[" * 1000 + "]" * 1000), None)
    assert answer["statusCode"] == 400, answer
    error = _error(answer)
    assert error["code"] == "invalid_json" and f"deeper than {MAX_JSON_DEPTH} levels" in error["message"]


@pytest.mark.parametrize(("module", "method", "path"), BODY_ROUTES)
def test_a_body_over_lambdas_6_mb_is_413(module: str, method: str, path: str) -> None:
    body = json.dumps({"note": "x" * MAX_BODY_BYTES})
    answer = _RESOLVERS[module].resolve(_event(method, path, body), None)
    assert answer["statusCode"] == 413, answer
    assert _error(answer)["code"] == "payload_too_large"


@pytest.mark.parametrize(("module", "method", "path"), BODY_ROUTES)
def test_a_body_that_is_not_json_is_415_in_the_error_shape(module: str, method: str, path: str) -> None:
    event = _event(method, path, "name=x")
    event["headers"]["content-type"] = "text/plain"
    answer = _RESOLVERS[module].resolve(event, None)
    assert answer["statusCode"] == 415, answer
    assert _error(answer)["code"] == "unsupported_media_type"


def test_a_body_nested_within_the_limit_is_parsed_as_before() -> None:
    text = '{"a": ' * MAX_JSON_DEPTH + "1" + "}" * MAX_JSON_DEPTH
    value = bounded_json_body(text)
    for _ in range(MAX_JSON_DEPTH):
        value = value["a"]
    assert value == 1


def test_brackets_inside_strings_are_not_nesting() -> None:
    text = json.dumps({"note": "[" * 5000, "quote": 'a "\\" [[[', "escaped": "\\\\"})
    assert not json_depth_over(text, MAX_JSON_DEPTH)
    assert bounded_json_body(text)["note"] == "[" * 5000


def test_the_depth_counts_arrays_and_objects_alike() -> None:
    assert json_depth_over('{"a": [' * 17 + "1" + "]}" * 17, MAX_JSON_DEPTH)  # 34 levels
    assert not json_depth_over('{"a": [' * 16 + "1" + "]}" * 16, MAX_JSON_DEPTH)  # 32 levels
    assert not json_depth_over("[[]]" * 10_000, MAX_JSON_DEPTH)  # many brackets, 2 levels


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab\n'),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='[]{}"\\a'), inner, max_size=3)
    ),
    max_leaves=60,
)


@given(_JSON, st.integers(min_value=0, max_value=12))
def test_the_scan_agrees_with_the_parsed_depth(value: Any, limit: int) -> None:
    assert json_depth_over(json.dumps(value), limit) == (_depth(value) > limit)


def test_an_app_given_the_error_handlers_is_bounded_too() -> None:
    app = APIGatewayHttpResolver(enable_validation=True)
    from common.http import install_error_handlers

    install_error_handlers(app)
    assert app._json_body_deserializer is bounded_json_body


@pytest.mark.parametrize(
    ("text", "over"),
    [
        ('"[[[[' + "[" * 100, False),  # all inside one unclosed string
        ('"\\"' + "[" * 100, False),  # an escaped quote keeps the string open
        ('"\\\\"' + "[" * 100, True),  # an escaped backslash does not
        ('["\\\\\\"[[[["' + ", [" * 40, True),
    ],
)
def test_strings_and_escapes_are_the_parsers(text: str, over: bool) -> None:
    assert json_depth_over(text, MAX_JSON_DEPTH) is over


def test_brackets_after_a_stray_close_are_never_read_by_the_parser() -> None:
    # Uncounted by the scan (the running depth is below zero there), and harmless: the
    # parser refuses the first stray close without descending into what follows.
    text = "]" * 50 + "[" * 40
    assert not json_depth_over(text, MAX_JSON_DEPTH)
    with pytest.raises(json.JSONDecodeError):
        bounded_json_body(text)
