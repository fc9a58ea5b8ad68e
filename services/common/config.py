"""Configuration: one validated model per function, read once at cold start (STYLE 13).

Each function's model subclasses :class:`FunctionConfig` and declares the environment
variables that ``template.yaml`` sets for that function (field ``table_name`` reads
``TABLE_NAME``, and so on). Only composition roots call :func:`load`; nothing below the
handler reads the environment.

Composition roots memoise what they build with :func:`cold_start`; the local runtime (and
tests) call :func:`reset_cold_starts` to rebuild everything, e.g. after pointing the
process at a new emulator endpoint.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from common.clock import RuntimeClock
from common.errors import Misconfigured

__all__ = ["ConfigError", "FunctionConfig", "RuntimeClock", "cold_start", "load", "reset_cold_starts"]


class ConfigError(Misconfigured):
    """The function's environment does not satisfy its config model.

    A deploy's fault, not the message's: transient, so the message is retried and then
    dead-lettered (kept for a redrive once the deploy is fixed), never rejected as bad data."""


class FunctionConfig(BaseSettings):
    """Settings every function has (set in the template's Globals)."""

    model_config = SettingsConfigDict(frozen=True, extra="ignore", case_sensitive=False)

    event_bus_name: str
    stage: str = "local"
    log_level: str = "INFO"
    # The redrive maxReceiveCount of every consumer queue (template Globals: MAX_RECEIVE_COUNT).
    max_receive_count: int | None = None


C = TypeVar("C", bound=FunctionConfig)


def load(model: type[C]) -> C:
    try:
        return model()
    except ValidationError as exc:
        missing = ", ".join(".".join(str(p) for p in e["loc"]).upper() for e in exc.errors())
        raise ConfigError(f"{model.__name__}: bad or missing environment variables: {missing}") from None


T = TypeVar("T")
_COLD_STARTS: list[functools._lru_cache_wrapper[Any]] = []


def cold_start(build: Callable[[], T]) -> Callable[[], T]:
    """Memoise a zero-argument builder for the life of the process (one Lambda container)."""
    cached = functools.cache(build)
    _COLD_STARTS.append(cached)
    return cached


def reset_cold_starts() -> None:
    for cached in _COLD_STARTS:
        cached.cache_clear()
