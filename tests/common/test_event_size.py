"""Every event stays under EventBridge's 256 KB entry limit by construction (STYLE 18)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import ClassVar

import pytest

from common.events import MAX_ENTRY_BYTES, Event, EventTooLarge, entry, entry_size
from common.reports import Report

AT = datetime(2027, 2, 15, 8, 0, tzinfo=UTC)


class NotesTaken(Event):
    SOURCE: ClassVar[str] = "sewerbill.test"
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("event_id",)
    note: str


def _note_filling(total: int) -> str:
    """A note that makes the whole entry exactly ``total`` bytes."""
    overhead = entry_size(
        source=NotesTaken.SOURCE,
        detail_type="NotesTaken",
        detail=NotesTaken(occurred_at=AT, event_id="e1", note="").model_dump_json(),
    )
    return "n" * (total - overhead)


def test_an_event_of_exactly_256_kb_is_published() -> None:
    event = NotesTaken(occurred_at=AT, event_id="e1", note=_note_filling(MAX_ENTRY_BYTES))
    built = event.put_events_entry("bus")
    # 262,144 bytes = len("sewerbill.test") + len("NotesTaken") + len(detail)
    assert len(built["Source"]) + len(built["DetailType"]) + len(built["Detail"].encode()) == 262_144


def test_one_byte_more_is_refused_before_it_reaches_the_outbox_or_the_bus() -> None:
    event = NotesTaken(occurred_at=AT, event_id="e1", note=_note_filling(MAX_ENTRY_BYTES + 1))
    with pytest.raises(EventTooLarge, match="262145 bytes, over EventBridge's 262144"):
        event.put_events_entry("bus")
    with pytest.raises(EventTooLarge):
        event.detail_json()  # what the outbox stores: refused there too


def test_bytes_are_counted_in_utf8_not_characters() -> None:
    # "é" is 2 bytes: half as many characters reach the same limit.
    note = "é" * ((MAX_ENTRY_BYTES - entry_size(source="s", detail_type="d", detail="")) // 2 + 1)
    with pytest.raises(EventTooLarge):
        entry(source="s", detail_type="d", detail=note, bus_name="bus")


class ReadsRejectedExample(Event):
    SOURCE: ClassVar[str] = "sewerbill.test"
    BUSINESS_KEY: ClassVar[tuple[str, ...]] = ("file_key",)
    file_key: str
    rejected: int
    report: Report


def test_a_claim_check_event_is_small_whatever_the_size_of_its_report() -> None:
    counts = {f"reason {n} " + "r" * 200: n for n in range(51)}  # common.reports caps counts at 51 values
    report = Report(
        bucket="b",
        key="reports/metering/" + "k" * 1000,
        format="jsonl",
        rows=10**9,
        bytes=10**12,
        counts={k[:100]: v for k, v in counts.items()},
    )
    event = ReadsRejectedExample(occurred_at=AT, file_key="f", rejected=10**9, report=report)
    assert len(event.put_events_entry("bus")["Detail"]) < 10_000
