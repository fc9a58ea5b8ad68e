"""Settings for the whole suite.

DynamoDB on DynamoDB Local: with `SEWERBILL_TEST_DYNAMODB=local` the session starts AWS's
DynamoDB Local (tests/dynamodb_local.py) and points DynamoDB and DynamoDB Streams at it, so the
same end-to-end tests run with DynamoDB there and everything else on moto (`make test` runs
the flows both ways).

Hypothesis: properties are about behaviour, not speed. On a shared 2-core machine (and
under pytest-xdist) input generation and examples can be slow for reasons that have
nothing to do with the code, so the timing health check and per-example deadlines are off
for every property; what each property asserts is unchanged.
"""

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "sewerbill",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("sewerbill")


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
