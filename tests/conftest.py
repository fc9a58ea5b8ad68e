"""Settings for the whole suite.

Hypothesis: properties are about behaviour, not speed. On a shared 2-core machine (and
under pytest-xdist) input generation and examples can be slow for reasons that have
nothing to do with the code, so the timing health check and per-example deadlines are off
for every property; what each property asserts is unchanged.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "sewerbill",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("sewerbill")
