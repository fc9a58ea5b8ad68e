"""`sewerbill preview | eru | classify` never print a traceback, whatever the document.

CONTRACTS.md: exit 0 with JSON on stdout, or exit 2 with ONE stderr line naming the field.
An earlier fuzz run (8,000 inputs, issue 6) found 48 documents that exited 1 with a
traceback; each is kept below as an explicit case, and hypothesis mutates the contract's
documents (one leaf replaced by a hostile JSON literal, a key dropped or added) to find more.
The commands run in-process (typer's CliRunner) for speed; the console script is tested
in a subprocess by test_cli_whatif.py.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sewerbill.cli import whatif

PREVIEW_GRAFTON: dict[str, Any] = {
    "tenant": "grafton-sewer",
    "period": {"start": "2026-07-01", "end": "2026-10-01"},
    "account": {"class": "residential", "meter_size": "5/8", "dwelling_units": 1},
    "water_gallons": 23000,
    "strength": {"bod": 250, "tss": 300, "phosphorus": 8, "tkn": 25, "fog": 50},
}
PREVIEW_PP: dict[str, Any] = {
    "tenant": "pleasant-prairie-sewer",
    "period": {"start": "2026-07-01", "end": "2026-08-01"},
    "account": {"class": "nonresidential", "zone": "PP", "meter_size": "1"},
    "water_gallons": 5000,
}
PREVIEW_STORM: dict[str, Any] = {
    "tenant": "pleasant-prairie-stormwater",
    "period": {"start": "2026-07-01", "end": "2026-08-01"},
    "parcel": {"use": "nonresidential", "area_sqft": 43560, "impervious_sqft": 30000, "credit_percent": "10"},
}
ERU: dict[str, Any] = {
    "tenant": "pleasant-prairie-stormwater",
    "parcel": {"use": "nonresidential", "area_sqft": 43560, "impervious_sqft": 30000, "woods_sqft": 0},
}
CLASSIFY: dict[str, Any] = {
    "tenant": "pleasant-prairie-sewer",
    "as_of": "2027-06-30",
    "results": [{"sampled_on": "2025-01-15", "bod": 220, "tss": 150, "phosphorus": 4, "fog": 40}],
}
# `SEWERBILL_FUZZ_EXAMPLES=8000 pytest tests/cli/test_fuzz_whatif.py` for a long run.
FUZZ_EXAMPLES = int(os.environ.get("SEWERBILL_FUZZ_EXAMPLES", "400"))
BASES: list[tuple[str, dict[str, Any]]] = [
    ("preview", PREVIEW_GRAFTON),
    ("preview", PREVIEW_PP),
    ("preview", PREVIEW_STORM),
    ("eru", ERU),
    ("classify", CLASSIFY),
]

# One stderr line that starts with a field path (`water_gallons`, `results[0].bod`,
# `period.start`) or the argument name for an unreadable document (`SCENARIO`).
FIELD_LINE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[\d+\])?(\.[A-Za-z_][A-Za-z0-9_]*(\[\d+\])?)*: \S")


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False)
    whatif.register(app)
    return app


APP = _app()
RUNNER = CliRunner()


@pytest.fixture(scope="module", autouse=True)
def tariffs_loaded_once() -> Iterator[None]:
    """The commands load the tariff files on every run; the fuzz loads them once (same book)."""
    book = whatif._book()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(whatif, "_book", lambda: book)
        yield


def run(command: str, text: str) -> tuple[int, str, str]:
    result = RUNNER.invoke(APP, [command, "-"], input=text)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{command} raised {result.exception!r} for {text[:300]}"
    )
    return result.exit_code, result.stdout, result.stderr


def assert_clean_outcome(command: str, text: str) -> str | None:
    """Exit 0 with a JSON document, or exit 2 with one line naming a field; returns that line."""
    code, stdout, stderr = run(command, text)
    assert "Traceback" not in stderr
    if code == 0:
        json.loads(stdout)
        assert stderr == ""
        return None
    assert code == 2, (code, stderr, text[:300])
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert stdout == ""
    # An unknown key is named as written, whatever its characters.
    assert FIELD_LINE.match(lines[0]) or ": unknown field (expected one of" in lines[0], lines[0]
    return lines[0]


def with_literal(base: dict[str, Any], path: tuple[str | int, ...], literal: str) -> str:
    """``base`` as JSON text with the value at ``path`` replaced by a raw JSON literal
    (so numbers like 1e999999999 reach the parser exactly as written)."""
    doc = copy.deepcopy(base)
    target: Any = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = "\x00LITERAL\x00"
    return json.dumps(doc).replace('"\\u0000LITERAL\\u0000"', literal)


# --- the cases the issue quotes, each named ------------------------------------------------

ISSUE_CASES = [
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), "1e400", "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), "1e26", "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), "100000000000000000000000000", "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), "1e999999999", "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), "-1e999999999", "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), "1e-999999999", "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("strength", "bod"), "1e999999999", "strength.bod"),
    ("preview", PREVIEW_GRAFTON, ("account", "dwelling_units"), "1e999999999", "account.dwelling_units"),
    ("preview", PREVIEW_STORM, ("parcel", "area_sqft"), "1e999999999", "parcel.area_sqft"),
    ("eru", ERU, ("parcel", "area_sqft"), "1e999999999", "parcel.area_sqft"),
    ("eru", ERU, ("parcel", "impervious_sqft"), "1e400", "parcel.impervious_sqft"),
    ("classify", CLASSIFY, ("results", 0, "bod"), "1e999999999", "results[0].bod"),
    ("classify", CLASSIFY, ("results", 0, "tss"), "1e26", "results[0].tss"),
    # A period starting 9999-12-01 ends in year 10000, which Python's date cannot hold.
    ("preview", PREVIEW_GRAFTON, ("period", "start"), '"9999-12-01"', "period.start"),
    ("preview", PREVIEW_PP, ("period", "start"), '"9999-12-01"', "period.start"),
    ("classify", CLASSIFY, ("as_of",), '"9999-12-31"', "as_of"),
    ("classify", CLASSIFY, ("results", 0, "sampled_on"), '"9999-12-31"', "results[0].sampled_on"),
    # Lenient number readings: "2,5" was billed as 25 gallons, "1_000" and full-width as 1000.
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), '"2,5"', "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), '"1_000"', "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), '"\uff11\uff10\uff10\uff10"', "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), '" 1000 "', "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), '"1e3"', "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), '"0x3E8"', "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), '"NaN"', "water_gallons"),
    ("preview", PREVIEW_GRAFTON, ("water_gallons",), '"Infinity"', "water_gallons"),
    ("preview", PREVIEW_STORM, ("parcel", "credit_percent"), '"1,5"', "parcel.credit_percent"),
    ("classify", CLASSIFY, ("results", 0, "fog"), '"4\u0661"', "results[0].fog"),
]


@pytest.mark.parametrize(
    ("command", "base", "path", "literal", "field"),
    ISSUE_CASES,
    ids=[f"{c}-{'.'.join(map(str, p))}={lit}" for c, _, p, lit, _ in ISSUE_CASES],
)
def test_each_fuzzed_input_that_once_crashed_exits_2_naming_its_field(
    command: str, base: dict[str, Any], path: tuple[str | int, ...], literal: str, field: str
) -> None:
    line = assert_clean_outcome(command, with_literal(base, path, literal))
    assert line is not None and line.startswith(f"{field}: "), line


def test_the_largest_bounded_quantities_still_rate_without_error() -> None:
    # 10^12 - 1 gallons at 10^6 mg/l BOD: pounds = 999,999,999,999 x 10^6 x 8.34 / 10^6
    # ~ 8.34e12 lb, a surcharge ~ 10^12 dollars: 15 digits before the cents, well inside
    # the 28-digit Decimal context and DynamoDB's 38 digits.
    doc = copy.deepcopy(PREVIEW_GRAFTON)
    doc["water_gallons"] = 999_999_999_999
    doc["strength"] = {
        "bod": 1_000_000,
        "tss": 1_000_000,
        "phosphorus": 1_000_000,
        "tkn": 1_000_000,
        "fog": 0,
    }
    assert assert_clean_outcome("preview", json.dumps(doc)) is None


# --- hypothesis: any leaf replaced by a hostile literal ---------------------------------------

HOSTILE_LITERALS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "true",
    "false",
    "null",
    "[]",
    "{}",
    '""',
    '"2,5"',
    '"1_000"',
    '"\uff11\uff10"',
    '"\u0661\u0662"',
    '" 12"',
    '"12\\n"',
    '"+12"',
    '"-0"',
    '"0x10"',
    '"1e5"',
    '"9999-12-01"',
    '"0001-01-01"',
    '"2026-02-30"',
    '"2026-07-01T00:00:00"',
    "1e400",
    "1e999999999",
    "-1e999999999",
    "1e-999999999",
    "1E+26",
    "123456789012345678901234567890123456789012",
    "0.1",
    "-0.0",
    '"' + "x" * 5000 + '"',
]


def _leaves(doc: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    if isinstance(doc, dict):
        return [p for k, v in doc.items() for p in [prefix + (k,), *_leaves(v, prefix + (k,))]]
    if isinstance(doc, list):
        return [p for i, v in enumerate(doc) for p in [prefix + (i,), *_leaves(v, prefix + (i,))]]
    return []


literals = st.one_of(
    st.sampled_from(HOSTILE_LITERALS),
    st.integers(min_value=-(10**45), max_value=10**45).map(str),
    st.from_regex(r"-?[0-9]{1,25}(\.[0-9]{1,25})?([eE][-+]?[0-9]{1,10})?", fullmatch=True),
    st.text(max_size=30).map(json.dumps),
    st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", fullmatch=True).map(json.dumps),
    st.dates().map(lambda d: json.dumps(d.isoformat())),
)


@st.composite
def mutated_documents(draw: st.DrawFn) -> tuple[str, str]:
    command, base = draw(st.sampled_from(BASES))
    doc = copy.deepcopy(base)
    action = draw(st.sampled_from(["replace", "replace", "replace", "drop", "add"]))
    paths = _leaves(doc)
    path = draw(st.sampled_from(paths))
    if action == "replace":
        return command, with_literal(doc, path, draw(literals))
    parent: Any = doc
    for step in path[:-1]:
        parent = parent[step]
    if action == "drop":
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
        return command, json.dumps(doc)
    if isinstance(parent, dict):
        parent[draw(st.text(min_size=1, max_size=12))] = 1
    return command, json.dumps(doc)


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_documents())
def test_any_mutated_document_exits_0_or_2_naming_a_field_never_a_traceback(case: tuple[str, str]) -> None:
    command, text = case
    assert_clean_outcome(command, text)


@settings(max_examples=100, deadline=None)
@given(command=st.sampled_from(["preview", "eru", "classify"]), text=st.text(max_size=200))
def test_any_text_at_all_exits_0_or_2(command: str, text: str) -> None:
    assert_clean_outcome(command, text)
