"""The demo utility generator (issue 32): seeded bytes, the size option, the mixes it holds,
dates from any start and within each tenant's tariffs, and the CLI's folder layout."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from datetime import date
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from common.tariff_files import default_tariffs_dir, load_tariff_book
from common.tariffs import TariffBook
from sewerbill.cli import demogen
from sewerbill.demo.generator import DEFAULT_SIZE, GR, PP, PPW, SU, TENANTS, DemoUtility, generate

START = date(2026, 12, 1)
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


@pytest.fixture(scope="module")
def book() -> TariffBook:
    return load_tariff_book(default_tariffs_dir())


@pytest.fixture(scope="module")
def demo(book: TariffBook) -> DemoUtility:
    return generate(DEFAULT_SIZE, 1, START, 12, book)


def cli_app() -> typer.Typer:
    app = typer.Typer(add_completion=False)
    demogen.register(app)
    return app


def digest(d: DemoUtility) -> str:
    h = hashlib.sha256()
    for f in d.files:
        h.update(f"{f.on}|{f.key}|".encode())
        for chunk in f.chunks():
            h.update(chunk)
    for intent in d.payment_intents():
        h.update(",".join(intent.row()).encode())
    for call in d.api_calls:
        h.update(json.dumps(call.to_json(), sort_keys=True).encode())
    h.update(json.dumps(d.expected, sort_keys=True).encode())
    return h.hexdigest()


def rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode())))


def test_the_same_seed_gives_the_same_bytes_and_another_seed_others(
    demo: DemoUtility, book: TariffBook
) -> None:
    again = generate(DEFAULT_SIZE, 1, START, 12, book)
    other = generate(DEFAULT_SIZE, 2, START, 12, book)
    assert [(f.on, f.key) for f in again.files] == [(f.on, f.key) for f in demo.files]
    assert digest(again) == digest(demo)
    assert digest(other) != digest(demo)
    # a file generated twice from one demo is the same too (rows are rebuilt, not consumed)
    first = demo.files[0]
    assert first.data() == first.data()


def test_size_is_the_number_of_accounts_in_all(book: TariffBook) -> None:
    small = generate(120, 3, START, 3, book)
    larger = generate(1000, 3, START, 3, book)
    for d, size in ((small, 120), (larger, 1000)):
        assert d.expected["accounts"]["total"] == size
        assert sum(d.expected["accounts"][t] for t in TENANTS) == size
        accounts = [r for f in d.files if f.key.startswith("accounts/demo-2") for r in rows(f.data())]
        assert len(accounts) + sum(d.expected["opened_during_year"].values()) == size
    assert larger.expected["bills_total"][PP] > 5 * small.expected["bills_total"][PP]
    with pytest.raises(ValueError, match="size"):
        generate(10, 3, START, 3, book)


def test_every_kind_of_the_mix_is_there_at_the_default_size(demo: DemoUtility) -> None:
    kinds = demo.expected["accounts_by_kind"]
    for kind in (
        "residential",
        "residential_lm",
        "multifamily",
        "apartments",
        "commercial",
        "industrial",
        "satellite",
    ):
        assert kinds[PP].get(kind, 0) >= 1, kind
    for kind in (
        "residential",
        "unmetered",
        "unmetered_commercial",
        "commercial",
        "industrial",
        "septage_hauler",
    ):
        assert kinds[GR].get(kind, 0) >= 1, kind
    for kind in ("residential", "duplex", "commercial", "industrial"):
        assert kinds[SU].get(kind, 0) >= 1, kind
    for kind in ("residential", "nonresidential", "farmstead", "vacant"):
        assert kinds[PPW].get(kind, 0) >= 1, kind
    parcels = demo.expected["parcels"]
    for kind in ("with_woods", "with_pond", "farmstead", "agricultural", "right_of_way", "rented"):
        assert parcels.get(kind, 0) >= 1, kind
    assert demo.expected["unmetered"][GR] >= 2
    assert demo.expected["septage"]["permits"] == 2 and demo.expected["septage"]["disposals"] >= 12
    assert all(demo.expected[k][t] >= 1 for k in ("opened_during_year", "closed_during_year") for t in (PP,))
    accounts = [r for f in demo.files if f.kind == "accounts" for r in rows(f.data())]
    rentals = [r for r in accounts if r["owner_name"] and r["owner_name"] != r["bill_recipient_name"]]
    assert {r["tenant"] for r in rentals} >= {PP, PPW, GR}
    assert all(r["bill_recipient_name"] == r["name"] for r in rentals)
    kinds_paid = {k for t in TENANTS for k in demo.expected["payment_intents"][t]}
    assert {"on_time", "late", "partial", "missing", "channel:lockbox", "channel:portal"} <= kinds_paid


def test_the_demo_identities_keep_their_ids_and_the_customer_parcel_is_a_stormwater_parcel(
    demo: DemoUtility,
) -> None:
    accounts = {
        (r["tenant"], r["account_id"]): r for f in demo.files if f.kind == "accounts" for r in rows(f.data())
    }
    ada, ben = accounts[(PP, "PP-0001")], accounts[(PP, "PP-0002")]
    assert (ada["name"], ada["email"], ben["name"]) == ("Ada Demo", "ada@example.org", "Ben Demo")
    ada_storm = accounts[(PPW, "PPW-0001")]
    assert (ada_storm["parcel_id"], ada_storm["owner_name"], ada_storm["bill_recipient_name"]) == (
        "PP-P-0001",
        "Olive Owner",
        "Ada Demo",
    )
    parcels = {
        r["parcel_id"]: r for f in demo.files if f.kind == "gis" and f.format == "csv" for r in rows(f.data())
    }
    assert parcels["PP-P-0001"]["owner_name"] == "Olive Owner"
    storm = [a for (t, _), a in accounts.items() if t == PPW]
    assert all(a["parcel_id"] in parcels for a in storm)  # every stormwater account has its parcel


@pytest.mark.parametrize("start", [date(2024, 11, 20), date(2027, 3, 17)])
def test_any_start_date_and_nothing_before_a_tenants_first_tariff(book: TariffBook, start: date) -> None:
    d = generate(80, 5, start, 6, book)
    first = {t: book.first_effective(t) for t in TENANTS}
    for f in d.files:
        assert f.on >= start
        for row in rows(f.data()) if f.format == "csv" else []:
            for column, value in row.items():
                if DATE.match(value):
                    day = date.fromisoformat(value[:10])
                    assert day <= f.on, (f.key, column, value)
                    if column != "collected_on" and column != "analysed_on":
                        assert day >= first[row["tenant"]], (f.key, column, value)
    for call in d.api_calls:
        assert call.on >= max(start, first[call.tenant])
    for intent in d.payment_intents():
        assert intent.period_start >= first[intent.tenant]


def test_the_cli_writes_the_files_by_day_with_an_index_and_expected_json(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    app = cli_app()
    result = CliRunner().invoke(
        app,
        [
            "demo",
            "generate",
            "--size",
            "60",
            "--seed",
            "4",
            "--start",
            "2026-12-01",
            "--months",
            "3",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    expected = json.loads((out / "expected.json").read_text())
    assert expected["accounts"]["total"] == 60 and expected["generator"]["seed"] == 4
    index = list(csv.DictReader((out / "index.csv").open()))
    assert index and all((out / r["path"]).is_file() for r in index)
    assert all(r["path"] == f"{r['on']}/{r['key']}" for r in index)
    assert any(r["key"].endswith(".geojson") for r in index)
    intents = list(csv.DictReader((out / "payment-intents.csv").open()))
    assert len(intents) == sum(sum(v.values()) for v in expected["bills_per_period"].values())
    calls = [json.loads(line) for line in (out / "api-calls.jsonl").read_text().splitlines()]
    assert {c["purpose"] for c in calls} >= {"GR-SEPTAGE-PERMIT", "GR-SEPTAGE-CHARGE"}
    bad = CliRunner().invoke(app, ["demo", "generate", "--start", "12/01/2026", "--out", str(out)])
    assert bad.exit_code == 2 and "YYYY-MM-DD" in bad.output


def test_expected_reads_and_files_agree_with_the_files(demo: DemoUtility) -> None:
    reads: dict[str, dict[str, int]] = {t: {} for t in (PP, GR, SU)}
    for f in demo.files:
        if f.kind == "reads":
            for r in rows(f.data()):
                reads[r["tenant"]][r["read_on"]] = reads[r["tenant"]].get(r["read_on"], 0) + 1
    assert reads == demo.expected["reads_per_period"]
    # every metered meter is read at every period end but PP-0003's missed one
    [missed] = demo.expected["estimated"]
    pp_reads = [r for f in demo.files if f.kind == "reads" for r in rows(f.data()) if r["tenant"] == PP]
    assert not [r for r in pp_reads if r["meter_id"] == "PP-0003-M1" and r["read_on"] == missed["period_end"]]
    assert [
        r for r in pp_reads if r["meter_id"] == "PP-0003-M1" and r["read_on"] == missed["replaced_by_read_on"]
    ]
    assert demo.expected["files"] == {
        kind: sum(1 for f in demo.files if f.kind == kind) for kind in demo.expected["files"]
    }
