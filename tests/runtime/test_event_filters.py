"""Lambda FilterCriteria patterns, as the local event sources apply them (pure)."""

from __future__ import annotations

import json
from typing import Any

from sewerbill.local.filters import parse_filters, record_passes
from sewerbill.local.sources import fill_eventbridge_account

OUTBOX_ONLY = parse_filters(
    {
        "Filters": [
            {
                "Pattern": '{"eventName": ["INSERT"], "dynamodb": {"Keys": {"pk": {"S": [{"prefix": "OUTBOX#"}]}}}}'
            }
        ]
    }
)


def stream_record(event_name: str, pk: str) -> dict:
    return {"eventSource": "aws:dynamodb", "eventName": event_name, "dynamodb": {"Keys": {"pk": {"S": pk}}}}


def test_outbox_filter_passes_only_inserted_outbox_items() -> None:
    assert record_passes(OUTBOX_ONLY, stream_record("INSERT", "OUTBOX#1"))
    assert not record_passes(OUTBOX_ONLY, stream_record("MODIFY", "OUTBOX#1"))
    assert not record_passes(OUTBOX_ONLY, stream_record("INSERT", "ACCOUNT#1"))


def test_sqs_body_is_matched_as_json_and_no_filters_pass_everything() -> None:
    filters = parse_filters(
        {"Filters": [{"Pattern": '{"body": {"tenant": [{"anything-but": "sullivan-sewer"}]}}'}]}
    )
    sqs = {"eventSource": "aws:sqs", "body": json.dumps({"tenant": "grafton-sewer"})}
    assert record_passes(filters, sqs)
    assert not record_passes(filters, {**sqs, "body": json.dumps({"tenant": "sullivan-sewer"})})
    assert record_passes([], {"eventSource": "aws:sqs", "body": "not json"})


def test_moto_eventbridge_deliveries_get_their_account_back() -> None:
    body = json.dumps({"id": "1", "version": "0", "detail-type": "X", "source": "s", "detail": {}})
    assert json.loads(fill_eventbridge_account(body, "123456789012"))["account"] == "123456789012"
    assert fill_eventbridge_account('{"hello": 1}', "1") == '{"hello": 1}'
    # an account inside the detail is the detail's: the event's own is still put back
    inner = json.dumps({"id": "1", "detail-type": "X", "source": "s", "detail": {"account": "A-1"}})
    filled = json.loads(fill_eventbridge_account(inner, "123456789012"))
    assert (filled["account"], filled["detail"]["account"]) == ("123456789012", "A-1")
    assert {k: v for k, v in filled.items() if k != "account"} == json.loads(inner)
    # an event that carries its account already is left as it is
    own = json.dumps({"id": "1", "detail-type": "X", "source": "s", "detail": {}, "account": "999"})
    assert fill_eventbridge_account(own, "123456789012") is own


def outcome(test: Any, event: Any) -> Any:
    try:
        return test(event)
    except Exception as exc:  # noqa: BLE001 - a refusal (a prefix that is not a string) is compared too
        return type(exc).__name__


def test_a_compiled_pattern_s_plain_tests_answer_what_any_value_answers() -> None:
    """`filters.compiled` tests a list of strings and a single string prefix directly; on
    every pattern and value here (strings, a prefix that is not a string, lists, numbers,
    booleans, nulls, maps, missing keys, with and without a leaf) its answer is the one the
    rules' generic test (`_any_value`, ``plain=False``) gives."""
    from sewerbill.local.filters import compiled
    from sewerbill.local.sources import _jsonable

    rules: list[list[Any]] = [
        ["INSERT"],
        ["INSERT", "MODIFY"],
        [],
        [{"prefix": "OUTBOX#"}],
        [{"prefix": ""}],
        [{"prefix": 1}],
        [{"prefix": "A"}, {"prefix": "B"}],
        ["1", 1],
        [True],
        [None],
        [{"exists": False}],
        [{"anything-but": "x"}],
    ]
    values: list[Any] = [
        "INSERT",
        "MODIFY",
        "OUTBOX#1",
        "",
        "1",
        1,
        1.0,
        True,
        None,
        ["INSERT", "x"],
        ["x", 1],
        [["INSERT"]],
        [{"a": 1}, "MODIFY"],
        {"INSERT": 1},
        b"OUTBOX#",
        {"S": "OUTBOX#1"},
    ]
    checked = 0
    for rule in rules:
        for leaf in (None, _jsonable):
            for pattern in ({"k": rule}, {"d": {"k": rule}}):
                plain, generic = compiled(pattern, leaf), compiled(pattern, leaf, plain=False)
                for value in values:
                    for event in ({"k": value}, {"d": {"k": value}}, {"other": value}, {"d": value}):
                        answers = [outcome(test, event) for test in (plain, generic)]
                        assert answers[0] == answers[1], (rule, leaf, pattern, event)
                        checked += answers[0] is True
    assert checked > 100  # many events match, not only misses


class _Queue:
    """The SQS calls an SqsPoller makes, on a list of messages (what it deletes is kept)."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages
        self.deleted: list[list[str]] = []

    def receive_message(self, **_: Any) -> dict[str, Any]:
        taken, self.messages = self.messages, []
        return {"Messages": taken}

    def delete_message_batch(self, Entries: list[dict[str, str]], **_: Any) -> None:  # noqa: N803 - boto3's name
        self.deleted.append([e["ReceiptHandle"] for e in Entries])


class _Invoker:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def invoke(self, function: str, event: Any, trigger: str, records: int) -> Any:
        from sewerbill.local.invoker import Invocation

        self.events.append(event)
        return Invocation(function=function, trigger=trigger, records=records)


def test_a_queue_mapping_s_filters_drop_messages_and_hand_over_the_rest_as_records() -> None:
    """An SQS mapping with FilterCriteria: the messages no filter keeps are deleted without an
    invocation, the others reach the function as the records the poller makes of them (the
    template has no such mapping yet, so the poller's path is tested here)."""
    from sewerbill.local.sources import SqsPoller
    from sewerbill.local.stack import QueueSource

    filters = parse_filters({"Filters": [{"Pattern": '{"body": {"tenant": ["grafton-sewer"]}}'}]})
    bodies = [
        {"tenant": "grafton-sewer", "n": 1},
        {"tenant": "sullivan-sewer", "n": 2},
        {"tenant": "grafton-sewer", "n": 3},
    ]
    messages = [
        {"MessageId": f"m{i}", "ReceiptHandle": f"r{i}", "Body": json.dumps(b), "MD5OfBody": f"md5-{i}"}
        for i, b in enumerate(bodies)
    ]
    queue, invoker = _Queue(messages), _Invoker()
    source = QueueSource("Fn", "https://queue", "arn:aws:sqs:us-east-1:123456789012:q", filters=filters)
    poller = SqsPoller(source, queue, invoker, "us-east-1")  # type: ignore[arg-type]

    assert poller.poll_once() == 2
    assert queue.deleted == [["r1"], ["r0", "r2"]]  # the dropped one first, then the handled ones
    (event,) = invoker.events
    assert event == {"Records": [poller.record(messages[0]), poller.record(messages[2])]}
    assert [json.loads(r["body"])["n"] for r in event["Records"]] == [1, 3]


def test_a_queue_mapping_whose_filters_keep_nothing_invokes_nothing() -> None:
    from sewerbill.local.sources import SqsPoller
    from sewerbill.local.stack import QueueSource

    filters = parse_filters({"Filters": [{"Pattern": '{"body": {"tenant": ["grafton-sewer"]}}'}]})
    messages = [{"MessageId": "m0", "ReceiptHandle": "r0", "Body": "not json"}]
    queue, invoker = _Queue(messages), _Invoker()
    source = QueueSource("Fn", "https://queue", "arn:aws:sqs:us-east-1:123456789012:q", filters=filters)
    poller = SqsPoller(source, queue, invoker, "us-east-1")  # type: ignore[arg-type]

    assert poller.poll_once() == 1
    assert queue.deleted == [["r0"]]
    assert invoker.events == []
