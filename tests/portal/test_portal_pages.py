"""The local gateway serves the portal's static pages without auth and signs demo tokens."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest

from conftest import call
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration


def test_the_portal_pages_are_served_with_their_content_types(portal_rt: LocalRuntime) -> None:
    for path, kind in (
        ("/", "text/html"),  # redirected to /portal/
        ("/portal/", "text/html"),
        ("/portal/index.html", "text/html"),
        ("/portal/portal.css", "text/css"),
        ("/portal/portal.js", "text/javascript"),
        ("/portal/rules.json", "application/json"),
    ):
        status, headers, body = call(portal_rt, "GET", path)
        assert status == 200, path
        assert headers["content-type"].startswith(kind), path
        assert headers["x-content-type-options"] == "nosniff"
        assert body


def test_no_file_outside_the_portal_directory_is_served(portal_rt: LocalRuntime) -> None:
    host = urlsplit(portal_rt.gateway_url).netloc
    for raw in (
        "/portal/../template.yaml",
        "/portal/%2e%2e/template.yaml",
        "/portal/..%2fpyproject.toml",
        "/portal/%2e%2e%2f%2e%2e%2fetc/passwd",
        "/portal//etc/passwd",
        "/portal/.hidden",
        "/portal/nope.html",
        "/portal/index.html%00.js",
    ):
        conn = http.client.HTTPConnection(host, timeout=10)
        conn.request("GET", raw)  # sent as is: no client-side normalisation
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        assert resp.status == 404, raw
        assert json.loads(body)["error"]["code"] == "not_found", raw
        assert b"AWSTemplateFormatVersion" not in body and b"root:" not in body


def test_the_demo_chooser_signs_a_token_for_each_identity(portal_rt: LocalRuntime) -> None:
    status, _, raw = call(portal_rt, "GET", "/_local/portal/identities")
    assert status == 200
    ids = [i["id"] for i in json.loads(raw)["identities"]]
    assert ids == ["ada", "ben", "olive", "sam", "wes"]
    status, _, raw = call(portal_rt, "POST", "/_local/portal/token", body={"identity": "ben"})
    assert status == 200
    token = json.loads(raw)["token"]
    status, _, _ = call(portal_rt, "GET", "/staff/pleasant-prairie-sewer/accounts/PP-0002/bills", token)
    assert status == 200
    status, _, raw = call(portal_rt, "POST", "/_local/portal/token", body={"identity": "root"})
    assert status == 400
    assert json.loads(raw)["error"]["code"] == "invalid_request"
