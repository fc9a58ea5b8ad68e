"""HTTP API conventions shared by every service's routes (CONTRACTS.md "HTTP API").

Errors are JSON ``{"error": {"code": "...", "message": "..."}}``; the caller's faults are
4xx (a bad parameter is 400 and names it), never 5xx.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from pydantic import BaseModel, WithJsonSchema

from common.ids import KeyPartError

SUCCESS_DESCRIPTION = "Successful response"


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
    most specific class wins (Powertools looks a handler up along the exception's MRO)."""
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
