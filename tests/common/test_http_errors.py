"""The shared HTTP error handlers: a client's fault is a 4xx in the documented shape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from common.http import install_error_handlers
from common.ids import KeyPartError, key


def _event(path: str) -> dict[str, Any]:
    return {
        "version": "2.0",
        "routeKey": "GET /things/{thing_id}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {},
        "requestContext": {
            "http": {
                "method": "GET",
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": "t",
            },
            "requestId": "r",
            "routeKey": "GET /things/{thing_id}",
            "stage": "$default",
        },
        "pathParameters": {"thing_id": path.rsplit("/", 1)[-1]},
        "isBase64Encoded": False,
    }


def test_an_id_holding_the_key_separator_names_no_record_404_not_500() -> None:
    app = APIGatewayHttpResolver()
    install_error_handlers(app)

    @app.get("/things/<thing_id>")
    def thing(thing_id: str) -> dict[str, str]:
        return {"key": key("THING", thing_id)}

    ok = app.resolve(_event("/things/T-1"), None)
    assert ok["statusCode"] == 200 and json.loads(ok["body"]) == {"key": "THING#T-1"}
    bad = app.resolve(_event("/things/T#1"), None)
    assert bad["statusCode"] == 404
    assert json.loads(bad["body"])["error"]["code"] == "not_found"


def test_the_key_error_is_still_a_value_error_for_domain_callers() -> None:
    with pytest.raises(ValueError, match="must not contain '#'"):
        key("A", "b#c")
    assert issubclass(KeyPartError, ValueError)
