"""The local runtime runs only on the moto release its shim (motoshim) was written for: the
shim replaces that release's internals, so on another release it refuses to start, naming
both, instead of patching functions that may have changed."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest
from moto.core.responses import BaseResponse

from sewerbill.local import motoshim
from sewerbill.local.emulator import Emulator

REPO = Path(__file__).resolve().parents[2]
_real_version = importlib.metadata.version


@pytest.fixture
def other_moto(monkeypatch: pytest.MonkeyPatch) -> str:
    """importlib.metadata reports moto 5.3.0 (any other package as installed)."""
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)  # the emulator starts moto itself
    monkeypatch.setattr(
        importlib.metadata, "version", lambda name: "5.3.0" if name == "moto" else _real_version(name)
    )
    return "5.3.0"


def test_install_refuses_another_moto_naming_both_releases(other_moto: str) -> None:
    parse_parameters = BaseResponse.parse_parameters
    with pytest.raises(motoshim.MotoVersionError) as refused:
        motoshim.install()
    message = str(refused.value)
    assert f"built for moto {motoshim.MOTO_VERSION}" in message
    assert f"found moto {other_moto}" in message
    assert BaseResponse.parse_parameters is parse_parameters  # nothing of moto's was replaced


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_the_emulator_does_not_start_on_another_moto(other_moto: str, mode: str) -> None:
    with pytest.raises(motoshim.MotoVersionError, match=f"found moto {other_moto}"):
        Emulator.start(mode=mode)


def test_the_release_installed_and_pinned_is_the_one_the_shim_was_written_for() -> None:
    assert importlib.metadata.version("moto") == motoshim.MOTO_VERSION
    motoshim.require_moto_version()  # the installed release passes
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert f"moto[server]=={motoshim.MOTO_VERSION}" in extras["local"]
    lock = (REPO / "requirements" / "dev.txt").read_text()
    assert re.findall(r"^moto==(\S+)", lock, re.M) == [motoshim.MOTO_VERSION]
