"""An answer's request id: the shim's `_enrich_response` gives what moto's gives.

moto's `BaseResponse._enrich_response` puts a new request id in the headers and, with a
look-behind regex, between the `<RequestId>` tags of an XML body; `motoshim._enrich_response`
skips the regex when the text holds no `<RequestId>` (a JSON answer). Here the same bodies,
with moto's random source seeded the same, go through both: the same headers and bodies.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from moto.core.responses import BaseResponse
from moto.moto_api._internal import mock_random

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator

pytestmark = pytest.mark.integration

BODIES: list[Any] = [
    "",
    json.dumps({"Items": [{"pk": {"S": f"P#{i}"}, "sk": {"S": "x" * 50}} for i in range(2000)]}),
    json.dumps({"Items": [{"text": {"S": "<RequestId>inside a value</RequestId>"}}]}),
    "<Response><RequestId>old</RequestId><Rest>1</Rest></Response>",
    "<RequestId>a</RequestId><RequestId>b</RequestId>",
    "<RequestId>never closed",
    "no tags </RequestId> at all",
    b'{"Items": []}',
    b"<RequestId>bytes</RequestId>",
    None,
    {"not": "text"},
]


def _enriched(status: Any, body: Any, seed: int) -> tuple[dict[str, Any], Any]:
    mock_random.seed(seed)
    return BaseResponse._enrich_response({"status": status, "x-other": "1"}, body)


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
@pytest.mark.parametrize("status", [200, 400, "200"])
def test_the_shim_enriches_an_answer_as_moto_does(emulator: Emulator, body: Any, status: Any) -> None:
    assert BaseResponse.__dict__["_enrich_response"].__func__ is motoshim._enrich_response  # installed
    fast = _enriched(status, body, seed=7)
    with motoshim.shipped():
        shipped = _enriched(status, body, seed=7)

    assert fast == shipped
    headers, enriched = fast
    assert headers["status"] == str(status) and len(headers["x-amzn-requestid"]) == 52
    if isinstance(body, str) and "</RequestId>" in body and body.startswith("<"):
        # not vacuous: moto's regex rewrote the id inside the XML tags, and so did the shim
        assert headers["x-amzn-requestid"] in enriched and enriched != body
