"""The local runtime: template.yaml on moto server (or AWS_ENDPOINT_URL), handlers in-process."""

from sewerbill.local.runtime import DrainIncomplete, LocalRuntime

__all__ = ["DrainIncomplete", "LocalRuntime"]
