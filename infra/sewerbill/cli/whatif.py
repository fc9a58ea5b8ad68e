"""`sewerbill preview | eru | classify`: the staff what-if commands (CONTRACTS.md).

JSON in (a file path, or `-` for stdin), JSON out on stdout with decimal strings. Exit 0 on
success; exit 2 on bad input with ONE line on stderr naming the field, never a traceback
(invalid JSON and unreadable files included). The commands run the same domain code as
the services: billing's rating engine, the stormwater ERU determination, the sampling
strength classification. This module only reads, parses, renders and maps errors.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from billing.domain.rating import RatingEngine
from billing.domain.rating.output import bill_to_contract
from billing.domain.rating.scenario import parcel_document, parse_credit_percent, parse_scenario
from common.errors import FieldError
from common.tariff_files import default_tariffs_dir, load_proposed_tariff, load_tariff_book
from common.tariffs import (
    GraftonTariff,
    PPSewerTariff,
    PPStormwaterTariff,
    SullivanTariff,
    TariffBook,
    TariffError,
    TariffNotInForce,
)
from sampling.domain.parsing import parse_classify_request
from sampling.domain.strength import StrengthLimits, classify
from sampling.tariffs import limits_from_tariff
from sewerbill.cli.compose import eru_of
from stormwater.contract import determine

BAD_INPUT = 2
STORMWATER = "pleasant-prairie-stormwater"
ERU_FIELDS = ("tenant", "parcel")

InputFile = Annotated[str, typer.Argument(help="JSON file, or - for stdin", show_default=False)]


class BadInput(Exception):
    """Bad input for a command: one line naming the field (or the file)."""


def _fail(message: str, code: int = BAD_INPUT) -> NoReturn:
    sys.stderr.write(" ".join(message.split()) + "\n")
    raise typer.Exit(code)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number (JSON has no NaN or Infinity)")


def read_json(source: str, argument: str) -> Any:
    """The JSON document of a file path or `-` (stdin), numbers as Decimal (never float)."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{argument}: no such file: {source}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{argument}: cannot read {source}: {exc}") from None
    try:
        return json.loads(text, parse_float=Decimal, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise BadInput(
            f"{argument}: not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise BadInput(f"{argument}: not valid JSON: {exc}") from None


def _book() -> TariffBook:
    try:
        return load_tariff_book(default_tariffs_dir())
    except TariffError as exc:
        _fail(f"tariffs: {exc}", code=1)


def _proposed_book(proposed: Path) -> TariffBook:
    """The tariffs with a rate study's proposed version as its tenant's newest (preview only)."""
    try:
        return _book().with_proposed(load_proposed_tariff(proposed))
    except TariffError as exc:
        _fail(f"--proposed: {exc}")


def _run(
    argument: str, source: str, command: Callable[[Any, TariffBook], Any], proposed: Path | None = None
) -> None:
    try:
        document = read_json(source, argument)
        result = command(document, _book() if proposed is None else _proposed_book(proposed))
    except BadInput as exc:
        _fail(str(exc))
    except FieldError as exc:
        _fail(f"{exc.field}: {exc.message}")
    except TariffError as exc:
        _fail(str(exc) if exc.field else f"input: {exc}")
    except RecursionError:
        _fail(f"{argument}: the document is nested too deeply")
    sys.stdout.write(json.dumps(result, indent=2) + "\n")


# --- the three commands (pure functions of the document and the tariffs) ------------------


def preview_document(document: Any, book: TariffBook) -> dict[str, Any]:
    """CONTRACTS.md `preview`: the rated bill of one scenario."""
    rating_input = parse_scenario(document, book, eru_of)
    return bill_to_contract(RatingEngine(book).rate(rating_input))


def eru_document(document: Any, book: TariffBook) -> dict[str, Any]:
    """CONTRACTS.md `eru`: the stormwater service's determination under the newest tariff."""
    if not isinstance(document, dict):
        raise BadInput("input: must be a JSON object with tenant and parcel")
    for key in document:
        if key not in ERU_FIELDS:
            raise BadInput(f"{key}: unknown field (expected one of {', '.join(ERU_FIELDS)})")
    tenant = document.get("tenant")
    if tenant is None:
        raise BadInput("tenant: is required")
    if tenant != STORMWATER:
        raise BadInput(f"tenant: {tenant!r} has no ERUs (only {STORMWATER})")
    if document.get("parcel") is None:
        raise BadInput("parcel: is required")
    parcel = parcel_document(document["parcel"])
    tariff = book.versions(STORMWATER)[-1]
    assert isinstance(tariff, PPStormwaterTariff)
    determination = determine(parcel, tariff)
    parse_credit_percent(parcel.get("credit_percent"), parcel["use"], tariff.credit.cap_percent.value)
    return determination.to_contract_dict()


def classify_document(document: Any, book: TariffBook) -> dict[str, object]:
    """CONTRACTS.md `classify`: the sampling service's classification, with the tariff's limits."""
    request = parse_classify_request(document)
    try:
        tariff = book.in_force(request.tenant, request.as_of)
    except TariffNotInForce:  # as_of before the first version: its limits are the first known
        tariff = book.versions(request.tenant)[0]
    limits: StrengthLimits | None = None
    if isinstance(tariff, PPSewerTariff | GraftonTariff | SullivanTariff):
        limits = limits_from_tariff(tariff)
    return classify(request.tenant, request.results, request.as_of, limits).to_contract_dict()


def register(app: typer.Typer) -> None:
    @app.command()
    def preview(
        scenario: InputFile,
        proposed: Annotated[
            Path | None,
            typer.Option("--proposed", help="Rate on a proposed tariff file (sewerbill rates study)."),
        ] = None,
    ) -> None:
        """What would this bill be: rate one scenario (CONTRACTS.md)."""
        _run("SCENARIO", scenario, preview_document, proposed)

    @app.command()
    def eru(parcel: InputFile) -> None:
        """Runoff and ERUs of one parcel (PP-CWU-ERU, TR-55)."""
        _run("PARCEL", parcel, eru_document)

    @app.command(name="classify")
    def classify_command(results: InputFile) -> None:
        """A user's strength category over time (PP-SEW-CAT-*, GR-*, SU-*)."""
        _run("CLASSIFY", results, classify_document)
