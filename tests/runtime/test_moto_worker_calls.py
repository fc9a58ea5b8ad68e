"""The local runtime's measures for a function's calls answer what moto as shipped, or a
signed call, answers: a receive's retention check (`motoshim._retained`) and a worker's
unsigned DynamoDB calls (`worker.unsigned_dynamodb`)."""

from __future__ import annotations

from typing import Any

import pytest
from test_moto_fast_json import run

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator

pytestmark = pytest.mark.integration


def test_a_receive_keeps_to_the_retention_period_as_moto_as_shipped_does(emulator: Emulator) -> None:
    """motoshim._retained reads the queue's retention period itself: a message older than
    it is dropped by a receive, a younger one handed out, as moto as shipped decides."""
    import time

    from moto.sqs.models import sqs_backends

    sqs = emulator.client("sqs")
    account = emulator.client("sts").get_caller_identity()["Account"]
    backend = sqs_backends[account][emulator.region]
    url = sqs.create_queue(QueueName="retention", Attributes={"MessageRetentionPeriod": "60"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="young")
    sqs.send_message(QueueUrl=url, MessageBody="old")
    queue = backend.get_queue("retention")
    old = next(m for m in queue._messages if m.body == "old")
    old.sent_timestamp = int((time.time() - 61) * 1000)  # 61 s ago: past the 60 s period
    young = next(m for m in queue._messages if m.body == "young")
    answers = [backend.is_message_valid_based_on_retention_period("retention", m) for m in (young, old)]
    with motoshim.shipped():
        shipped = [backend.is_message_valid_based_on_retention_period("retention", m) for m in (young, old)]
    assert answers == shipped == [True, False]
    assert backend.is_message_valid_based_on_retention_period.__func__ is motoshim._retained  # type: ignore[attr-defined]


def test_a_worker_s_unsigned_dynamodb_calls_answer_what_signed_calls_answer(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """worker.unsigned_dynamodb (a function's worker, its DynamoDB calls to moto in the
    runtime's process) skips SigV4 and sends the credential alone: every answer, errors and
    the stream included, is the signed calls' answer, and nothing was signed."""
    import botocore.auth

    from sewerbill.local import worker

    signed = run(emulator, "signed")
    signatures: list[str] = []
    sign = botocore.auth.SigV4Auth.add_auth

    def counted(self: Any, request: Any) -> None:
        signatures.append(str(request.headers.get("X-Amz-Target", "")))
        sign(self, request)

    monkeypatch.setattr(botocore.auth.SigV4Auth, "add_auth", counted)
    client = emulator.client

    def unsigned_client(service: str) -> Any:
        made = client(service)
        if service == "dynamodb":
            for event, handler in worker.unsigned_dynamodb(emulator.credentials["AWS_ACCESS_KEY_ID"]):
                made.meta.events.register(event, handler)
        return made

    monkeypatch.setattr(emulator, "client", unsigned_client)
    unsigned = run(emulator, "unsigned")
    assert unsigned == signed
    assert not [t for t in signatures if t.startswith("DynamoDB_")]  # only the streams' calls signed
