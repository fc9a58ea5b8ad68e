"""`sewerbill rates study BUDGET.yaml` (issue 35): the draft tariff and the impact report in a
folder; `sewerbill preview --proposed FILE` rates a scenario on the draft."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import typer
from typer.testing import CliRunner

from common.tariff_files import load_proposed_tariff
from common.tariffs import SullivanTariff
from sewerbill.cli import rates, whatif

ROOT = Path(__file__).resolve().parents[2]
SEWERBILL = Path(sys.executable).parent / "sewerbill"
BUDGETS = ROOT / "docs" / "rate-study"


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False)
    whatif.register(app)
    rates.register(app)
    return app


APP = _app()


def test_rates_study_writes_the_proposed_version_and_the_impact_report(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        APP, ["rates", "study", str(BUDGETS / "budget-sullivan-sewer.yaml"), "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.stderr
    draft = tmp_path / "sullivan-sewer" / "2026-01-01.yaml"
    assert f"proposed tariff: {draft}" in result.stdout
    text = draft.read_text(encoding="utf-8")
    assert text.startswith("# PROPOSED")
    proposed = load_proposed_tariff(draft)
    assert isinstance(proposed, SullivanTariff)
    assert proposed.status == "proposed" and proposed.annual_debt_retirement.value == Decimal("185000.00")
    report = json.loads((tmp_path / "impact-sullivan-sewer.json").read_text(encoding="utf-8"))
    assert report["proposed_tariff_file"] == str(draft)
    assert set(report["funds"]) == {"replacement", "om", "debt_retirement"}
    for fund in report["funds"].values():
        assert abs(Decimal(fund["residual"])) <= Decimal(fund["tolerance"])
        assert fund["within_tolerance"] is True
    assert set(report["classes"]) == {"residential", "commercial", "industrial"}
    assert report["largest_changes"][0]["account_id"] == "SU-0004"  # the creamery
    markdown = (tmp_path / "impact-sullivan-sewer.md").read_text(encoding="utf-8")
    for heading in ("## Rates", "## Recovery by fund", "## Revenue by class", "## Largest changes"):
        assert heading in markdown


def test_preview_rates_a_scenario_on_the_proposed_version(tmp_path: Path) -> None:
    runner = CliRunner()
    study = runner.invoke(
        APP, ["rates", "study", str(BUDGETS / "budget-sullivan-sewer.yaml"), "--out", str(tmp_path)]
    )
    assert study.exit_code == 0, study.stderr
    draft = tmp_path / "sullivan-sewer" / "2026-01-01.yaml"
    proposed = load_proposed_tariff(draft)
    assert isinstance(proposed, SullivanTariff)
    scenario = {
        "tenant": "sullivan-sewer",
        "period": {"start": "2026-01-01", "end": "2026-04-01"},
        "account": {"class": "residential", "meter_size": "5/8"},
        "water_gallons": 10000,
        "total_recs": "40",
    }
    on_draft = runner.invoke(APP, ["preview", "--proposed", str(draft), "-"], input=json.dumps(scenario))
    assert on_draft.exit_code == 0, on_draft.stderr
    bill = json.loads(on_draft.stdout)
    use = next(line for line in bill["lines"] if line["rule_id"] == "SU-USE")
    assert Decimal(use["rate"]) == proposed.use_rate_per_kgal.value != Decimal("7.25")
    assert bill["tariff_versions"] == ["sullivan-sewer@2026-01-01"]
    # without --proposed the same scenario is rated on the tariff in force (the draft is not)
    in_force = runner.invoke(APP, ["preview", "-"], input=json.dumps(scenario))
    use_now = next(line for line in json.loads(in_force.stdout)["lines"] if line["rule_id"] == "SU-USE")
    assert Decimal(use_now["rate"]) == Decimal("7.25")


def test_preview_refuses_an_adopted_file_as_proposed(tmp_path: Path) -> None:
    adopted = ROOT / "infra" / "tariffs" / "grafton-sewer" / "2025-01-01.yaml"
    result = CliRunner().invoke(APP, ["preview", "--proposed", str(adopted), "-"], input="{}")
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("--proposed:")
    assert "status" in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_bad_budget_is_one_line_naming_the_field(tmp_path: Path) -> None:
    budget = tmp_path / "budget.yaml"
    budget.write_text(
        "tenant: grafton-sewer\neffective_from: '2026-01-01'\nfunds: {om: '1.00'}\n", encoding="utf-8"
    )
    result = CliRunner().invoke(APP, ["rates", "study", str(budget), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.stderr.strip() == "funds.replacement: is required for grafton-sewer"
    assert not (tmp_path / "out").exists()


def test_the_installed_command_has_the_rates_group_and_reads_a_determinants_export(tmp_path: Path) -> None:
    """`sewerbill rates determinants` writes the export `rates study --determinants` reads."""
    export = subprocess.run(
        [str(SEWERBILL), "rates", "determinants", "pleasant-prairie-stormwater", "--start", "2025-01-01"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert export.returncode == 0, export.stderr
    rows = [json.loads(line) for line in export.stdout.splitlines()]
    assert {r["scenario"]["tenant"] for r in rows} == {"pleasant-prairie-stormwater"}
    path = tmp_path / "determinants.jsonl"
    path.write_text(export.stdout, encoding="utf-8")
    study = subprocess.run(
        [
            str(SEWERBILL),
            "rates",
            "study",
            str(BUDGETS / "budget-pleasant-prairie-stormwater.yaml"),
            "--determinants",
            str(path),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert study.returncode == 0, study.stderr
    assert "eru_rate: 6.00 -> " in study.stdout
    report = json.loads(
        (tmp_path / "out" / "impact-pleasant-prairie-stormwater.json").read_text(encoding="utf-8")
    )
    assert report["test_year"]["account_periods"] == len(rows)
    assert report["funds"]["om"]["within_tolerance"] is True
