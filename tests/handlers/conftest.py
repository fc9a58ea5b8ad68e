from __future__ import annotations

from collections.abc import Iterator

import pytest
from handler_support import BUS, MAIL, REGION, TABLES, UPLOADS, Stack, create_stack
from moto import mock_aws

from common.config import reset_cold_starts
from common.tariff_files import default_tariffs_dir


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto in-process; no endpoint override can leak in from the environment."""
    for var in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        reset_cold_starts()
        yield
    reset_cold_starts()


@pytest.fixture
def stack(aws: None, monkeypatch: pytest.MonkeyPatch) -> Stack:
    monkeypatch.setenv("EVENT_BUS_NAME", BUS)
    monkeypatch.setenv("UPLOADS_BUCKET", UPLOADS)
    monkeypatch.setenv("TARIFFS_DIR", str(default_tariffs_dir()))
    return create_stack()


@pytest.fixture
def metering(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Stack:
    """Environment of metering's functions (as template.yaml sets it)."""
    monkeypatch.setenv("TABLE_NAME", TABLES["metering"])
    return stack


@pytest.fixture
def billing(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Stack:
    """Environment of billing's functions (as template.yaml sets it)."""
    monkeypatch.setenv("TABLE_NAME", TABLES["billing"])
    return stack


@pytest.fixture
def notices(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Stack:
    """Environment of notices' functions (as template.yaml sets it); the sender is not yet
    a verified SES identity, so tests choose when sending works."""
    monkeypatch.setenv("TABLE_NAME", TABLES["notices"])
    monkeypatch.setenv("MAIL_BUCKET", MAIL)
    monkeypatch.setenv("SENDER_EMAIL", "billing@sewerbill.local")
    stack.s3.create_bucket(Bucket=MAIL)
    return stack
