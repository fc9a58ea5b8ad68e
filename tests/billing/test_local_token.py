"""`sewerbill local token --role staff --tenant T [--account A]` mints the CONTRACTS.md claims."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import jwt
import pytest
import typer
from typer.testing import CliRunner

from sewerbill.cli import local
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def test_local_token_carries_role_tenants_and_accounts() -> None:
    app = typer.Typer()
    local.register(app)
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2026, 1, 5, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": "billing-token"},
        stack_name="billing-token",
    ) as rt:
        args = ["local", "token", "--role", "customer", "--tenant", "grafton-sewer", "--account", "GR-1"]
        result = CliRunner().invoke(app, [*args, "--gateway", rt.gateway_url])
        assert result.exit_code == 0, result.output
        claims = jwt.decode(result.output.strip(), options={"verify_signature": False})
        assert (claims["role"], claims["tenants"], claims["accounts"]) == (
            "customer",
            ["grafton-sewer"],
            ["GR-1"],
        )
        staff = CliRunner().invoke(
            app,
            ["local", "token", "--role", "staff", "--tenant", "grafton-sewer", "--gateway", rt.gateway_url],
        )
        assert jwt.decode(staff.output.strip(), options={"verify_signature": False})["role"] == "staff"
