"""billing.handlers.api: tariffs in force, health, and errors in the contract's shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from handler_support import http_event, lambda_context

from billing.handlers import api
from common.openapi import build_document, portal_resolvers, render

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def portal(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from common.tariff_files import default_tariffs_dir

    monkeypatch.setenv("EVENT_BUS_NAME", "sewerbill-local")
    monkeypatch.setenv("TARIFFS_DIR", str(default_tariffs_dir()))


def get(path: str, **query: str) -> tuple[int, dict[str, Any]]:
    response = api.lambda_handler(http_event("GET", path, query), lambda_context())
    return response["statusCode"], json.loads(response["body"])


def test_health(portal: None) -> None:
    assert get("/health") == (200, {"status": "ok"})


def test_the_tariff_version_in_force_on_a_date(portal: None) -> None:
    status, body = get("/tariffs/pleasant-prairie-sewer", on="2017-03-15")
    assert status == 200
    assert body["version"] == "pleasant-prairie-sewer@2015-06-01"
    assert body["effective_until"] == "2019-10-01"
    status, body = get("/tariffs/pleasant-prairie-sewer", on="2019-10-01")
    assert body["version"] == "pleasant-prairie-sewer@2019-10-01"
    assert body["billing_period_months"] == 1


def test_rates_are_decimal_strings(portal: None) -> None:
    _, body = get("/tariffs/grafton-sewer", on="2026-07-01")
    assert body["tariff"]["volume_rate_per_kgal"]["value"] == "6.50"


def test_an_unknown_tenant_is_404(portal: None) -> None:
    status, body = get("/tariffs/nowhere-sewer", on="2026-07-01")
    assert status == 404
    assert body["error"]["code"] == "unknown_tenant"


def test_a_date_before_the_first_version_is_404(portal: None) -> None:
    status, body = get("/tariffs/grafton-sewer", on="2001-01-01")
    assert status == 404
    assert body["error"]["code"] == "tariff_not_in_force"


@pytest.mark.parametrize("query", [{"on": "2026-13-01"}, {"on": "yesterday"}, {}])
def test_a_bad_or_missing_date_is_400_naming_the_field(portal: None, query: dict[str, str]) -> None:
    status, body = get("/tariffs/grafton-sewer", **query)
    assert status == 400
    assert body["error"]["code"] == "invalid_request"
    assert body["error"]["message"].startswith("on: ")


def test_an_unknown_route_is_a_json_404(portal: None) -> None:
    status, body = get("/nothing-here")
    assert status == 404
    assert set(body["error"]) == {"code", "message"}


def test_the_committed_openapi_document_is_the_one_the_code_generates() -> None:
    committed = (ROOT / "docs" / "openapi.json").read_text(encoding="utf-8")
    assert committed == render(build_document(portal_resolvers())), (
        "run: python -m common.openapi docs/openapi.json"
    )
