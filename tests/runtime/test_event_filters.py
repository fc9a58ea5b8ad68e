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
