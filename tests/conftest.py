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
from collections.abc import Iterator

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
