"""Lambda FilterCriteria patterns, as the local event sources apply them (pure)."""

from __future__ import annotations

import json

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
