"""`sewerbill rates study BUDGET.yaml`: the board's rate study (issue 35).

Reads the budget (docs/rate-study/budget-<tenant>.yaml), the test year's billing
determinants (a determinants export, ``--determinants FILE.jsonl``, or by default the demo
utility's twelve months before the budget's effective date), and writes to ``--out``:

- ``<tenant>/<effective date>.yaml``: the draft tariff, the next effective-dated version,
  ``status: proposed`` (the production loader refuses it; ``sewerbill preview --proposed
  FILE`` rates any scenario on it);
- ``impact-<tenant>.json`` and ``impact-<tenant>.md``: each fund's recovery and residual,
  each class's revenue before and after, a typical bill per class, the largest changes.

`sewerbill rates determinants TENANT` writes the demo's determinants export (JSON lines:
``{"account_id", "class", "scenario"}``, ``scenario`` a CONTRACTS.md preview document).
Exit 2 on bad input with one line naming the field.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
import yaml

from billing.app.ratestudy import run_rate_study
from billing.domain.ratestudy import Budget, Usage, parse_budget
from billing.domain.rating.scenario import parse_scenario
from common.dates import add_months
from common.errors import FieldError
from common.tariff_files import default_tariffs_dir, load_tariff_book
from common.tariffs import Tariff, TariffBook, TariffError
from sewerbill.cli.compose import eru_of

BAD_INPUT = 2
rates_app = typer.Typer(no_args_is_help=True, help="The board's rate study: rates that recover a budget.")


def register(app: typer.Typer) -> None:
    app.add_typer(rates_app, name="rates")


def _fail(message: str, code: int = BAD_INPUT) -> NoReturn:
    sys.stderr.write(" ".join(message.split()) + "\n")
    raise typer.Exit(code)


# --- adapters of the use case's ports ----------------------------------------------------------


class ExportDeterminants:
    """A determinants export: JSON lines of ``{"account_id", "class", "scenario"}``."""

    def __init__(self, lines: Iterable[str], book: TariffBook, source: str) -> None:
        self.lines, self.book, self.source = lines, book, source

    def usages(self, tenant: str) -> Iterator[Usage]:
        for n, text in enumerate(self.lines, start=1):
            if not text.strip():
                continue
            where = f"{self.source} line {n}"
            try:
                row = json.loads(text, parse_float=Decimal)
            except json.JSONDecodeError as exc:
                raise FieldError(where, f"not valid JSON: {exc.msg}") from None
            if not isinstance(row, dict) or not {"account_id", "class", "scenario"} <= set(row):
                raise FieldError(where, "must be an object with account_id, class and scenario")
            scenario = row["scenario"]
            if not isinstance(scenario, dict) or scenario.get("tenant") != tenant:
                continue
            try:
                rating = parse_scenario(scenario, self.book, eru_of)
            except FieldError as exc:
                raise FieldError(f"{where}: scenario.{exc.field}", exc.message) from None
            yield Usage(str(row["account_id"]), str(row["class"]), rating)


def demo_rows(
    tenant: str, book: TariffBook, budget_from: date, size: int, seed: int
) -> Iterator[dict[str, Any]]:
    """The demo utility's determinants export of the twelve months before ``budget_from``."""
    from sewerbill.demo.determinants import demo_determinants

    return demo_determinants(tenant, book, size=size, seed=seed, start=add_months(budget_from, -12))


class FolderOutput:
    """The draft tariff and the report written under one folder."""

    def __init__(self, out: Path) -> None:
        self.out = out

    def write_proposed(self, tariff: Tariff) -> str:
        path = self.out / tariff.tenant / f"{tariff.effective_from.isoformat()}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(tariff_yaml(tariff), encoding="utf-8")
        return str(path)

    def write_report(self, tenant: str, report: dict[str, Any]) -> str:
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / f"impact-{tenant}.json"
        path.write_text(json.dumps(plain(report), indent=2) + "\n", encoding="utf-8")
        (self.out / f"impact-{tenant}.md").write_text(report_markdown(report), encoding="utf-8")
        return str(path)


def tariff_yaml(tariff: Tariff) -> str:
    """The tariff as a file of ``infra/tariffs`` (amounts as decimal strings)."""
    header = (
        f"# PROPOSED {tariff.name} rates, effective {tariff.effective_from.isoformat()}: a draft of the\n"
        "# board's rate study (sewerbill rates study). Not billed on: the production loader refuses a\n"
        "# proposed version. To adopt it by resolution, set status: adopted, copy it into\n"
        "# infra/tariffs/<tenant>/ and set effective_until on the version it follows.\n"
    )
    document = tariff.model_dump(mode="json", exclude_none=True)
    return header + yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


def plain(value: Any) -> Any:
    """JSON-ready: Decimals and dates as strings."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, Decimal | date):
        return str(value) if isinstance(value, date) else _number(value)
    return value


def _number(value: Decimal) -> str:
    """Money and counts to the cent, rates as they are (a long fraction to 6 places)."""
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -6:
        return str(value.quantize(Decimal("0.000001")))
    return str(value)


def _money(value: Any) -> str:
    return "" if value is None else f"{Decimal(value).quantize(Decimal('0.01')):,}"


def report_markdown(report: dict[str, Any]) -> str:
    """The impact report for the board, as Markdown."""
    year = report["test_year"]
    lines = [
        f"# Rate study: {report['tenant']}, proposed for {report['effective_from']}",
        "",
        f"Test year {year['start']} to {year['end']} ({year['accounts']} accounts, "
        f"{year['account_periods']} account-periods), re-rated on {report['tariff_before']} and on "
        f"{report['tariff_after']}. Draft tariff: `{report.get('proposed_tariff_file', '')}`.",
        "",
        "## Rates",
        "",
        "| setting | before | proposed |",
        "|---|---:|---:|",
        *(f"| {r['setting']} | {r['before']} | {r['after']} |" for r in report["rates"]),
        "",
        "## Recovery by fund (annual)",
        "",
        "| fund | budget | other revenue | rates must recover | recovered | residual | tolerance |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {fund} | {_money(f['budget'])} | {_money(f['other_revenue'])} | {_money(f['requirement'])} | "
            f"{_money(f['recovered'])} | {_money(f['residual'])} | {_money(f['tolerance'])} |"
            for fund, f in report["funds"].items()
        ),
        "",
        "Tolerance: what one unit of each rate's published precision moves the fund's revenue.",
        "",
        "## Revenue by class (annual) and a typical customer's bill per period",
        "",
        "| class | accounts | before | after | change % | typical use | typical bill before | after |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, c in report["classes"].items():
        typical = c["typical_customer"] or {}
        lines.append(
            f"| {name} | {c['accounts']} | {_money(c['revenue_before'])} | {_money(c['revenue_after'])} | "
            f"{c['change_percent']} | {typical.get('use_per_period', '')} {typical.get('use_unit', '')} | "
            f"{_money(typical.get('bill_before'))} | {_money(typical.get('bill_after'))} |"
        )
    costed = {n: c for n, c in report["classes"].items() if "omr_cost_of_service" in c}
    if costed:
        lines += [
            "",
            "Operation, maintenance and replacement by class (NR 128.13: in proportion to flow and loadings):",
            "",
            "| class | cost of its flow and loadings | paid on the proposed rates |",
            "|---|---:|---:|",
            *(
                f"| {n} | {_money(c['omr_cost_of_service'])} | {_money(c['omr_revenue_after'])} |"
                for n, c in costed.items()
            ),
        ]
    lines += [
        "",
        "## Largest changes by account (test year)",
        "",
        "| account | class | before | after | change | % |",
        "|---|---|---:|---:|---:|---:|",
        *(
            f"| {a['account_id']} | {a['class']} | {_money(a['before'])} | {_money(a['after'])} | "
            f"{_money(a['change'])} | {a['change_percent']} |"
            for a in report["largest_changes"]
        ),
        "",
    ]
    return "\n".join(lines)


# --- the commands ------------------------------------------------------------------------------


def read_budget(path: Path) -> Budget:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        _fail(f"BUDGET: cannot read {path}: {exc}")
    except yaml.YAMLError as exc:
        _fail(f"BUDGET: not valid YAML: {exc}")
    return parse_budget(raw)


@rates_app.command("study")
def study_command(
    budget_file: Annotated[Path, typer.Argument(metavar="BUDGET.yaml", help="The budget of one tenant.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the draft tariff and the report.")] = Path(
        "rate-study"
    ),
    determinants: Annotated[
        Path | None,
        typer.Option("--determinants", help="A determinants export (JSON lines); default: the demo year."),
    ] = None,
    demo_size: Annotated[int, typer.Option("--demo-size", help="The demo utility's accounts in all.")] = 300,
    demo_seed: Annotated[int, typer.Option("--demo-seed", help="The demo utility's seed.")] = 1,
) -> None:
    """Rates that recover BUDGET.yaml; writes the proposed tariff and the impact report."""
    try:
        book = load_tariff_book(default_tariffs_dir())
    except TariffError as exc:
        _fail(f"tariffs: {exc}", code=1)
    try:
        budget = read_budget(budget_file)
        if determinants is None:
            lines: Iterable[str] = (
                json.dumps(row)
                for row in demo_rows(budget.tenant, book, budget.effective_from, demo_size, demo_seed)
            )
            source = "demo"
        else:
            try:
                lines = determinants.read_text(encoding="utf-8").splitlines()
            except OSError as exc:
                _fail(f"--determinants: cannot read {determinants}: {exc}")
            source = str(determinants)
        outcome = run_rate_study(budget, book, ExportDeterminants(lines, book, source), FolderOutput(out))
    except FieldError as exc:
        _fail(str(exc))
    except (TariffError, ValueError) as exc:
        _fail(str(exc))
    typer.echo(f"proposed tariff: {outcome.proposed_at}")
    typer.echo(f"impact report:   {outcome.report_at} (and .md)")
    for r in outcome.study.rates:
        if r.before != r.after:
            typer.echo(f"  {r.setting}: {r.before} -> {r.after}")
    for fund, f in outcome.report["funds"].items():
        typer.echo(
            f"  fund {fund}: recovers {_money(f['recovered'])} of {_money(f['requirement'])} "
            f"(residual {_money(f['residual'])}, tolerance {_money(f['tolerance'])})"
        )


@rates_app.command("determinants")
def determinants_command(
    tenant: Annotated[
        str,
        typer.Argument(
            help="pleasant-prairie-stormwater, pleasant-prairie-sewer, grafton-sewer or sullivan-sewer"
        ),
    ],
    start: Annotated[str, typer.Option("--start", help="First day of the twelve months (YYYY-MM-DD).")],
    demo_size: Annotated[int, typer.Option("--demo-size")] = 300,
    demo_seed: Annotated[int, typer.Option("--demo-seed")] = 1,
) -> None:
    """Write the demo utility's determinants export (JSON lines) to stdout."""
    try:
        first = date.fromisoformat(start)
    except ValueError:
        _fail(f"--start: not a date (YYYY-MM-DD): {start!r}")
    book = load_tariff_book(default_tariffs_dir())
    try:
        for row in demo_rows(tenant, book, add_months(first, 12), demo_size, demo_seed):
            sys.stdout.write(json.dumps(row) + "\n")
    except (KeyError, ValueError) as exc:
        _fail(f"tenant: {exc}")
