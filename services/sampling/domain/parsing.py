"""Parse and validate untrusted input (CLI JSON, API bodies) into sampling domain objects.

Every error is an :class:`InvalidInput` (or :class:`UnknownTenant`) naming the field by
dotted path, e.g. ``results[1].sampled_on``. Numbers are turned into ``Decimal`` without
float arithmetic: ints exactly, Decimals as they are, decimal strings parsed, and a float
(should one arrive despite ``parse_float=Decimal``) through its shortest ``str`` form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from common.values import NotADate, NotADecimal, to_date, to_decimal
from sampling.domain.errors import InvalidInput, UnknownTenant
from sampling.domain.strength import CLASSIFIED_TENANTS, LabResult, Parameter

RESULT_FIELDS: tuple[str, ...] = ("sampled_on", *(p.value for p in Parameter))
CLASSIFY_FIELDS: tuple[str, ...] = ("tenant", "as_of", "results")


def parse_date(value: object, field_path: str) -> date:
    """An ISO ``YYYY-MM-DD`` string (or a ``date``) as a date."""
    try:
        return to_date(value)
    except NotADate as exc:
        raise InvalidInput(field_path, str(exc)) from None


def parse_concentration(value: object, field_path: str) -> Decimal:
    """A non-negative finite concentration (mg/l) as a Decimal."""
    try:
        number = to_decimal(value)
    except NotADecimal as exc:
        raise InvalidInput(field_path, str(exc)) from None
    if number < 0:
        raise InvalidInput(field_path, f"concentration {number} mg/l must not be negative")
    return number


def _check_fields(raw: Mapping[object, object], allowed: tuple[str, ...], prefix: str) -> None:
    for key in raw:
        if key not in allowed:
            where = f"{prefix}.{key}" if prefix else str(key)
            raise InvalidInput(where, f"unknown field (expected one of {', '.join(allowed)})")


def parse_result(raw: object, field_path: str) -> LabResult:
    """One lab result object: ``sampled_on`` (required) and concentrations (mg/l).

    A concentration given as ``null`` counts as not analysed; at least one is required.
    """
    if not isinstance(raw, Mapping):
        raise InvalidInput(field_path, "must be an object with sampled_on and concentrations")
    _check_fields(raw, RESULT_FIELDS, field_path)
    if "sampled_on" not in raw:
        raise InvalidInput(f"{field_path}.sampled_on", "is required")
    sampled_on = parse_date(raw["sampled_on"], f"{field_path}.sampled_on")
    concentrations: dict[str, Decimal] = {}
    for parameter in Parameter:
        value = raw.get(parameter.value)
        if value is not None:
            concentrations[parameter.value] = parse_concentration(value, f"{field_path}.{parameter.value}")
    if not concentrations:
        raise InvalidInput(field_path, f"needs at least one concentration ({', '.join(Parameter)})")
    return LabResult(
        sampled_on=sampled_on,
        bod=concentrations.get("bod"),
        tss=concentrations.get("tss"),
        phosphorus=concentrations.get("phosphorus"),
        tkn=concentrations.get("tkn"),
        fog=concentrations.get("fog"),
    )


def parse_results(raw: object, field_path: str = "results") -> list[LabResult]:
    """A JSON list of lab results; errors name e.g. ``results[1].sampled_on``."""
    if not isinstance(raw, list):
        raise InvalidInput(field_path, "must be a list of lab results")
    return [parse_result(item, f"{field_path}[{index}]") for index, item in enumerate(raw)]


def parse_tenant(raw: object) -> str:
    """A tenant with strength categories, else :class:`UnknownTenant` (field ``tenant``)."""
    if not isinstance(raw, str) or raw not in CLASSIFIED_TENANTS:
        raise UnknownTenant(raw, CLASSIFIED_TENANTS)
    return raw


@dataclass(frozen=True)
class ClassifyRequest:
    """A validated ``sewerbill classify`` input (CONTRACTS.md)."""

    tenant: str
    as_of: date
    results: tuple[LabResult, ...]


def parse_classify_request(raw: object) -> ClassifyRequest:
    """Validate ``{"tenant", "as_of", "results"}``; ``tenant`` and ``as_of`` are required.

    ``results`` may be omitted or empty (the user is then in the normal category with a
    null ``since``); unknown top-level fields are refused.
    """
    if not isinstance(raw, Mapping):
        raise InvalidInput("input", "must be a JSON object with tenant, as_of and results")
    _check_fields(raw, CLASSIFY_FIELDS, "")
    for required in ("tenant", "as_of"):
        if required not in raw:
            raise InvalidInput(required, "is required")
    tenant = parse_tenant(raw["tenant"])
    as_of = parse_date(raw["as_of"], "as_of")
    results = parse_results(raw.get("results", []), "results")
    return ClassifyRequest(tenant, as_of, tuple(results))
