"""moto's SQS clock, its message copies, a request's action name and the direct path's
headers: the shim's give what moto's (and werkzeug's) give (motoshim changes 14 and 15).

`motoshim._sqs_unix_time` replaces moto's `unix_time` (and `unix_time_millis`) in its SQS
models: the same function of moto's clock with the epoch made once. `motoshim._field_copy`
copies a received message's empty dicts, lists and sets as new empty ones. Here both are
compared with moto as shipped: the same floats for the same instants and for moto's clock,
the same copies, and a queue's scenario (send, receive, change visibility, redrive to a
dead-letter queue, delete) with the same answers and timestamps on moto as shipped and with
the shim, moto's clock held still.
"""

from __future__ import annotations

import copy
import time
from datetime import datetime, timedelta
from typing import Any

import moto.sqs.models as sqs_models
import pytest
from moto.core import utils as moto_utils

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator

pytestmark = pytest.mark.integration

INSTANTS = [
    datetime(1970, 1, 1),
    datetime(1969, 12, 31, 23, 59, 59, 999_999),  # before the epoch
    datetime(2025, 3, 1, 11, 0, 0, 1),
    datetime(2025, 12, 31, 23, 59, 59, 999_999),
    datetime(2038, 1, 19, 3, 14, 8, 500_000),
    datetime(9999, 12, 31, 23, 59, 59, 999_999),
]


def test_the_shim_s_sqs_clock_gives_moto_s_floats_for_every_instant_and_for_moto_s_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for at in INSTANTS:
        assert motoshim._sqs_unix_time(at) == moto_utils.unix_time(at)
        assert motoshim._sqs_unix_time_millis(at) == moto_utils.unix_time_millis(at)
    for at in INSTANTS[2:]:  # moto's clock, however it is set, is the one read
        monkeypatch.setattr(moto_utils, "utcnow", lambda at=at: at)
        assert motoshim._sqs_unix_time() == moto_utils.unix_time() == motoshim._unix_time(at)
        assert motoshim._sqs_unix_time_millis() == moto_utils.unix_time_millis()


def test_moto_s_own_clock_is_read_as_moto_reads_it_and_a_replaced_one_is_called(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`motoshim._utcnow_of(module)`: moto's own `utcnow` answered by `datetime.utcnow()` on
    Python 3.11 (a naive UTC time of the same clock, between two of moto's own readings),
    a module's replaced clock (a test's, as `fixed_clock` in test_moto_stream_records) called."""
    import moto.dynamodb.models.table as table_module

    monkeypatch.setenv("TZ", "Asia/Kolkata")  # local time 5:30 ahead: a local reading would show
    time.tzset()
    try:
        for module in (moto_utils, table_module):
            before = moto_utils.utcnow()
            read = motoshim._utcnow_of(module)
            after = moto_utils.utcnow()
            assert read.tzinfo is None and before <= read <= after
    finally:
        monkeypatch.undo()
        time.tzset()
    for module in (moto_utils, table_module):
        at = datetime(2031, 5, 6, 7, 8, 9, 10)
        monkeypatch.setattr(module, "utcnow", lambda at=at: at)
        assert motoshim._utcnow_of(module) == at


def test_installed_the_sqs_models_read_the_shim_s_clock_and_uninstalled_moto_s() -> None:
    emulator = Emulator.start("thread")  # installs the shim
    try:
        assert sqs_models.unix_time is motoshim._sqs_unix_time
        assert sqs_models.unix_time_millis is motoshim._sqs_unix_time_millis
        with motoshim.shipped():
            assert sqs_models.unix_time is moto_utils.unix_time
            assert sqs_models.unix_time_millis is moto_utils.unix_time_millis
    finally:
        emulator.stop()


class Sub(dict[str, Any]):
    pass


@pytest.mark.parametrize(
    "value",
    [{}, [], set(), {"a": {"b": [1]}}, [{"x": 1}], {1, 2}, Sub(), Sub(k="v"), "text", 7, None, (1, [2])],
)
def test_a_message_field_is_copied_as_deepcopy_copies_it(value: Any) -> None:
    copied, expected = motoshim._field_copy(value), copy.deepcopy(value)
    assert copied == expected and type(copied) is type(expected)
    if isinstance(value, (dict, list, set)):
        assert copied is not value  # a change of the copy leaves the queued message alone
    elif not isinstance(value, tuple):
        assert copied is value


def _scenario(sqs: Any, name: str, clock: list[datetime]) -> list[Any]:
    """A queue's life with its redrive, every answer kept (ids and handles left out); moto's
    clock moves a second between steps and stands still within one."""
    dlq = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    url = sqs.create_queue(
        QueueName=name,
        Attributes={"RedrivePolicy": f'{{"deadLetterTargetArn": "{arn}", "maxReceiveCount": "2"}}'},
    )["QueueUrl"]
    seen: list[Any] = []
    for n in range(3):
        sqs.send_message(
            QueueUrl=url,
            MessageBody=f"m{n}",
            MessageAttributes={"k": {"DataType": "String", "StringValue": "v"}} if n else {},
        )
    for _ in range(4):
        clock[0] += timedelta(seconds=1)
        got = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
        ).get("Messages", [])
        seen.append(
            sorted(
                (m["Body"], m.get("MessageAttributes"), m["MD5OfBody"], sorted(m["Attributes"].items()))
                for m in got
            )
        )
        for m in got:
            if m["Body"] == "m0":
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
            else:
                sqs.change_message_visibility(
                    QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
                )
    clock[0] += timedelta(seconds=1)
    dead = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10, AttributeNames=["All"])
    seen.append(sorted((m["Body"], sorted(m["Attributes"].items())) for m in dead.get("Messages", [])))
    return seen


def test_a_queue_s_scenario_answers_the_same_on_moto_as_shipped_and_with_the_shim(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start = datetime(2025, 6, 1, 12, 0, 0, 123_456)
    clock = [start]
    monkeypatch.setattr(moto_utils, "utcnow", lambda: clock[0])  # the same instants in both runs
    emulator = Emulator.start("thread")
    try:
        sqs = emulator.client("sqs")
        with motoshim.shipped():
            shipped = _scenario(sqs, "shipped", clock)
        clock[0] = start
        shimmed = _scenario(sqs, "shimmed", clock)
    finally:
        emulator.stop()
    assert shimmed == shipped
    assert shipped[-1] and shipped[-1][0][0] in {"m1", "m2"}  # redriven after two receives
    stamp = str(int(motoshim._unix_time(start) * 1000))
    assert dict(shipped[0][0][3])["SentTimestamp"] == stamp


def test_a_pending_groups_set_is_copied_as_deepcopy_copies_it() -> None:
    for groups in (set(), {"g1", "g2"}, {"g", None}, {("t", 1)}):
        copied = motoshim._message_copy(groups)
        assert copied == copy.deepcopy(groups) and copied is not groups


def test_an_action_s_name_is_converted_as_moto_converts_it() -> None:
    emulator = Emulator.start("thread")  # installs the shim (the original is kept)
    try:
        for name in ("GetItem", "BatchWriteItem", "TransactWriteItems", "ListTagsOfResource", "X", "", "aBc"):
            assert motoshim._camelcase_to_underscores(name) == moto_utils.camelcase_to_underscores(name)
    finally:
        emulator.stop()


def test_the_direct_path_s_headers_answer_get_and_in_as_werkzeug_s() -> None:
    from werkzeug.datastructures import Headers

    pairs = [("X-Amz-Target", "DynamoDB_20120810.GetItem"), ("content-type", "a"), ("Content-Type", "b")]
    ours, theirs = motoshim._headers_class()(), Headers()
    ours._list, theirs._list = list(pairs), list(pairs)
    for key in ("x-amz-target", "CONTENT-TYPE", "Host", "", "content-encoding", b"Host"):
        assert ours.get(key) == theirs.get(key)
        assert ours.get(key, "default") == theirs.get(key, "default")
        assert (key in ours) == (key in theirs)
    assert ours.get("Host", type=int) == theirs.get("Host", type=int)
