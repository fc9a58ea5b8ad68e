"""`common.dynamo`'s clients are botocore's own: deployed code uses public boto3/botocore APIs
only (issue 29), so a boto3 release that reworks botocore's private serializer or parser
cannot change what the functions send or read. `tests/benchmarks/bench_dynamo_wire.py`
measures what botocore's walk of the model costs beside the private override it replaced."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from botocore.exceptions import ParamValidationError
from botocore.parsers import ResponseParserFactory
from botocore.serialize import JSONSerializer

from common.dynamo import bulk_client, plain_answers_client

SERVICES = Path(__file__).resolve().parents[2] / "services"
# botocore's private serializer and parser modules, and the client and endpoint attributes
# (and methods) that replacing them touches.
PRIVATE = re.compile(
    r"botocore\.(serialize|parsers)\b|\._serializer\b|_response_parser_factory|_serialize_type_\w+|"
    r"_handle_(map|structure|list)\b|\._endpoint\b"
)


def test_no_deployed_module_reaches_into_botocore_internals() -> None:
    found = [
        f"{path.relative_to(SERVICES)}:{number}: {line.strip()}"
        for path in sorted(SERVICES.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if PRIVATE.search(line)
    ]
    assert not found, "private botocore in deployed code:\n" + "\n".join(found)


@pytest.fixture
def region(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")


def test_the_bulk_client_is_botocores_own_without_client_side_validation(region: None) -> None:
    client = bulk_client()
    # botocore's serializer as it is: neither wrapped in client-side validation nor replaced.
    assert type(client._serializer) is JSONSerializer
    assert type(client._endpoint._response_parser_factory) is ResponseParserFactory


def test_the_reading_client_keeps_botocores_validation(region: None) -> None:
    client = plain_answers_client()
    assert type(client._endpoint._response_parser_factory) is ResponseParserFactory
    with pytest.raises(ParamValidationError):
        client.get_item(TableName="t", Key={"pk": {"Z": "not a type"}})
