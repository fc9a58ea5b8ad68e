"""The runtime's cheaper EventBridge delivery makes what moto as shipped makes.

`motoshim._put_events` hands each body its SQS targets receive to `motoshim._deliver`
instead of moto's `SQSBackend.send_message`, reads the clock once per event (moto's
`unix_time()` arithmetic on one `utcnow()`, the time text from the same reading), and
matches each rule's source and detail-type entries once per kind of event
(`motoshim._rule_matches`). Here each is compared with moto's own code: the message a
queue holds after either send (every field but the random id and the clock), the refusals
(a missing queue, a body over the queue's limit, a FIFO queue without a group), the time
text and number, and the match of every pattern shape on every event of
`test_moto_event_rules` (the deliveries there are compared end to end).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_moto_event_rules import EVENTS, PATTERNS  # the same shapes, the same events

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator

pytestmark = pytest.mark.integration

VOLATILE = {"id", "sent_timestamp", "visible_at", "delayed_until", "_old_receipt_handles", "receipt_handle"}


def _backend(emulator: Emulator) -> Any:
    from moto.sqs.models import sqs_backends

    return sqs_backends["123456789012"][emulator.region]


def _last(backend: Any, name: str) -> dict[str, Any]:
    message = backend.get_queue(name)._messages[-1]
    return {k: v for k, v in vars(message).items() if k not in VOLATILE}


def _outcome(send: Any) -> Any:
    try:
        send()
    except Exception as exc:  # noqa: BLE001 - the refusal itself is compared
        return type(exc).__name__, str(exc)
    return "sent"


@pytest.mark.parametrize(
    "attributes",
    [{}, {"DelaySeconds": "5"}, {"MaximumMessageSize": "1024"}],
    ids=["standard", "delayed", "small-limit"],
)
def test_a_delivered_message_is_the_message_moto_s_send_makes(
    emulator: Emulator, attributes: dict[str, str]
) -> None:
    from moto.core.utils import unix_time_millis

    sqs, backend = emulator.client("sqs"), _backend(emulator)
    name = f"deliver-{len(attributes)}-{''.join(attributes)}"
    sqs.create_queue(QueueName=name, Attributes=attributes)
    for body in ('{"detail": "é漢 & <x>"}', "x" * 2000):  # the second is over the small limit
        by_moto = _outcome(lambda: backend.send_message(queue_name=name, message_body=body, group_id=None))  # noqa: B023
        moto_made = _last(backend, name) if by_moto == "sent" else None
        moto_message = backend.get_queue(name)._messages[-1] if by_moto == "sent" else None
        now = int(unix_time_millis())
        by_shim = _outcome(lambda: motoshim._deliver(backend, name, body, now))  # noqa: B023
        assert by_shim == by_moto
        if by_moto == "sent":
            shim_message = backend.get_queue(name)._messages[-1]
            # and the shim's mark of a body the default template made (change 21), nothing else
            assert _last(backend, name) == {**moto_made, "default_event": True}
            assert shim_message.sent_timestamp == now
            # delayed (or not) by the queue's delay from the send, as moto's `mark_sent` delays
            for clock in ("delayed_until", "visible_at"):
                assert getattr(shim_message, clock) == pytest.approx(getattr(moto_message, clock), abs=50)
            if "DelaySeconds" in attributes:
                assert shim_message.delayed_until - now == pytest.approx(5000, abs=50)
            assert shim_message.id != moto_message.id


def test_a_missing_queue_and_a_fifo_queue_are_refused_as_moto_refuses_them(emulator: Emulator) -> None:
    sqs, backend = emulator.client("sqs"), _backend(emulator)
    sqs.create_queue(QueueName="deliver.fifo", Attributes={"FifoQueue": "true"})
    for name in ("no-such-queue", "deliver.fifo"):
        by_moto = _outcome(lambda: backend.send_message(queue_name=name, message_body="{}", group_id=None))  # noqa: B023
        assert by_moto != "sent"
        assert _outcome(lambda: motoshim._deliver(backend, name, "{}", 0)) == by_moto  # noqa: B023


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)))
def test_one_clock_reading_gives_moto_s_time_number_and_text(clock: datetime) -> None:
    from moto.core import utils

    # moto: unix_time() of its clock, then the text of utcfromtimestamp(that number)
    assert motoshim._unix_time(clock) == utils.unix_time(clock)
    assert utils.iso_8601_datetime_without_milliseconds(
        clock
    ) == utils.iso_8601_datetime_without_milliseconds(
        utils.utcfromtimestamp(utils.unix_time(clock))  # type: ignore[arg-type]
    )
    edge = clock.replace(microsecond=999_999)  # the last microsecond of a second stays in it
    assert utils.utcfromtimestamp(motoshim._unix_time(edge)) == edge  # type: ignore[arg-type]
    assert utils.utcfromtimestamp(motoshim._unix_time(edge + timedelta(microseconds=1))).microsecond == 0  # type: ignore[arg-type]


def _message(source: str, detail_type: str, detail: Any) -> dict[str, Any]:
    """An event as moto's EventBridge hands it to a rule's matcher."""
    return {
        "version": "0",
        "id": "e",
        "detail-type": detail_type,
        "source": source,
        "account": "123456789012",
        "time": 1.5,
        "region": "us-east-1",
        "resources": [],
        "detail": detail,
        "ingestion-time": 1.5,
    }


def test_a_rule_matches_the_events_moto_s_matcher_matches() -> None:
    from moto.events.models import EventPattern

    patterns = [
        *PATTERNS.values(),
        {},
        {"source": ["sewerbill.billing"], "$or": [{"detail-type": ["BillIssued"]}]},
    ]
    messages = [_message(source, detail_type, detail) for source, detail_type, detail in EVENTS]
    matched = 0
    for pattern in patterns:
        event_pattern = EventPattern.load(json.dumps(pattern))
        for message in messages * 2:  # the second time from the rule's memo
            expected = event_pattern.matches_event(message)
            assert motoshim._rule_matches(event_pattern, message, []) == expected, (pattern, message)
            matched += expected
    assert 0 < matched < len(patterns) * len(messages) * 2


DETAIL_PATTERNS = [
    {"detail": {"tenant": ["pleasant-prairie-stormwater"]}},  # the stormwater rule's rest
    {"source": ["sewerbill.billing"], "detail": {"tenant": ["grafton-sewer", "sullivan-sewer"]}},
    {"detail": {"tenant": ["grafton-sewer"], "kind": ["sewer"]}},
    {"detail": {"tenant": [{"prefix": "grafton"}]}},
    {"detail": {"tenant": [{"exists": False}]}},
    {"detail": {"tenant": [{"anything-but": ["grafton-sewer"]}]}},
    {"detail": {"n": [1, None, True]}},
    {"detail": {"a.b": ["y"]}},  # a dotted key: moto's flattened view, not this shortcut
    {"detail": {"tenant": ["grafton-sewer"]}, "resources": ["r"]},
]
DETAILS: list[Any] = [
    {"tenant": "grafton-sewer", "kind": "sewer"},
    {"tenant": "grafton-sewer", "kind": "storm"},
    {"tenant": "pleasant-prairie-stormwater"},
    {"tenant": ["a", "grafton-sewer"]},  # a list holds the value
    {"tenant": {"name": "grafton-sewer"}},  # an object: moto flattens it further
    {"tenant": {}},  # an empty object: moto keeps it as it is
    {"tenant": None},
    {"n": 1},
    {"n": None},
    {"n": True},
    {"a": {"b": "x"}, "a.b": "y"},
    {"a.b": "y"},
    {},
]


def test_a_rule_on_the_detail_s_keys_matches_what_moto_s_flattened_view_matches() -> None:
    """Change 17: a pattern's lists on top-level keys of the detail are tested on the
    detail's own values, not on a flattening of the whole message; the answers are moto's."""
    from moto.events.models import EventPattern

    matched = 0
    for pattern in DETAIL_PATTERNS:
        event_pattern = EventPattern.load(json.dumps(pattern))
        for detail in DETAILS:
            message = _message("sewerbill.billing", "BillIssued", detail)
            expected = event_pattern.matches_event(message)
            assert motoshim._rule_matches(event_pattern, message, []) == expected, (pattern, detail)
            matched += expected
    assert 0 < matched < len(DETAIL_PATTERNS) * len(DETAILS)
    # the shortcut is taken for the plain shapes, and only for them
    taken = [motoshim._RulePlan(p).detail is not None for p in DETAIL_PATTERNS]
    assert taken == [True, True, True, True, True, True, True, False, False]


def _put_events_calls(bus: str) -> list[list[dict[str, Any]]]:
    bill = {"Source": "sewerbill.billing", "DetailType": "BillIssued", "EventBusName": bus}
    return [
        [{**bill, "Detail": json.dumps({"tenant": "grafton-sewer", "n": i})} for i in range(10)],
        [{**bill, "Detail": json.dumps({"name": "Zoë"})}, {**bill, "Detail": ""}],  # one refused
        [{**bill, "Detail": "{not json"}],  # MalformedDetail
        [{**bill, "Detail": "{}"}] * 11,  # over 10: ValidationException
        [{**bill, "Detail": "{}", "EventBusName": "no-such-bus"}],  # ResourceNotFound
        [{**bill, "Detail": json.dumps({"name": "Smith & Sons"})}],  # a "&": moto's own path
    ]


def _put_events_answers(
    emulator: Emulator, bus: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Any], int]:
    """The raw answers (status, headers, body) to `_put_events_calls`, and how many went directly."""
    answers: list[Any] = []
    taken = {"n": 0}
    direct, call_action = motoshim._events_direct, motoshim._call_action

    def recorded(request: Any, body: Any) -> Any:
        answer = direct(request, body)
        if answer is not None:
            answers.append(answer)
        return answer

    def counted(handler: Any) -> Any:
        taken["n"] += 1
        return call_action(handler)

    events = emulator.client("events")
    events.create_event_bus(Name=bus)
    with monkeypatch.context() as patch:
        patch.setattr(motoshim, "_events_direct", recorded)
        patch.setattr(motoshim, "_call_action", counted)
        for entries in _put_events_calls(bus):
            try:
                events.put_events(Entries=entries)
            except Exception:  # noqa: BLE001, S110 - the raw answer is what is compared
                pass
    normalised = []
    for status, headers, body in answers:
        headers = dict(headers)
        assert headers.pop("x-amzn-requestid")  # random in both
        text = body.decode() if isinstance(body, bytes) else body
        parsed = json.loads(text) if text.startswith("{") else text
        if isinstance(parsed, dict):
            for entry in parsed.get("Entries", []):
                if entry.pop("EventId", None):  # random in both
                    entry["EventId"] = "x"
            text = json.dumps(parsed)
        normalised.append((status, headers, text.replace(bus, "B")))
    return normalised, taken["n"]


def test_a_put_events_handed_to_moto_s_handler_directly_answers_what_its_dispatch_answers(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, went_direct = _put_events_answers(emulator, "direct", monkeypatch)
    with monkeypatch.context() as patch:
        patch.setattr(motoshim, "_handler_from_request", lambda *_: None)
        slow, none_direct = _put_events_answers(emulator, "routed", monkeypatch)

    assert none_direct == 0
    assert went_direct == len(_put_events_calls("x")) - 1  # all but the body with a "&"
    assert len(fast) == len(slow) == len(_put_events_calls("x"))
    for i, (a, b) in enumerate(zip(fast, slow, strict=True)):
        assert a == b, f"call {i} answered differently"
    # the comparison covers refusals, not only successes
    bodies = [body for _, _, body in fast]
    assert [status for status, _, _ in fast] == [200, 200, 200, 400, 400, 200]
    assert '"FailedEntryCount": 1' in bodies[1] and "InvalidArgument" in bodies[1]
    assert "MalformedDetail" in bodies[2]
    assert "ValidationException" in bodies[3]
    assert "ResourceNotFoundException" in bodies[4]


def test_an_id_from_moto_s_random_source_is_the_text_of_its_uuid4() -> None:
    from moto.moto_api._internal.moto_random import MotoRandom

    ours, theirs = MotoRandom(), MotoRandom()
    ours.seed(12), theirs.seed(12)
    made = [motoshim._uuid4_text(ours) for _ in range(2000)]
    assert made == [str(theirs.uuid4()) for _ in range(2000)]
    assert len(set(made)) == 2000


def _rule_to_queue(emulator: Emulator, name: str) -> tuple[Any, Any, str, str]:
    """A bus, a queue and a rule between them (source "s"), all called ``name``: the events
    and SQS clients, the queue's URL and ARN."""
    events, sqs = emulator.client("events"), emulator.client("sqs")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.create_event_bus(Name=name)
    events.put_rule(Name=name, EventBusName=name, EventPattern='{"source": ["s"]}')
    events.put_targets(Rule=name, EventBusName=name, Targets=[{"Id": "q", "Arn": arn}])
    return events, sqs, url, arn


def test_a_rule_s_delivery_gets_its_account_back_without_being_parsed_again(emulator: Emulator) -> None:
    """motoshim change 21: a body `_deliver` put into a queue is the default template's event
    (no `account` at its top level), and `DirectSqs` names those messages, so the poller puts
    the account in front of it without parsing the body: the same Lambda record as the parse
    finds; a message sent to the queue by anyone else is parsed as before."""
    from sewerbill.local.sources import SqsPoller, fill_eventbridge_account
    from sewerbill.local.stack import QueueSource

    events, sqs, url, arn = _rule_to_queue(emulator, "account-back")
    details = [{"n": 1}, {"account": "inner", "\u00e9": ["x"]}]
    events.put_events(
        Entries=[
            {"EventBusName": "account-back", "Source": "s", "DetailType": "T", "Detail": json.dumps(d)}
            for d in details
        ]
    )
    own = [
        json.dumps({"id": "1", "detail-type": "X", "source": "s", "detail": {}}),
        json.dumps({"id": "2", "detail-type": "X", "source": "s", "detail": {}, "account": "999"}),
    ]
    for body in own:
        sqs.send_message(QueueUrl=url, MessageBody=body)
    direct = motoshim.DirectSqs(sqs, "123456789012", emulator.region)
    poller = SqsPoller(QueueSource("F", url, arn), direct, None, emulator.region, "123456789012")  # type: ignore[arg-type]
    messages = poller._receive()
    assert len(messages) == 4
    delivered = [m for m in messages if m["Body"] not in own]
    assert {m["MessageId"] for m in delivered} == direct.default_events  # the rule's two, not the others
    for message in messages:
        record = poller.record(message)
        assert record["body"] == fill_eventbridge_account(message["Body"], "123456789012")
        assert json.loads(record["body"])["account"] == (
            "999" if message["Body"] == own[1] else "123456789012"
        )


def test_a_batch_of_several_receives_knows_every_rule_delivery(emulator: Emulator) -> None:
    """A mapping's batch over 10 messages takes several receives; each names only its own
    rule deliveries (`DirectSqs.default_events`), and the poller keeps them all for the batch,
    so none of the 25 is parsed again to find its top level."""
    from sewerbill.local import sources
    from sewerbill.local.sources import SqsPoller, fill_eventbridge_account
    from sewerbill.local.stack import QueueSource

    events, sqs, url, arn = _rule_to_queue(emulator, "batch-of-25")
    for start in range(0, 25, 10):
        events.put_events(
            Entries=[
                {
                    "EventBusName": "batch-of-25",
                    "Source": "s",
                    "DetailType": "T",
                    "Detail": json.dumps({"n": n}),
                }
                for n in range(start, min(start + 10, 25))
            ]
        )
    direct = motoshim.DirectSqs(sqs, "123456789012", emulator.region)
    poller = SqsPoller(
        QueueSource("F", url, arn, batch_size=25), direct, None, emulator.region, "123456789012"
    )  # type: ignore[arg-type]

    messages = poller._receive()

    assert len(messages) == 25 and len(direct.default_events) == 5  # the last receive's own
    parsed = sources.json.loads
    try:
        sources.json.loads = lambda *a, **k: pytest.fail("a rule's delivery parsed again")  # type: ignore[assignment]
        records = [poller.record(m) for m in messages]
    finally:
        sources.json.loads = parsed  # type: ignore[assignment]
    assert [r["body"] for r in records] == [
        fill_eventbridge_account(m["Body"], "123456789012") for m in messages
    ]
