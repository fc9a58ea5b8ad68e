"""The local runtime: template.yaml on moto server (or AWS_ENDPOINT_URL), each function in
its own process. Imported lazily, so a function's worker (`sewerbill.local.worker`) does not
import the runtime."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sewerbill.local.runtime import DrainIncomplete, LocalRuntime

__all__ = ["DrainIncomplete", "LocalRuntime"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from sewerbill.local import runtime

        return getattr(runtime, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
