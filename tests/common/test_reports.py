"""common.reports: large reports go to S3 and events carry a bounded pointer (STYLE 18)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from typing import Any

import boto3
import pytest
from moto import mock_aws

from common.reports import MAX_COUNTED_VALUES, OTHER, Report, report_key, write_report

BUCKET = "uploads"


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for var in ("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield client


def _body(s3: Any, key: str) -> str:
    return str(s3.get_object(Bucket=BUCKET, Key=key)["Body"].read().decode("utf-8"))


def test_ten_thousand_rejections_are_written_whole_and_the_pointer_stays_small(s3: Any) -> None:
    rows = (
        {"line": n, "field": "volume_gal" if n % 2 else "account_id", "reason": "x" * 80}
        for n in range(10_000)
    )
    report = write_report(
        s3,
        bucket=BUCKET,
        service="metering",
        parts=("grafton", "abc123", "rejections"),
        rows=rows,
        count_by="field",
    )

    assert report.key == "reports/metering/grafton/abc123/rejections.jsonl"
    assert report.rows == 10_000
    assert report.counts == {"account_id": 5_000, "volume_gal": 5_000}
    lines = _body(s3, report.key).splitlines()
    assert len(lines) == 10_000
    assert json.loads(lines[1]) == {"line": 1, "field": "volume_gal", "reason": "x" * 80}
    assert report.bytes == len(_body(s3, report.key).encode())
    # The report is ~1 MB; what an event carries is a few hundred bytes.
    assert report.bytes > 1_000_000
    assert len(report.model_dump_json()) < 500


def test_decimals_and_dates_are_written_as_strings_never_floats(s3: Any) -> None:
    rows = [{"volume_gal": Decimal("12.50"), "read_on": date(2027, 2, 15)}]
    report = write_report(s3, bucket=BUCKET, service="billing", parts=("c1", "skipped"), rows=rows)
    assert _body(s3, report.key) == '{"volume_gal":"12.50","read_on":"2027-02-15"}\n'


def test_csv_reports_have_a_header_even_when_empty(s3: Any) -> None:
    rows = [{"line": 3, "reason": "bad, quoted"}, {"line": 9, "reason": "ok"}]
    report = write_report(
        s3, bucket=BUCKET, service="sampling", parts=("f", "rejections"), rows=rows, fmt="csv"
    )
    assert report.key.endswith("rejections.csv")
    assert _body(s3, report.key) == 'line,reason\n3,"bad, quoted"\n9,ok\n'

    empty = write_report(
        s3,
        bucket=BUCKET,
        service="sampling",
        parts=("g", "rejections"),
        rows=[],
        fmt="csv",
        fieldnames=("line", "reason"),
    )
    assert (empty.rows, _body(s3, empty.key)) == (0, "line,reason\n")


def test_writing_the_same_report_twice_leaves_one_object(s3: Any) -> None:
    for _ in range(2):
        write_report(
            s3, bucket=BUCKET, service="metering", parts=("t", "sha", "rejections"), rows=[{"line": 1}]
        )
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix="reports/")["Contents"]
    assert [o["Key"] for o in listed] == ["reports/metering/t/sha/rejections.jsonl"]


def test_counts_are_bounded_whatever_the_number_of_distinct_values(s3: Any) -> None:
    # 200 distinct reasons, each once; the 50 kept + "(other)" holding the remaining 150.
    rows = [{"reason": f"reason {n} " + "y" * 500} for n in range(200)]
    report = write_report(
        s3, bucket=BUCKET, service="metering", parts=("t", "r"), rows=rows, count_by="reason"
    )
    assert len(report.counts) == MAX_COUNTED_VALUES + 1
    assert report.counts[OTHER] == 150
    assert sum(report.counts.values()) == 200
    assert all(len(value) <= 100 for value in report.counts)


@pytest.mark.parametrize("parts", [(), ("",), ("..",), ("a\nb",)])
def test_keys_s3_would_refuse_or_that_escape_the_prefix_are_refused(parts: tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        report_key("metering", parts)


def test_a_key_over_1024_bytes_is_refused() -> None:
    with pytest.raises(ValueError, match="1024"):
        report_key("metering", ("é" * 600,))


def test_the_pointer_round_trips_through_an_event_detail() -> None:
    report = Report(bucket="b", key="reports/m/x.jsonl", format="jsonl", rows=3, bytes=30, counts={"a": 3})
    assert Report.model_validate_json(report.model_dump_json()) == report
    assert report.uri == "s3://b/reports/m/x.jsonl"
