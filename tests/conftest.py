"""Settings for the whole suite.

DynamoDB on DynamoDB Local: with `SEWERBILL_TEST_DYNAMODB=local` the session starts AWS's
DynamoDB Local (tests/dynamodb_local.py) and points DynamoDB and DynamoDB Streams at it, so the
same end-to-end tests run with DynamoDB there and everything else on moto (`make test` runs
the flows both ways).

Hypothesis: properties are about behaviour, not speed. On a shared 2-core machine (and
under pytest-xdist) input generation and examples can be slow for reasons that have
nothing to do with the code, so the timing health check and per-example deadlines are off
for every property; what each property asserts is unchanged.

Two profiles, so that a landing is never decided by chance: ``ci`` (derandomized: the same
examples on every run and every machine; no example database; a failure prints its
reproduction blob) and ``dev`` (random examples, to look for new failures). ``ci`` is loaded
when ``HYPOTHESIS_PROFILE=ci`` or ``CI`` is set (.ci/run's CI sets it; the Makefile sets
``HYPOTHESIS_PROFILE=ci`` for ``make test``); otherwise ``dev``, or the profile
``HYPOTHESIS_PROFILE`` names.
"""

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Each profile names its parent: one without takes the settings in force, which Hypothesis
# makes its own ``ci`` wherever CI is set.
settings.register_profile(
    "dev",
    parent=settings.get_profile("default"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci",
    parent=settings.get_profile("dev"),
    derandomize=True,
    database=None,
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session", autouse=True)
def dynamodb_on_dynamodb_local() -> Iterator[None]:
    if os.environ.get("SEWERBILL_TEST_DYNAMODB") != "local":
        yield
        return
    import dynamodb_local

    with dynamodb_local.running() as endpoint, pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
        mp.setenv("AWS_ENDPOINT_URL_DYNAMODB_STREAMS", endpoint)
        yield


# --- tiers (issue 29) ---------------------------------------------------------------------------
# Every test falls in one tier, by what it needs; a marker is added at collection, so no test
# can be forgotten in a tier: ``integration`` (it starts the local runtime: moto server on
# loopback, the Makefile's RUNTIME_TESTS), ``moto`` (moto in-process, no socket), or neither
# (pure: domain rules, use cases on fakes, parsing). ``make unit`` runs the pure tier with
# sockets disabled (pytest-socket); ``make check`` adds the moto tier, still without sockets.
# The Makefile's RUNTIME_TESTS greps the same pattern (grep -P); "billing@sewerbill.local"
# and "auth.sewerbill.local" are names, not the runtime.
RUNTIME_PATTERN = (
    r"LocalRuntime|portal_rt|motoshim|sewerbill\.cli(\.| import )local|(?<![@.\w])sewerbill\.local\b"
)
_RUNTIME = re.compile(RUNTIME_PATTERN)
_MOTO = re.compile(r"mock_aws|from moto|import moto")
_HERE = Path(__file__).resolve()


def _needs(path: Path, sources: dict[Path, str]) -> str | None:
    """``integration``, ``moto`` or None, from a test module's or fixture module's source."""
    if path == _HERE:  # this file names the patterns, and its fixtures need neither
        return None
    if path not in sources:
        sources[path] = path.read_text(encoding="utf-8") if path.suffix == ".py" and path.exists() else ""
    source = sources[path]
    if _RUNTIME.search(source):
        return "integration"
    return "moto" if _MOTO.search(source) else None


@pytest.hookimpl(tryfirst=True)  # before -m deselects by these markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    sources: dict[Path, str] = {}
    for item in items:
        needs = {_needs(Path(item.path).resolve(), sources)}
        info = getattr(item, "_fixtureinfo", None)
        for defs in info.name2fixturedefs.values() if info is not None else ():
            for fixture in defs:
                code = getattr(fixture.func, "__code__", None)
                if code is not None:
                    needs.add(_needs(Path(code.co_filename).resolve(), sources))
        if "integration" in needs:
            item.add_marker(pytest.mark.integration)
        elif "moto" in needs:
            item.add_marker(pytest.mark.moto)


# --- the hostile import suite's tally (tests/fuzz) under pytest-xdist ---------------------------
# Each worker hands its per-kind counts back (tests/fuzz/conftest.py, ``workeroutput``); the
# controller adds them up and prints them once, as a run without workers prints its own.
_FUZZ_TALLY: dict[str, dict[str, int]] = {"tried": {}, "taken": {}}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    for part, counts in getattr(node, "workeroutput", {}).get("fuzz_tally", {}).items():
        for kind, n in counts.items():
            _FUZZ_TALLY[part][kind] = _FUZZ_TALLY[part].get(kind, 0) + n


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    tried, taken = _FUZZ_TALLY["tried"], _FUZZ_TALLY["taken"]
    if not tried:
        return
    terminalreporter.section("hostile import files tried, per kind (all workers)")
    for kind, n in sorted(tried.items()):
        terminalreporter.write_line(f"{kind:<40} {n:>6} files {taken.get(kind, 0):>7} lines taken in")
    terminalreporter.write_line(
        f"{'total':<40} {sum(tried.values()):>6} files {sum(taken.values()):>7} lines taken in"
    )
