"""Configuration models of the portal's functions (environment set in template.yaml)."""

from __future__ import annotations

from common.config import FunctionConfig


class PortalConfig(FunctionConfig):
    pass
