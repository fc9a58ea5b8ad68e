"""The test tiers (issue 29): every test is marked by what it needs, and the Makefile picks
the runtime modules with the very pattern the markers use."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def conftest(request: pytest.FixtureRequest):
    """The suite's root conftest module, as pytest loaded it."""
    root = ROOT / "tests" / "conftest.py"
    for plugin in request.config.pluginmanager.get_plugins():
        if Path(getattr(plugin, "__file__", "") or "").resolve() == root:
            return plugin
    raise AssertionError("tests/conftest.py is not loaded")


def test_the_makefile_selects_runtime_modules_with_the_conftest_pattern(conftest):
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    declared = re.search(r"^RUNTIME_PATTERN := (.+)$", makefile, re.MULTILINE)
    assert declared is not None
    assert declared.group(1) == conftest.RUNTIME_PATTERN


@pytest.mark.parametrize(
    ("source", "tier"),
    [
        # (joined here so that this module itself names neither the runtime nor moto)
        ("from sewerbill" + ".local.runtime import Local" + "Runtime", "integration"),
        ("import sewerbill" + ".local.schedule", "integration"),
        ('SENDER = "billing@sewerbill' + '.local"', None),
        ('ISSUER = "https://auth.sewerbill' + '.local/"', None),
        ("from mo" + "to import mock_" + "aws", "moto"),
        ("from billing.domain import ledger", None),
    ],
)
def test_a_module_is_tiered_by_what_it_uses_not_by_names_in_it(conftest, tmp_path, source, tier):
    module = tmp_path / "test_x.py"
    module.write_text(source + "\n", encoding="utf-8")
    assert conftest._needs(module, {}) == tier


def test_this_module_is_in_the_pure_tier(request):
    assert not any(m.name in {"integration", "moto"} for m in request.node.iter_markers())
