"""Sampling's lab file under hostile files (issue 27): ``parse_lab_file`` then
``check_against_stored`` on an in-memory store, as ``ingest_lab_file`` runs them, and the
file's counts as it counts them (``import_counts``).

Nothing raises; the counts add up; every stored result keeps the README's rules (safe ids,
dates from the tenant's first tariff to today, analysed not before collected, a known
parameter, a finite non-negative value, printable text, no formula start); a file of
refused lines stores nothing; the same file again stores nothing new.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import date

import fuzz_cells as fc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from common.fields import DateWindow
from sampling.domain.intake import StoredSample, StoredValue, check_against_stored, import_counts
from sampling.domain.lab_files import PARAMETERS, LabRow, parse_lab_file
from sampling.domain.samples import AccountInfo
from sampling.domain.strength import CLASSIFIED_TENANTS

TODAY = date(2025, 2, 3)
FIRST = date(2024, 1, 1)
WINDOWS = {t: DateWindow(FIRST, TODAY) for t in CLASSIFIED_TENANTS}
HEADER = (
    "tenant",
    "sample_id",
    "account_id",
    "collected_on",
    "parameter",
    "value",
    "units",
    "analysed_on",
    "lab",
)
TENANTS = sorted(CLASSIFIED_TENANTS)
EXAMPLES = fc.examples(60)


class MemorySampling:
    """The part of ``SamplingRepository`` the intake's check and store use."""

    def __init__(self) -> None:
        self.known = {(t, a) for t in TENANTS for a in ("PP-1", "PP-2")}
        self.samples: dict[tuple[str, str], StoredSample] = {}
        self.values: dict[tuple[str, str, str, str], StoredValue] = {}
        self.rows: list[LabRow] = []

    def accounts(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], AccountInfo]:
        return {k: AccountInfo(k[0], k[1], "SP-1") for k in keys if k in self.known}

    def stored_samples(self, keys: Collection[tuple[str, str]]) -> dict[tuple[str, str], StoredSample]:
        return {k: self.samples[k] for k in keys if k in self.samples}

    def stored_values(
        self, keys: Collection[tuple[str, str, str, str]]
    ) -> dict[tuple[str, str, str, str], StoredValue]:
        return {k: self.values[k] for k in keys if k in self.values}

    def record_results(self, rows: Sequence[LabRow], file_id: str | None = None) -> None:
        for r in rows:
            self.samples.setdefault(
                (r.tenant, r.sample_id),
                StoredSample(r.account_id, r.collected_on, r.kind.value, r.resample_of),
            )
            self.values[(r.tenant, r.account_id, r.sample_id, r.parameter)] = StoredValue(r.value, file_id)
            self.rows.append(r)

    def state(self) -> tuple[object, ...]:
        return (dict(self.samples), dict(self.values), len(self.rows))


def take_in(repo: MemorySampling, drawn: fc.Drawn, file_id: str, kind: str) -> int:
    """The intake's steps for one file; the lines it took in."""
    parsed = parse_lab_file(drawn.data, today=TODAY, tenants=CLASSIFIED_TENANTS, windows=WINDOWS)
    checked = check_against_stored(parsed.rows, repo, file_id=file_id)
    repo.record_results(checked.new, file_id)
    counts = import_counts(parsed.lines, checked, parsed.repeated, [*parsed.rejected, *checked.rejected])
    fc.TAKEN[kind] += counts.accepted
    if drawn.plain:
        assert counts.lines == len(drawn.rows), (counts, drawn.rows)
    return len(checked.new)


def results_keep_the_rules(repo: MemorySampling) -> None:
    for r in repo.rows:
        assert r.tenant in CLASSIFIED_TENANTS and fc.safe_id(r.sample_id) and fc.safe_id(r.account_id), r
        assert fc.happened(r.collected_on, FIRST, TODAY) and fc.happened(r.analysed_on, FIRST, TODAY), r
        assert r.collected_on <= r.analysed_on and r.parameter in PARAMETERS, r
        assert r.value.is_finite() and r.value >= 0, r
        for text in (r.lab, r.method, r.sampling_point, r.collector, r.custody, r.lab_invoice):
            assert text is None or fc.printable(text), r


@st.composite
def lab_row(draw: st.DrawFn) -> tuple[str, ...]:
    collected = draw(st.dates(date(2023, 12, 1), TODAY))
    analysed = collected + (TODAY - collected) * draw(st.sampled_from((0, 0, 1))) // 2
    parameter = draw(st.sampled_from(PARAMETERS))
    return (
        draw(st.sampled_from(TENANTS)),
        draw(fc.ids("S", 3)),
        draw(fc.ids("PP-", 3)),
        collected.isoformat(),
        draw(st.sampled_from((parameter, parameter.upper()))),
        str(draw(st.decimals(0, 14 if parameter == "ph" else 900, places=1))),
        "su" if parameter == "ph" else draw(st.sampled_from(("mg/l", "mg/L", "ppm"))),
        analysed.isoformat(),
        draw(st.sampled_from(("Acme", "Lab, Inc.", "Ünion Labs"))),
    )


REFUSE_LAB = fc.refuse_with(
    {
        0: ("=pleasant-prairie-sewer", "nowhere-sewer", ""),
        1: fc.UNSAFE_IDS,
        2: fc.UNSAFE_IDS,
        3: ("1900-01-01", "2099-01-01", "2025-02-30", "", "2023-12-31"),
        4: ("cod", "=bod", ""),
        5: ("-1", "1e400", "NaN", "9" * 40, "+5", "@5", ""),
        8: ("=HYPERLINK(1)", "@lab", "-lab", "\t=x"),
    }
)


@EXAMPLES
@given(fc.csv_file(HEADER, lab_row(), max_rows=10))
def test_a_lab_file_never_raises_and_keeps_the_rules(drawn: fc.Drawn) -> None:
    fc.TRIED["sampling lab file"] += 1
    repo = MemorySampling()
    take_in(repo, drawn, "f1", "sampling lab file")
    results_keep_the_rules(repo)
    before = repo.state()
    assert take_in(repo, drawn, "f2", "sampling lab file") == 0  # nothing new the second time
    assert repo.state() == before


@EXAMPLES
@given(fc.csv_file(HEADER, lab_row(), all_mutated=True, refusing=REFUSE_LAB))
def test_a_lab_file_of_refused_lines_stores_nothing(drawn: fc.Drawn) -> None:
    fc.TRIED["sampling lab file refused"] += 1
    repo = MemorySampling()
    repo.record_results(
        parse_lab_file(
            (
                ",".join(HEADER)
                + "\npleasant-prairie-sewer,S1,PP-1,2025-01-02,bod,220,mg/l,2025-01-03,Acme\n"
            ).encode(),
            today=TODAY,
            tenants=CLASSIFIED_TENANTS,
            windows=WINDOWS,
        ).rows,
        "f0",
    )
    before = repo.state()
    assert take_in(repo, drawn, "f1", "sampling lab file refused") == 0
    assert repo.state() == before


@pytest.mark.parametrize("column", range(len(HEADER)), ids=HEADER)
@fc.examples(6)
@given(data=st.data())
def test_no_lab_column_keeps_a_control_character_or_a_formula(column: int, data: st.DataObject) -> None:
    fc.TRIED["sampling lab file spoiled column"] += 1
    drawn = data.draw(fc.csv_file(HEADER, lab_row(), all_mutated=True, refusing=fc.spoil(column)))
    repo = MemorySampling()
    take_in(repo, drawn, "f1", "sampling lab file spoiled column")
    results_keep_the_rules(repo)
