"""HTTP API conventions shared by every service's routes (CONTRACTS.md "HTTP API").

Errors are JSON ``{"error": {"code": "...", "message": "..."}}``; the caller's faults are
4xx (a bad parameter is 400 and names it), never 5xx.

A JSON request body is bounded before it is parsed (:func:`bounded_json_body`): over
Lambda's 6 MB payload it is 413, nested deeper than ``MAX_JSON_DEPTH`` it is 400. Python's
parser recurses once per level, so a body of a few KB nested 1,000 deep would otherwise
end in a ``RecursionError`` and a 500.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from itertools import accumulate
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from pydantic import BaseModel, WithJsonSchema

from common.ids import KeyPartError

SUCCESS_DESCRIPTION = "Successful response"

# Lambda's synchronous invocation payload is 6 MB (API Gateway's own 10 MB is the gateway's).
MAX_BODY_BYTES = 6 * 1024 * 1024
# No request of the API nests more than a few levels; 32 leaves room and keeps the parser
# far from Python's recursion limit.
MAX_JSON_DEPTH = 32


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


class ApiError(Exception):
    """Raised by a route to answer with an error body (never for bugs: those are 500)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def error_response(status: int, code: str, message: str) -> Response[str]:
    body = ErrorBody(error=ErrorDetail(code=code, message=message))
    return Response(
        status_code=status, content_type=content_types.APPLICATION_JSON, body=body.model_dump_json()
    )


def error_responses(*statuses: int) -> dict[int, Any]:
    """OpenAPI ``responses`` entries for the error statuses a route can return."""
    descriptions = {
        400: "Bad request",
        401: "Missing or invalid token",
        404: "Not found",
        500: "Internal error",
    }
    # The success answer too: Powertools documents the route's return type as 200 only when
    # ``responses`` names 200 without content (a route's own 200 entry, placed after, wins).
    documented: dict[int, Any] = {200: {"description": SUCCESS_DESCRIPTION}}
    for status in statuses:
        documented[status] = {
            "description": descriptions.get(status, "Error"),
            "content": {"application/json": {"model": ErrorBody}},
        }
    return documented


# A JSON string, or an unclosed one running to the end: every quote outside a string starts a
# match that succeeds, so the scan is one pass however the quotes and backslashes fall.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_DEPTH_STEP = [0] * 256
for _open in b"[{":
    _DEPTH_STEP[_open] = 1
for _close in b"]}":
    _DEPTH_STEP[_close] = -1


def json_depth_over(text: str, limit: int) -> bool:
    """Whether the JSON ``text`` nests arrays and objects deeper than ``limit``.

    The brackets outside strings, counted without recursion: strings are dropped, the
    brackets kept, and the running depth's maximum taken, each step in C rather than a
    Python loop per character. It needs no valid JSON: the parser stops at the
    first error, so only the part it would read must be counted right, and there the
    strings are the parser's. A text with no more than ``limit`` opening brackets in all,
    the usual case, is not scanned.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _JSON_STRING.sub("", text).encode("utf-8").translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0) > limit


def bounded_json_body(text: str) -> Any:
    """A request body's JSON, refused with an :class:`ApiError` before it is parsed when it
    is larger than Lambda takes (413) or nested deeper than ``MAX_JSON_DEPTH`` (400).

    The resolvers' ``json_body`` deserializer, set by :func:`install_error_handlers`, so it
    runs wherever Powertools reads a body (request validation first of all).
    """
    if len(text) > MAX_BODY_BYTES or len(text.encode("utf-8")) > MAX_BODY_BYTES:
        raise ApiError(413, "payload_too_large", f"the body is over {MAX_BODY_BYTES} bytes")
    if json_depth_over(text, MAX_JSON_DEPTH):
        raise ApiError(
            400, "invalid_json", f"the body nests arrays and objects deeper than {MAX_JSON_DEPTH} levels"
        )
    return json.loads(text)


def _field(loc: tuple[Any, ...]) -> str:
    # Powertools locates a query parameter as ("query", "on"); name it "on".
    parts = [str(p) for p in loc]
    if len(parts) > 1 and parts[0] in {"query", "path", "header", "body"}:
        parts = parts[1:]
    return ".".join(parts)


def install_error_handlers(
    app: APIGatewayHttpResolver, domain_errors: Mapping[type[Exception], tuple[int, str]] | None = None
) -> None:
    """The error shape of every API; ``domain_errors`` maps a service's own exceptions to
    (status, code), the message being the exception's text (which names the field). The
    most specific class wins (Powertools looks a handler up along the exception's MRO).

    Request bodies are bounded too: ``app`` parses JSON with :func:`bounded_json_body`.
    """
    # Powertools takes a deserializer only as the constructor's ``json_body_deserializer``
    # and keeps it here; set here, it bounds every resolver these handlers are installed on.
    # Its request validation parses the body before any middleware, so no hook runs sooner.
    if not hasattr(app, "_json_body_deserializer"):
        raise RuntimeError("this Powertools resolver does not take a JSON body deserializer")
    app._json_body_deserializer = bounded_json_body
    for cls, (status, code) in (domain_errors or {}).items():
        app.exception_handler(cls)(_answer_with(status, code))

    @app.exception_handler(ApiError)
    def _api_error(exc: ApiError) -> Response[str]:
        return error_response(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    def _bad_request(exc: RequestValidationError) -> Response[str]:
        messages = []
        for err in exc.errors():
            where = _field(tuple(err.get("loc", ())))
            what = "is required" if err.get("type") == "missing" else err.get("msg", "is invalid")
            messages.append(f"{where}: {what}")
        return error_response(400, "invalid_request", "; ".join(messages))

    @app.exception_handler(RequestUnsupportedContentType)
    def _not_json(exc: RequestUnsupportedContentType) -> Response[str]:
        # Powertools' own answer is {"statusCode": 415, "detail": [...]}, not the error shape.
        return error_response(415, "unsupported_media_type", "the body must be JSON (application/json)")

    @app.not_found
    def _no_route(exc: Exception) -> Response[str]:
        return error_response(404, "not_found", "no such route")

    @app.exception_handler(KeyPartError)
    def _no_such_id(exc: KeyPartError) -> Response[str]:
        # An id from a client holding the key separator names no record (never a 500).
        return error_response(404, "not_found", "no such record: an id cannot contain '#'")

    @app.exception_handler(json.JSONDecodeError)
    def _bad_json(exc: json.JSONDecodeError) -> Response[str]:
        return error_response(400, "invalid_json", f"the body is not JSON: {exc.msg}")


def _answer_with(status: int, code: str) -> Callable[[Exception], Response[str]]:
    def answer(exc: Exception) -> Response[str]:
        return error_response(status, code, str(exc))

    return answer


def decimal_string(integer_digits: int, places: int, description: str) -> Any:
    """The OpenAPI schema of a Decimal request field: the decimal string the service takes
    (``Annotated[Decimal, decimal_string(6, 2, "...")]``).

    Pydantic alone documents a constrained Decimal as "a bounded number, or any decimal
    string", so an out-of-range string is valid by the document yet refused. The pattern
    here admits at most ``integer_digits`` digits before the point and ``places`` after, so
    what it documents lies within the field's bounds (keep them so) and is accepted; the
    field still accepts a JSON number, as pydantic does."""
    point = rf"(\.[0-9]{{1,{places}}})?" if places else ""
    return WithJsonSchema(
        {
            "type": "string",
            "pattern": rf"^[0-9]{{1,{integer_digits}}}{point}$",
            "description": description,
        }
    )
