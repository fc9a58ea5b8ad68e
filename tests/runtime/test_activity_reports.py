"""The runtime's activity reports (motoshim tells it which queue or stream got something).

A report for a source already pending, with the activity flag still up, changes nothing and
takes no lock (a read file's 20,000 stream records each reported); once a pass has taken the
pending sources (the flag down), the next report makes the source pending again.
"""

from __future__ import annotations

import threading

from sewerbill.local.runtime import LocalRuntime

STREAM = ("stream", "sewerbill-local-metering")


def reporting_part() -> LocalRuntime:
    """The part of a runtime that reports go to: one watched stream, no dead-letter queues."""
    rt = object.__new__(LocalRuntime)
    rt._watched = {STREAM}
    rt._dlq_urls_by_arn = {}
    rt._archive_arns, rt._archive_pending = set(), False  # no archive of the bus
    rt._dlqs_watched = False
    rt._pending, rt._dlqs_pending = set(), set()
    rt._activity, rt._activity_lock = threading.Event(), threading.Lock()
    return rt


def test_a_report_for_a_source_already_pending_takes_no_lock_and_a_taken_source_is_made_pending_again() -> (
    None
):
    rt = reporting_part()
    rt._on_activity(*STREAM)
    assert rt._pending == {STREAM} and rt._activity.is_set()
    with rt._activity_lock:  # held: a report that needed it would wait until it is let go
        report = threading.Thread(target=rt._on_activity, args=STREAM)
        report.start()
        report.join(timeout=2)
        assert not report.is_alive()
    report.join()
    assert rt._take_pending()[0] == {STREAM}
    assert not rt._activity.is_set()
    rt._on_activity(*STREAM)  # after the pass took it: pending again, flag up
    assert rt._pending == {STREAM} and rt._activity.is_set()


def test_a_report_for_a_source_nobody_watches_changes_nothing() -> None:
    rt = reporting_part()
    rt._on_activity("sqs", "arn:aws:sqs:us-east-1:123456789012:other")
    assert rt._pending == set() and not rt._activity.is_set()
